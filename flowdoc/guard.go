package flowdoc

import (
	"bytes"
	"fmt"
	"strings"
)

// ComplexError carries GuardComplex's problems for a rejected candidate.
type ComplexError struct {
	Problems []Problem
}

func (e *ComplexError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "candidate changes complex blocks: " + strings.Join(parts, "; ")
}

// ErrKindName makes every *ComplexError of kind KindInvalid.
func (e *ComplexError) ErrKindName() string { return KindInvalid }

// Is makes errors.Is(err, errs.Invalid) true for it.
func (e *ComplexError) Is(target error) bool { return isKind(target, KindInvalid) }

// Unwrap makes errors.Is(err, ErrComplexChanged) true.
func (e *ComplexError) Unwrap() error { return ErrComplexChanged }

// IsComplex reports whether t is a complex block type: every type but
// paragraph, heading and quote.
func (t BlockType) IsComplex() bool { return !t.IsText() }

// Complex reports whether b is guarded as a complex block: its type is
// complex, or it is a quote that holds blocks (children), which a rewrite
// of its text must keep.
func (b Block) Complex() bool { return b.Type.IsComplex() || len(b.Children) > 0 }

// GuardComplex checks a whole-document candidate against the document it
// replaces: every complex block of before must appear in after with the
// same id, in the same relative order, with identical canonical content,
// and after may add no complex block. It returns every violation; paths
// point into after ("blocks[j]") or, for a missing block, into before
// ("before.blocks[i]").
//
// Only top-level blocks are compared: a text block holding blocks (a quote
// with children) is guarded as a complex one, so every nested block sits
// inside a top-level complex block whose content is compared as a whole.
func GuardComplex(before, after Document) []Problem {
	var ps []Problem
	type entry struct {
		index   int
		content []byte
		typ     BlockType
	}
	old := map[string]entry{}
	var order []string
	for i, b := range before.Blocks {
		if b.Complex() {
			if _, dup := old[b.ID]; !dup {
				order = append(order, b.ID)
			}
			old[b.ID] = entry{i, EncodeContent(sanitizeBlock(b)), b.Type}
		}
	}
	rank := map[string]int{}
	for i, id := range order {
		rank[id] = i
	}
	found := map[string]bool{}
	last := -1
	for j, b := range after.Blocks {
		path := fmt.Sprintf("blocks[%d]", j)
		e, was := old[b.ID]
		switch {
		case was && !found[b.ID]:
			found[b.ID] = true
			if b.Type != e.typ {
				ps = append(ps, Problem{path + ".type", fmt.Sprintf("complex block %q must stay a %s", b.ID, e.typ)})
				continue
			}
			if !bytes.Equal(EncodeContent(sanitizeBlock(b)), e.content) {
				ps = append(ps, Problem{path, fmt.Sprintf("complex block %q (%s) must keep its content unchanged", b.ID, b.Type)})
			}
			if r := rank[b.ID]; r < last {
				ps = append(ps, Problem{path, fmt.Sprintf("complex block %q (%s) moved: complex blocks must keep their order", b.ID, b.Type)})
			} else {
				last = r
			}
		case b.Complex():
			ps = append(ps, Problem{path, fmt.Sprintf("a whole-document candidate cannot add complex block %q (%s)", b.ID, b.Type)})
		}
	}
	for _, id := range order {
		if !found[id] {
			e := old[id]
			ps = append(ps, Problem{fmt.Sprintf("before.blocks[%d]", e.index), fmt.Sprintf("complex block %q (%s) is missing from the candidate", id, e.typ)})
		}
	}
	return ps
}
