package flowdoc

// This file declares the API that validate.go, sanitize.go and ops.go
// implement. Each declaration here moves
// to its own file with its implementation; the file is then deleted.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Problem is one validation failure: a JSON path into the document and the
// rule it breaks, e.g. "blocks[3].attrs.level: heading level must be 1..4".
type Problem struct {
	Path string `json:"path"`
	Rule string `json:"rule"`
}

func (p Problem) String() string { return p.Path + ": " + p.Rule }

// ValidationError carries every problem found in a document.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "flowdoc: invalid document: " + strings.Join(parts, "; ")
}

// Limits bound a document's size.
type Limits struct {
	MaxBlocks int // blocks, nested ones included
	MaxBytes  int // bytes of canonical JSON
}

// DefaultLimits are used when a caller has no configuration.
var DefaultLimits = Limits{MaxBlocks: 10000, MaxBytes: 8 << 20}

// Parse decodes a FlowDocument from JSON. Unknown fields are problems.
func Parse(data []byte) (Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return Document{}, &ValidationError{Problems: []Problem{{Path: "$", Rule: fmt.Sprintf("not a FlowDocument: %v", err)}}}
	}
	return d, nil
}

// Validate returns every problem of d (nil when valid).
func Validate(d Document, l Limits) []Problem {
	var ps []Problem
	seen := map[string]bool{}
	for i, b := range d.Blocks {
		if b.ID == "" || seen[b.ID] {
			ps = append(ps, Problem{Path: fmt.Sprintf("blocks[%d].id", i), Rule: "block id must be unique and non-empty"})
		}
		seen[b.ID] = true
	}
	return ps
}

// Sanitize returns d with runs merged, unknown marks dropped and empty
// values removed. It is idempotent.
func Sanitize(d Document) Document { return normalizeDoc(d) }

// Normalize sanitizes and validates d; the error is a *ValidationError.
func Normalize(d Document, l Limits) (Document, error) {
	d = Sanitize(d)
	if ps := Validate(d, l); len(ps) > 0 {
		return Document{}, &ValidationError{Problems: ps}
	}
	return d, nil
}

// OpKind names an operation.
type OpKind string

// The operations of DESIGN.md §5.
const (
	ReplaceSelection OpKind = "replace_selection"
	ReplaceBlock     OpKind = "replace_block"
	InsertBefore     OpKind = "insert_before"
	InsertAfter      OpKind = "insert_after"
	DeleteBlock      OpKind = "delete_block"
	ReplaceDocument  OpKind = "replace_document"
	ReplaceSection   OpKind = "replace_section"
)

// Op is one structured operation on a document.
type Op struct {
	Op       OpKind    `json:"op" msgpack:"op"`
	BlockID  string    `json:"blockId,omitempty" msgpack:"blockId,omitempty"`
	Start    int       `json:"start,omitempty" msgpack:"start,omitempty"`
	End      int       `json:"end,omitempty" msgpack:"end,omitempty"`
	RichText []Run     `json:"richText,omitempty" msgpack:"richText,omitempty"`
	Block    *Block    `json:"block,omitempty" msgpack:"block,omitempty"`
	Blocks   []Block   `json:"blocks,omitempty" msgpack:"blocks,omitempty"`
	Document *Document `json:"document,omitempty" msgpack:"document,omitempty"`
	Confirm  bool      `json:"confirm,omitempty" msgpack:"confirm,omitempty"`
}

// Apply applies ops in order to a copy of d and returns the result,
// sanitized and validated against l. d is not modified.
func Apply(d Document, ops []Op, l Limits) (Document, error) {
	return Document{}, fmt.Errorf("flowdoc: Apply not implemented")
}

// TargetBlocks returns the ids of the existing blocks of d that ops touch,
// in first-touched order (for baseline checks).
func TargetBlocks(d Document, ops []Op) []string { return nil }

// GuardComplex checks a whole-document candidate against the document it
// replaces: every complex block of before must appear in after with the
// same id, in the same relative order, with identical canonical content,
// and after may add no complex block. It returns every violation.
func GuardComplex(before, after Document) []Problem { return nil }

// PlainText returns the text of runs; an inline equation counts as U+FFFC.
func PlainText(runs []Run) string { return "" }
