package assistant

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// ScopeKind is what part of the article a request is about.
type ScopeKind string

// The scopes. Section is offered by the API only.
const (
	ScopeSelection ScopeKind = "selection" // code points [Start, End) of one text block
	ScopeBlock     ScopeKind = "block"     // one block
	ScopeSection   ScopeKind = "section"   // top-level blocks From..To, inclusive
	ScopeDocument  ScopeKind = "document"  // the whole article
)

// Scope is the part of the article a request is about. Offsets are
// Unicode code points of the block's plain text (flowdoc.PlainText).
type Scope struct {
	Kind  ScopeKind `json:"kind" msgpack:"kind"`
	Block string    `json:"block,omitempty" msgpack:"block,omitempty"`
	Start int       `json:"start,omitempty" msgpack:"start,omitempty"`
	End   int       `json:"end,omitempty" msgpack:"end,omitempty"`
	From  string    `json:"from,omitempty" msgpack:"from,omitempty"`
	To    string    `json:"to,omitempty" msgpack:"to,omitempty"`
}

// String is the scope's command-line form (see ParseScope).
func (s Scope) String() string {
	switch s.Kind {
	case ScopeSelection:
		return fmt.Sprintf("selection:%s:%d:%d", s.Block, s.Start, s.End)
	case ScopeBlock:
		return "block:" + s.Block
	case ScopeSection:
		return "section:" + s.From + ".." + s.To
	}
	return string(s.Kind)
}

// ParseScope reads a scope's command-line form: "document", "block:ID",
// "selection:ID:FROM:TO" or "section:ID..ID".
func ParseScope(str string) (Scope, error) {
	kind, rest, _ := strings.Cut(str, ":")
	bad := func(why string) (Scope, error) {
		return Scope{}, errs.E(errs.Invalid, "scope %q: %s (want document, block:ID, selection:ID:FROM:TO or section:ID..ID)", str, why)
	}
	switch ScopeKind(kind) {
	case ScopeDocument:
		if rest != "" {
			return bad("document takes no argument")
		}
		return Scope{Kind: ScopeDocument}, nil
	case ScopeBlock:
		if rest == "" {
			return bad("block needs a block id")
		}
		return Scope{Kind: ScopeBlock, Block: rest}, nil
	case ScopeSelection:
		parts := strings.Split(rest, ":")
		if len(parts) != 3 {
			return bad("selection needs a block id and two offsets")
		}
		from, err1 := strconv.Atoi(parts[1])
		to, err2 := strconv.Atoi(parts[2])
		if err1 != nil || err2 != nil {
			return bad("selection offsets must be integers")
		}
		return Scope{Kind: ScopeSelection, Block: parts[0], Start: from, End: to}, nil
	case ScopeSection:
		from, to, ok := strings.Cut(rest, "..")
		if !ok || from == "" || to == "" {
			return bad("section needs two block ids joined by ..")
		}
		return Scope{Kind: ScopeSection, From: from, To: to}, nil
	}
	return bad("unknown kind")
}

// MaxScopeChars bounds the text a request may send to the model: the
// plain text of its scope, in code points.
const MaxScopeChars = 200_000

// MaxSectionBlocks bounds the top-level blocks of a section scope.
const MaxSectionBlocks = 200

// resolved is a scope resolved against a body.
type resolved struct {
	scope  Scope
	blocks []flowdoc.Block // the blocks in scope (the selection's or block's one; the section's; all)
	text   string          // the plain text in scope (the selected text for a selection)
	first  int             // index of the first top-level block of a section
}

