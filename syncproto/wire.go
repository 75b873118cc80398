package syncproto

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded"
	"github.com/foliodev/folio/internal/errs"
	"github.com/vmihailenco/msgpack/v5"
)

// The protocol's own value types. Their field names are the wire's
// (docs/protocol.md), the same in both codecs; the repository's types are
// converted to them by the adapter in internal/server/syncrepo, so a
// change of the storage form never changes the protocol.

// Checkpoint reasons on the wire (docs/protocol.md "Checkpoints").
const (
	ReasonIdle        = "idle"
	ReasonMaxDuration = "max_duration"
	ReasonLeave       = "leave"
	ReasonRecovery    = "recovery"
	ReasonRestore     = "restore"
	ReasonManual      = "manual"
	ReasonPublish     = "publish"
	ReasonAI          = "ai"
)

// Hash is an object hash: 64 lowercase hex digits in JSON, 32 bytes (bin)
// in MessagePack.
type Hash [32]byte

// String returns the hex form.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText implements encoding.TextMarshaler (hex).
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (hex).
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := hex.DecodeString(string(b))
	if err != nil || len(v) != len(h) {
		return fmt.Errorf("syncproto: %q is not a 64-digit hex hash", b)
	}
	copy(h[:], v)
	return nil
}

// EncodeMsgpack writes the 32 bytes as bin.
func (h Hash) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeBytes(h[:]) }

// DecodeMsgpack reads the form EncodeMsgpack writes.
func (h *Hash) DecodeMsgpack(dec *msgpack.Decoder) error {
	b, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	if len(b) != len(h) {
		return fmt.Errorf("syncproto: hash of %d bytes, want %d", len(b), len(h))
	}
	copy(h[:], b)
	return nil
}

// Change ops.
const (
	OpUpsert = "upsert"
	OpDelete = "delete"
	OpMove   = "move"
)

// Change is one block-level change of a draft.save.
type Change struct {
	Op      string         `json:"op"`
	Block   *flowdoc.Block `json:"block,omitempty"`   // upsert
	BlockID string         `json:"blockId,omitempty"` // delete, move
	// After places an upserted or moved block after the block with this
	// id; "" is the start; absent: an upsert of a new block goes to the
	// end and one of an existing block stays where it is.
	After *string `json:"after,omitempty"`
}

// VersionInfo describes a version (a checkpoint, restore, ...).
type VersionInfo struct {
	Doc          string              `json:"doc"`
	Label        string              `json:"label"`
	Seq          uint64              `json:"seq"`
	Kind         string              `json:"kind"`
	Reason       string              `json:"reason,omitempty"`
	Hash         Hash                `json:"hash"`
	Author       string              `json:"author"`
	Time         int64               `json:"time"` // Unix ms
	Message      string              `json:"message,omitempty"`
	Fingerprint  flowdoc.Fingerprint `json:"fingerprint"`
	RestoredFrom string              `json:"restoredFrom,omitempty"`
	Blocks       int                 `json:"blocks"`
	Published    bool                `json:"published,omitempty"`
}

// EventBlock is one block of a draft.updated; Block absent means deleted.
type EventBlock struct {
	ID    string         `json:"id"`
	Block *flowdoc.Block `json:"block,omitempty"`
}

// Draft is a document's draft as Docs returns it.
type Draft struct {
	Seq           uint64
	Body          flowdoc.Document
	Attrs         flowdoc.Attributes
	Fingerprint   flowdoc.Fingerprint
	Head          string // label of the version the draft is based on
	Unsealed      bool
	UnsealedSince int64 // Unix ms
}

// SaveParams is one draft save as Docs receives it: a full Body, or
// Changes against BaseSeq; Attrs when set.
type SaveParams struct {
	Doc     string
	Actor   string
	Session string // the saving connection; carried in its draft.updated
	BaseSeq uint64
	Body    *flowdoc.Document
	Changes []Change
	Attrs   *flowdoc.Attributes
	Merge   bool // merge inside text blocks (Save.Merge)
}

// SaveResult is the state after an accepted save.
type SaveResult struct {
	Seq         uint64
	Fingerprint flowdoc.Fingerprint
	Unsealed    bool
	Changed     []string     // block ids the save changed
	Merged      []EventBlock // blocks merged with another editor's change, with the result
}

// ErrTrimmed is returned by Events.Read when events after the cursor are
// no longer retained.
var ErrTrimmed = errors.New("syncproto: cursor is older than the stream's retention")

// StreamEvent is one stored event of a stream in the protocol's terms.
// Data is what is sent as the event's data: *DraftUpdated,
// *VersionCreated, *OwnerChanged, RawData for events the protocol passes
// through, or nil.
type StreamEvent struct {
	Cursor uint64
	Type   string
	Time   int64 // Unix ms
	Data   any
}

// RawData is the data of a stored event whose type the protocol does not
// know (a run's or task's events), passed through without decoding it
// into Go values: its MessagePack bytes verbatim on folio.v1.msgpack
// (msgpack.RawMessage encodes itself), transcoded to JSON on
// folio.v1.json. Make it with PassThrough.
type RawData struct{ msgpack.RawMessage }

// PassThrough wraps stored MessagePack data after checking it
// (bounded.Validate): exactly one value, every length within the bytes.
func PassThrough(data []byte) (RawData, error) {
	if err := bounded.Validate(data); err != nil {
		return RawData{}, err
	}
	return RawData{data}, nil
}

// MarshalJSON writes the data as JSON.
func (r RawData) MarshalJSON() ([]byte, error) { return bounded.AppendJSON(nil, r.RawMessage) }

// ValidDocID reports whether id is a document id: 1-64 of A-Z a-z 0-9 _ -.
func ValidDocID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// DocStream returns the stream name of a document.
func DocStream(doc string) string { return "doc:" + doc }

// docNotFound is the answer for a document that is missing or that the
// caller may not see: the message is the HTTP API's for a missing one.
func docNotFound(doc string) error {
	return errs.E(errs.NotFound, "document %q not found", doc)
}

// invalidRequest is the error of a JSON frame that the HTTP API would
// refuse as well (duplicate member, invalid text), with its message.
func invalidRequest(ve *flowdoc.ValidationError) error {
	ps := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		ps[i] = p.String()
	}
	return &errs.Error{Kind: errs.Invalid, Msg: "invalid request: " + strings.Join(ps, "; "), Err: ve}
}
