package repo

import (
	"fmt"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/objstore"
)

// The error kinds of the package (DESIGN.md §11). They are the kinds of
// package errs themselves, so errors.Is(err, ErrInvalid) asks "is err an
// invalid-argument error?" whichever layer made it; errors are made with
// errs.E and messages written for people, with no "repo:" prefix to strip.
var (
	// ErrNotFound: no such document, version label or block
	// (*NotFoundError names which).
	ErrNotFound error = errs.NotFound
	// ErrConflict: a stale baseline, or a document id that exists;
	// nothing was written (a stale baseline is a *folio.ConflictError,
	// which names the check that failed and carries the server's side).
	ErrConflict error = errs.Conflict
	// ErrInvalid: a document, operation or argument that breaks a rule.
	ErrInvalid error = errs.Invalid
)

// NotFoundError names what was missing and, for versions, the latest label.
// Its message says what is missing, in the terms of any transport; a
// client adds its own pointer to what exists (the CLI names the command
// that lists it, from these fields).
type NotFoundError struct {
	What   string // "document", "version", "block"
	Doc    string // the document, for versions and blocks
	Name   string // the document id, "doc@label" for versions, the block id for blocks
	Label  string // blocks: the version looked in ("" means any version)
	Latest string // latest label of the document, when known
	Detail string // versions: why the name names none, when it is not a missing label
}

func (e *NotFoundError) Error() string {
	switch e.What {
	case "version":
		s := fmt.Sprintf("version %q not found", e.Name)
		if e.Detail != "" {
			s += " (" + e.Detail + ")"
		} else if e.Latest != "" {
			s += " (latest is " + e.Latest + ")"
		}
		return s
	case "block":
		if e.Label != "" {
			return fmt.Sprintf("block %q not found in %s@%s", e.Name, e.Doc, e.Label)
		}
		return fmt.Sprintf("block %q not found in any version of %s", e.Name, e.Doc)
	}
	return fmt.Sprintf("%s %q not found", e.What, e.Name)
}

// ErrKind makes every *NotFoundError of kind errs.NotFound.
func (e *NotFoundError) ErrKind() errs.Kind { return errs.NotFound }

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// NotVersionError is a version name that names the draft where a
// version is needed (restoring, comparing against history): invalid, and
// a checkpoint seals the draft into one.
type NotVersionError struct {
	Doc  string
	Name string // "doc@draft"
}

func (e *NotVersionError) Error() string {
	return e.Name + " is the draft, not a version: a checkpoint seals it into one"
}

// ErrKind makes every *NotVersionError of kind errs.Invalid.
func (e *NotVersionError) ErrKind() errs.Kind { return errs.Invalid }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *NotVersionError) Unwrap() error { return ErrInvalid }

// Progress reports how far a long job (Fsck, GC) has come: done of total
// items of what ("objects", "documents"); total is 0 when it is not known
// in advance. It is called on the job's goroutine, often, and must return
// quickly; it never prints (the CLI renders it on a terminal only).
type Progress func(what string, done, total int64)

// orNop returns p, or a Progress that does nothing when p is nil.
func (p Progress) orNop() Progress {
	if p == nil {
		return func(string, int64, int64) {}
	}
	return p
}

// DocInfo describes a document. Owner is the owning user's id ("" for
// none); OwnerName is that user's name, filled in by callers that know the
// users ("" when the owner no longer exists).
type DocInfo struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Owner     string    `json:"owner"`
	OwnerName string    `json:"ownerName,omitempty"`
	Created   time.Time `json:"created"` // UTC; RFC 3339 in JSON
	// Updated is the document's last change: its draft's last save or its
	// head version, whichever is later (UTC; RFC 3339 in JSON).
	Updated  time.Time `json:"updated"`
	Head     string    `json:"head"` // label of the head version
	Versions uint64    `json:"versions"`
	Unsealed bool      `json:"unsealed"`
	// DraftSeq is the draft's sequence number: it moves on every save,
	// so a projection (search) sees a change without reading the body.
	DraftSeq uint64 `json:"-"`
	// Published and Visibility are filled in by the server from the
	// publishing store: the label of the published version ("" when not
	// published) and the document's visibility (public until it is set).
	Published  string `json:"published,omitempty"`
	Visibility string `json:"visibility,omitempty"`
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
	// ID is the document id; empty: a random, unguessable one. Who may
	// choose an id is the caller's rule (docs/api.md): the repository only
	// refuses one that exists.
	ID string
	// Owner is the owning user's id ("" leaves the document to nobody);
	// Author is the name recorded as the first version's author.
	Owner   string
	Author  string
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
	// Align, with a Body, gives the body's blocks that have no id the ids
	// of the draft's blocks they continue, by content and order
	// (flowdoc.Align), under the document's lock: a file written again
	// from outside keeps its blocks' identities. New blocks get fresh ids.
	Align   bool
	Changes []DraftChange
	Attrs   *flowdoc.Attributes
	// Seal, when set, seals the saved draft as a checkpoint with this
	// reason in the same synced batch (a save at a boundary).
	Seal    string
	Message string // the sealed version's message
	// Merge, with Changes, merges an upserted text block that changed
	// since BaseSeq with the draft's version when the two edits do not
	// overlap (flowdoc/merge; docs/protocol.md "Merging inside a block"),
	// instead of a conflict. Without it a save is strict.
	Merge bool
}

// SaveResult is the acknowledged state after a save.
type SaveResult struct {
	Seq         uint64              `json:"seq"`
	Fingerprint flowdoc.Fingerprint `json:"fingerprint"`
	Unsealed    bool                `json:"unsealed"`
	Changed     []string            `json:"changed,omitempty"` // block ids this save changed
	Version     *VersionInfo        `json:"version,omitempty"` // the checkpoint, when Seal sealed one
	// Merged lists the blocks a Merge save merged, with the merged
	// content the saving editor must now hold.
	Merged []EventBlock `json:"merged,omitempty"`
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
	SavedBy       string              `json:"savedBy,omitempty"`       // who made the last change ("" when not recorded)
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
	// CarryOver carries a change whose baseline is no longer current
	// (the head moved, or the draft changed since) over to the current
	// head and draft, when every block in TargetBlocks is unchanged in the
	// draft: the checks then run against that carried-over baseline, the
	// operations apply to the current draft, and the transaction records
	// both baselines (objstore.Txn.OrigBase). Anything else — a changed
	// or missing target, operations that no longer apply — is a
	// *ConflictError as for a strict change. A block-scoped suggestion's
	// accept sets it, with TargetBlocks naming every block its operations
	// name (DESIGN §6 "Carrying a suggestion over").
	CarryOver bool
	// Value is the caller's own state for this change, opaque to the
	// repository: the ChangeHook gets it as Change.Value (the assistant
	// hands over the suggestion an accept applies, read once).
	Value any
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
