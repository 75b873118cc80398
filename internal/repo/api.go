package repo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
)

var (
	// ErrNotFound: no such document, version label or block.
	ErrNotFound = errors.New("repo: not found")
	// ErrConflict: a stale baseline; nothing was written.
	ErrConflict = errors.New("repo: conflict")
	// ErrInvalid: a document, operation or argument that breaks a rule.
	ErrInvalid = errors.New("repo: invalid")
)

// NotFoundError names what was missing and, for versions, the latest label.
type NotFoundError struct {
	What   string // "document", "version", "block"
	Name   string
	Latest string // latest label of the document, when known
}

func (e *NotFoundError) Error() string {
	s := fmt.Sprintf("%s %q not found", e.What, e.Name)
	if e.Latest != "" {
		s += " (latest is " + e.Latest + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// ConflictError is a stale-baseline conflict with the server's side of it.
type ConflictError struct {
	Doc    string
	Reason string          // which check failed
	Seq    uint64          // the draft's current seq (draft conflicts)
	Blocks []ConflictBlock // the server's current state of the touched blocks
}

// ConflictBlock is the server's current state of one contested block.
type ConflictBlock struct {
	ID    string         `json:"id"`
	Block *flowdoc.Block `json:"block,omitempty"` // nil: the block was deleted
	Seq   uint64         `json:"seq"`             // draft seq of its last change
}

func (e *ConflictError) Error() string {
	ids := make([]string, len(e.Blocks))
	for i, b := range e.Blocks {
		ids[i] = b.ID
	}
	s := "conflict on document " + e.Doc + ": " + e.Reason
	if len(ids) > 0 {
		s += " (blocks " + strings.Join(ids, ", ") + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// DocInfo describes a document.
type DocInfo struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Owner    string `json:"owner"`
	Created  int64  `json:"created"` // Unix ms
	Head     string `json:"head"`    // label of the head version
	Versions uint64 `json:"versions"`
	Unsealed bool   `json:"unsealed"`
}

// VersionInfo describes one version (a log entry).
type VersionInfo struct {
	Doc          string              `json:"doc"`
	Label        string              `json:"label"`
	Seq          uint64              `json:"seq"`
	Kind         string              `json:"kind"`
	Reason       string              `json:"reason,omitempty"`
	Hash         objstore.ID         `json:"hash"`
	Author       string              `json:"author"`
	Time         int64               `json:"time"` // Unix ms
	Message      string              `json:"message,omitempty"`
	Fingerprint  flowdoc.Fingerprint `json:"fingerprint"`
	RestoredFrom string              `json:"restoredFrom,omitempty"`
	Blocks       int                 `json:"blocks"`
	// Published is set by Log on the version the published ref names.
	Published bool `json:"published,omitempty"`
}

// CreateParams create a document with its first version v1.r0.
type CreateParams struct {
	ID      string // optional; generated when empty
	Owner   string
	Attrs   flowdoc.Attributes
	Body    flowdoc.Document
	Message string
}

// DraftChange is one block-level change of a draft save.
//   - "upsert": Block replaces the block with its id, or is inserted when
//     new (after After; at the start when After is ""; at the end when nil).
//   - "delete": removes BlockID.
//   - "move": moves BlockID after After ("" = to the start).
type DraftChange struct {
	Op      string         `json:"op" msgpack:"op"`
	Block   *flowdoc.Block `json:"block,omitempty" msgpack:"block,omitempty"`
	BlockID string         `json:"blockId,omitempty" msgpack:"blockId,omitempty"`
	After   *string        `json:"after,omitempty" msgpack:"after,omitempty"`
}

// SaveParams is one draft save: a full Body, or Changes against BaseSeq.
type SaveParams struct {
	Doc     string
	Actor   string
	Session string // the editor connection; echoed in the draft.updated event
	BaseSeq uint64
	Body    *flowdoc.Document
	Changes []DraftChange
	Attrs   *flowdoc.Attributes
	// Seal, when set, seals the saved draft as a checkpoint with this
	// reason in the same synced batch (a save at a boundary).
	Seal    string
	Message string // the sealed version's message
}

// SaveResult is the acknowledged state after a save.
type SaveResult struct {
	Seq         uint64              `json:"seq"`
	Fingerprint flowdoc.Fingerprint `json:"fingerprint"`
	Unsealed    bool                `json:"unsealed"`
	Changed     []string            `json:"changed,omitempty"` // block ids this save changed
	Version     *VersionInfo        `json:"version,omitempty"` // the checkpoint, when Seal sealed one
}

// Draft is a document's working copy.
type Draft struct {
	Doc           string              `json:"doc"`
	Seq           uint64              `json:"seq"`
	Body          flowdoc.Document    `json:"body"`
	Attrs         flowdoc.Attributes  `json:"attrs"`
	Fingerprint   flowdoc.Fingerprint `json:"fingerprint"`
	Head          string              `json:"head"` // label of the version the draft is based on
	HeadID        objstore.ID         `json:"headId"`
	Unsealed      bool                `json:"unsealed"`
	UnsealedSince int64               `json:"unsealedSince,omitempty"` // Unix ms
	LastChange    int64               `json:"lastChange,omitempty"`    // Unix ms
}

// ChangeParams is one CommitChange: structured operations against a
// baseline. Every check runs under the document lock; any stale value is a
// *ConflictError and nothing is written.
type ChangeParams struct {
	Doc             string
	Actor           string
	Kind            string // objstore.KindAcceptSuggestion, KindRestore, KindImport
	BaseVersion     objstore.ID
	BaseFingerprint flowdoc.Fingerprint
	TargetBlocks    map[string]objstore.ID // block id -> expected content hash
	Ops             []flowdoc.Op
	IdempotencyKey  string
	SuggestionID    string
	Message         string
}

// BlockRevision is one revision of a block in a document's history.
type BlockRevision struct {
	Label   string      `json:"label"`
	Seq     uint64      `json:"seq"`
	Content objstore.ID `json:"content"` // zero when deleted at this version
	Deleted bool        `json:"deleted,omitempty"`
	Kind    string      `json:"kind"`
	Author  string      `json:"author"`
	Time    int64       `json:"time"`
}
