package folio

import (
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// Check names the baseline check a conflict failed. The values are
// stable and append-only: they are sent as "check" on HTTP and WebSocket
// (docs/api.md, docs/protocol.md), and clients may branch on them.
type Check string

// The checks. Draft saves compare against the save's baseSeq; commits
// (accepting a suggestion) against the baseline version and fingerprint
// the suggestion was made on (DESIGN.md §4).
const (
	// CheckBlocks: a block the save touches changed since BaseSeq
	// (Blocks holds the server's state of each).
	CheckBlocks Check = "blocks"
	// CheckAttrs: the article attributes changed since BaseSeq.
	CheckAttrs Check = "attrs"
	// CheckMissingBlock: a change names a block that is not in the draft
	// (Missing; Blocks holds it, absent, when it was deleted after BaseSeq).
	CheckMissingBlock Check = "missing_block"
	// CheckBaseVersion: the baseline version (Expected, a short version
	// id) is not the head (Actual, its label).
	CheckBaseVersion Check = "base_version"
	// CheckFingerprint: the body's fingerprint (Actual) is not the
	// baseline's (Expected).
	CheckFingerprint Check = "fingerprint"
	// CheckTargetBlocks: a block the operations target changed since the
	// baseline (Blocks).
	CheckTargetBlocks Check = "target_blocks"
	// CheckOperations: carried over to a newer head, the operations no
	// longer apply (Detail says why).
	CheckOperations Check = "operations"
	// CheckHeadMoved: the head moved while the change was being written.
	CheckHeadMoved Check = "head_moved"
)

// ConflictError is a change refused because its baseline is stale;
// nothing was written. It is the one conflict type of every layer: the
// content service makes it, HTTP and WebSocket encode its fields, the Go
// sync client rebuilds it from draft.conflict. errors.Is(err,
// errs.Conflict) is true of it.
type ConflictError struct {
	Doc   string
	Check Check
	// Reason says which check failed, for people; it is written where
	// the conflict is made and sent as is.
	Reason string
	// Seq is the draft's current seq; BaseSeq the save's baseline (draft
	// saves; 0 for commits).
	Seq     uint64
	BaseSeq uint64
	// Expected and Actual are the values a version check compared (see
	// the Check constants); "" for the others.
	Expected string
	Actual   string
	// Missing is the block a CheckMissingBlock change named.
	Missing string
	// Detail is the cause of a CheckOperations conflict, for people.
	Detail string
	// Blocks is the server's current state of the contested blocks.
	Blocks []ConflictBlock
}

// ConflictBlock is the server's current state of one contested block.
type ConflictBlock struct {
	ID    string         `json:"id"`
	Block *flowdoc.Block `json:"block,omitempty"` // nil: the block was deleted
	Seq   uint64         `json:"seq"`             // draft seq of its last change
}

func (e *ConflictError) Error() string {
	s := "conflict on document " + e.Doc + ": " + e.Reason
	if len(e.Blocks) > 0 {
		ids := make([]string, len(e.Blocks))
		for i, b := range e.Blocks {
			ids[i] = b.ID
		}
		s += " (blocks " + strings.Join(ids, ", ") + ")"
	}
	return s + "; nothing was written: reload and retry"
}

// ErrKind makes every *ConflictError of kind errs.Conflict.
func (e *ConflictError) ErrKind() errs.Kind { return errs.Conflict }

// Unwrap makes errors.Is(err, errs.Conflict) true.
func (e *ConflictError) Unwrap() error { return errs.Conflict }
