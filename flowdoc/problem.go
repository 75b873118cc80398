package flowdoc

import (
	"strings"
)

// The kinds of flowdoc's errors, named as package internal/errs names
// them: the document model knows what went wrong, not how a transport
// reports it. Every flowdoc error has an ErrKindName method returning one
// of these, which internal/errs reads to give it a status and exit code.
const (
	KindInvalid  = "invalid"
	KindNotFound = "not_found"
)

// sentinel is one of the sentinel errors below.
type sentinel struct{ msg, kind string }

func (e *sentinel) Error() string { return e.msg }

// ErrKindName is the error's kind, KindInvalid or KindNotFound.
func (e *sentinel) ErrKindName() string { return e.kind }

// Is makes errors.Is(err, errs.Invalid) (or errs.NotFound) true for it.
func (e *sentinel) Is(target error) bool { return isKind(target, e.kind) }

// isKind reports whether target is a kind of internal/errs (which names
// itself with KindName) with the name kind.
func isKind(target error, kind string) bool {
	k, ok := target.(interface{ KindName() string })
	return ok && k.KindName() == kind
}

// Sentinel errors. Operation failures are *OpError values that wrap one of
// these (or a *ValidationError); test with errors.Is / errors.As. Each
// carries its kind: a missing block is KindNotFound, everything else
// KindInvalid. Their messages have no "flowdoc:" prefix because an
// *OpError, whose message has it, always wraps them.
var (
	// ErrInvalid is matched by every *ValidationError.
	ErrInvalid error = &sentinel{"invalid document", KindInvalid}
	// ErrBlockNotFound: an operation names a block id the document lacks.
	ErrBlockNotFound error = &sentinel{"block not found", KindNotFound}
	// ErrConfirmationRequired: delete_block without confirm: true.
	ErrConfirmationRequired error = &sentinel{"deleting a block needs confirmation (set confirm: true)", KindInvalid}
	// ErrBadOp: an operation is malformed (unknown kind, missing or stray
	// fields, offsets out of range, wrong block type).
	ErrBadOp error = &sentinel{"bad operation", KindInvalid}
	// ErrComplexChanged is matched by every *ComplexError: a whole-document
	// candidate changes, moves, removes or adds complex blocks.
	ErrComplexChanged error = &sentinel{"complex blocks changed", KindInvalid}
)

// Problem is one validation failure: a JSON path into the document and the
// rule it breaks, e.g. "blocks[3].attrs.level: heading level must be 1..6".
// Paths use the JSON field names; "$" is the document as a whole.
type Problem struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
}

func (p Problem) String() string { return p.Path + ": " + p.Rule }

// ValidationError carries every problem found in a document.
// errors.Is(err, ErrInvalid) is true for it.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid document: " + strings.Join(parts, "; ")
}

// ErrKindName makes every *ValidationError of kind KindInvalid.
func (e *ValidationError) ErrKindName() string { return KindInvalid }

// Is makes errors.Is(err, errs.Invalid) true for it.
func (e *ValidationError) Is(target error) bool { return isKind(target, KindInvalid) }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// Limits bound a document's size. A zero or negative field means the
// DefaultLimits value for that field.
type Limits struct {
	MaxBlocks int // blocks, nested ones included
	MaxBytes  int // bytes of canonical JSON
}

// DefaultLimits are used when a caller has no configuration.
var DefaultLimits = Limits{MaxBlocks: 10000, MaxBytes: 8 << 20}

func (l Limits) withDefaults() Limits {
	if l.MaxBlocks <= 0 {
		l.MaxBlocks = DefaultLimits.MaxBlocks
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	return l
}

// Structural bounds that keep recursion over a document shallow. They are
// part of the format, not configuration.
const (
	// MaxDepth is how deep blocks nest: a top-level block is at depth 1,
	// a child of a details or columns block at depth 2, and so on.
	MaxDepth = 4
	// MaxListDepth is how deep list items nest inside one list block.
	MaxListDepth = 8
	// MaxListStart is the highest first number of an ordered list
	// (CommonMark's nine digits).
	MaxListStart = 999999999
	// MaxHeadingLevel is the deepest heading level (HTML's h1..h6).
	MaxHeadingLevel = 6
	// MaxColumns is the most columns a columns block may have.
	MaxColumns = 6
	// MaxTableColumns is the most cells a table row may have.
	MaxTableColumns = 64
	// MaxURLLength bounds every URL (links, sources, bookmarks, embeds).
	MaxURLLength = 2048
)
