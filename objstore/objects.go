package objstore

import (
	"fmt"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded"
	"github.com/foliodev/folio/internal/kv"
)

// Version kinds (Version.Kind) and transaction kinds (Txn.Kind).
const (
	KindCreate           = "create"
	KindCheckpoint       = "checkpoint"
	KindRecovery         = "recovery"
	KindAcceptSuggestion = "accept_suggestion"
	KindRestore          = "restore"
	KindImport           = "import"
)

// Checkpoint reasons (Txn.Reason, Version.Reason).
const (
	ReasonIdle        = "idle"
	ReasonMaxDuration = "max_duration"
	ReasonAI          = "ai"
	ReasonRestore     = "restore"
	ReasonPublish     = "publish"
	ReasonLeave       = "leave"
	ReasonManual      = "manual"
	ReasonRecovery    = "recovery"
)

// BlockEntry places one block in a version: its stable id and content.
type BlockEntry struct {
	ID      string `msgpack:"id"`
	Content ID     `msgpack:"c"`
}

// Version is one sealed version of a document. Its id is the hash of its
// whole canonical encoding, however storage encodes it.
type Version struct {
	Doc          string              `msgpack:"doc"`
	Seq          uint64              `msgpack:"seq"`   // 1-based position in the document's history
	Label        string              `msgpack:"label"` // v<major>.r<revision>
	Kind         string              `msgpack:"kind"`
	Reason       string              `msgpack:"reason,omitempty"`
	Parents      []ID                `msgpack:"parents,omitempty"`
	Blocks       []BlockEntry        `msgpack:"blocks"`
	Attrs        flowdoc.Attributes  `msgpack:"attrs"`
	Fingerprint  flowdoc.Fingerprint `msgpack:"fp"`
	Txn          ID                  `msgpack:"txn"`
	Author       string              `msgpack:"author"`
	Time         int64               `msgpack:"time"` // Unix milliseconds, UTC
	Message      string              `msgpack:"msg,omitempty"`
	RestoredFrom string              `msgpack:"from,omitempty"` // label of a restore's source
}

// Txn event ops.
const (
	EventAdd     = "add"
	EventDelete  = "delete"
	EventModify  = "modify"
	EventMove    = "move"
	EventRestore = "restore"
)

// TxnEvent is one block-level change in a transaction.
type TxnEvent struct {
	Op      string `msgpack:"op"`
	BlockID string `msgpack:"block"`
	Before  ID     `msgpack:"before,omitempty"` // zero when added
	After   ID     `msgpack:"after,omitempty"`  // zero when deleted
}

// Txn is an edit transaction: one change the user perceives.
type Txn struct {
	Doc             string              `msgpack:"doc"`
	Actor           string              `msgpack:"actor"`
	Kind            string              `msgpack:"kind"`
	Reason          string              `msgpack:"reason,omitempty"`
	BaseVersion     ID                  `msgpack:"base,omitempty"`
	BaseFingerprint flowdoc.Fingerprint `msgpack:"basefp,omitempty"`
	IdempotencyKey  string              `msgpack:"idem,omitempty"`
	SuggestionID    string              `msgpack:"sugg,omitempty"`
	// OrigBase and OrigBaseFP are, for a change carried over to a newer
	// baseline (a block-scoped suggestion accepted after edits elsewhere),
	// the baseline it was made against; BaseVersion and BaseFingerprint
	// are then the carried-over baseline it was checked and applied
	// against. Zero for every other change.
	OrigBase   ID                  `msgpack:"origbase,omitempty"`
	OrigBaseFP flowdoc.Fingerprint `msgpack:"origbasefp,omitempty"`
	Time       int64               `msgpack:"time"`
	Events     []TxnEvent          `msgpack:"events,omitempty"`
}

// Encode returns v's canonical encoding and id.
func (v *Version) Encode() ([]byte, ID, error) { return encode(KindVersion, v) }

// Encode returns t's canonical encoding and id.
func (t *Txn) Encode() ([]byte, ID, error) { return encode(KindTxn, t) }

func encode(k Kind, v any) ([]byte, ID, error) {
	data, err := kv.Marshal(v)
	if err != nil {
		return nil, ID{}, fmt.Errorf("objstore: encode %s: %w", k, err)
	}
	return data, Sum(k, data), nil
}

// DecodeContent decodes a content object's canonical bytes into its block
// (flowdoc.EncodeContent's inverse); the caller sets the block id. Like
// every decoder here it is bounded (kv.Unmarshal): a crafted object gives
// an error, never an allocation its size does not pay for.
func DecodeContent(data []byte) (flowdoc.Block, error) {
	var b flowdoc.Block
	if err := kv.Unmarshal(data, &b); err != nil {
		return flowdoc.Block{}, fmt.Errorf("%w: decode content: %v", ErrCorrupt, err)
	}
	return b, nil
}

// CheckContent reports whether data decodes as a content object, as
// fsck checks before accepting one.
func CheckContent(data []byte) error {
	_, err := DecodeContent(data)
	return err
}

// CheckBounds reports whether the canonical bytes of an object of kind k
// are one well-formed msgpack value that decodes into its kind within the
// bounds of docs/objects.md §1, without decoding it (bounded.Check): a
// pack's first pass refuses a crafted object this way at a fraction of a
// decode's cost. A field of the wrong type still fails the decode.
func CheckBounds(k Kind, data []byte) error {
	var err error
	switch k {
	case KindContent:
		err = bounded.Check(data, (*flowdoc.Block)(nil))
	case KindVersion:
		err = bounded.Check(data, (*Version)(nil))
	case KindTxn:
		err = bounded.Check(data, (*Txn)(nil))
	case KindAsset:
		err = bounded.Check(data, (*Asset)(nil))
	default:
		return fmt.Errorf("%w: unknown kind %d", ErrCorrupt, k)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, k, err)
	}
	return nil
}

// DecodeVersion decodes a version's canonical bytes.
func DecodeVersion(data []byte) (*Version, error) {
	var v Version
	if err := kv.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%w: decode version: %v", ErrCorrupt, err)
	}
	return &v, nil
}

// DecodeTxn decodes a transaction's canonical bytes.
func DecodeTxn(data []byte) (*Txn, error) {
	var t Txn
	if err := kv.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%w: decode txn: %v", ErrCorrupt, err)
	}
	return &t, nil
}

// References returns the ids an object of kind k with canonical bytes data
// points at (for walks, packs, fsck and gc). It decodes versions and
// transactions (an error means they do not decode), and content only
// when its bytes hold a folio-asset: URL (the assets its media and file
// blocks name); assets reference nothing.
func References(k Kind, data []byte) ([]ID, error) {
	switch k {
	case KindContent:
		return contentAssets(data)
	case KindAsset:
		return nil, nil
	case KindVersion:
		v, err := DecodeVersion(data)
		if err != nil {
			return nil, err
		}
		out := make([]ID, 0, len(v.Blocks)+len(v.Parents)+1)
		out = append(out, v.Parents...)
		for _, b := range v.Blocks {
			out = append(out, b.Content)
		}
		return append(out, v.Txn), nil
	case KindTxn:
		t, err := DecodeTxn(data)
		if err != nil {
			return nil, err
		}
		var out []ID
		if !t.BaseVersion.IsZero() {
			out = append(out, t.BaseVersion)
		}
		for _, e := range t.Events {
			if !e.Before.IsZero() {
				out = append(out, e.Before)
			}
			if !e.After.IsZero() {
				out = append(out, e.After)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("objstore: unknown kind %d", k)
}