// resolveScope checks s against body and returns what it covers. Every
// error is errs.Invalid naming the problem.
func resolveScope(body flowdoc.Document, s Scope) (resolved, error) {
	r := resolved{scope: s}
	switch s.Kind {
	case ScopeSelection, ScopeBlock:
		if s.Block == "" {
			return r, errs.E(errs.Invalid, "scope %s needs a block id", s.Kind)
		}
		b, ok := findBlock(body.Blocks, s.Block)
		if !ok {
			return r, errs.E(errs.Invalid, "scope %s: block %q is not in the article", s.Kind, s.Block)
		}
		r.blocks = []flowdoc.Block{b}
		if s.Kind == ScopeBlock {
			if s.Start != 0 || s.End != 0 || s.From != "" || s.To != "" {
				return r, errs.E(errs.Invalid, "scope block takes only a block id")
			}
			r.text = blockText(b)
			break
		}
		if !b.Type.IsText() && b.Type != flowdoc.Callout && b.Type != flowdoc.Details {
			return r, errs.E(errs.Invalid, "scope selection: block %q is %s block; a selection is in the text of a paragraph, heading, quote, callout or details summary", s.Block, article(b.Type))
		}
		runes := []rune(flowdoc.PlainText(b.RichText))
		if s.Start < 0 || s.End <= s.Start || s.End > len(runes) {
			return r, errs.E(errs.Invalid, "scope selection: %d..%d is not a non-empty range of block %q's %d code points", s.Start, s.End, s.Block, len(runes))
		}
		r.text = string(runes[s.Start:s.End])
	case ScopeSection:
		if s.Block != "" || s.Start != 0 || s.End != 0 {
			return r, errs.E(errs.Invalid, "scope section takes only from and to")
		}
		from, to := -1, -1
		for i, b := range body.Blocks {
			if b.ID == s.From {
				from = i
			}
			if b.ID == s.To {
				to = i
			}
		}
		switch {
		case from < 0:
			return r, errs.E(errs.Invalid, "scope section: %q is not a top-level block of the article", s.From)
		case to < 0:
			return r, errs.E(errs.Invalid, "scope section: %q is not a top-level block of the article", s.To)
		case to < from:
			return r, errs.E(errs.Invalid, "scope section: %q comes after %q; give the first block first", s.From, s.To)
		case to-from+1 > MaxSectionBlocks:
			return r, errs.E(errs.TooLarge, "scope section: %d blocks, at most %d", to-from+1, MaxSectionBlocks)
		}
		r.first = from
		r.blocks = append([]flowdoc.Block(nil), body.Blocks[from:to+1]...)
		r.text = docText(r.blocks)
	case ScopeDocument:
		if s != (Scope{Kind: ScopeDocument}) {
			return r, errs.E(errs.Invalid, "scope document takes no block or offsets")
		}
		if len(body.Blocks) == 0 {
			return r, errs.E(errs.Invalid, "scope document: the article is empty")
		}
		r.blocks = body.Blocks
		r.text = docText(body.Blocks)
	default:
		return r, errs.E(errs.Invalid, "scope kind %q (want selection, block, section or document)", s.Kind)
	}
	if n := len([]rune(r.text)); n > MaxScopeChars {
		return r, errs.E(errs.TooLarge, "scope %s holds %d characters; at most %d go to the model: choose a smaller scope", s.Kind, n, MaxScopeChars)
	}
	return r, nil
}

// findBlock finds a block anywhere in bs (nested blocks included).
func findBlock(bs []flowdoc.Block, id string) (flowdoc.Block, bool) {
	for _, b := range bs {
		if b.ID == id {
			return b, true
		}
		for _, n := range b.Nested() {
			if c, ok := findBlock(*n, id); ok {
				return c, true
			}
		}
	}
	return flowdoc.Block{}, false
}

// blockText is a block's readable text (a code block's code, a list's items…).
func blockText(b flowdoc.Block) string {
	return strings.TrimRight(flowdoc.RenderText(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{b}}), "\n")
}

func docText(bs []flowdoc.Block) string {
	return strings.TrimRight(flowdoc.RenderText(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: bs}), "\n")
}

func article(t flowdoc.BlockType) string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + string(t)
	}
	return "a " + string(t)
}
