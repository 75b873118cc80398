package assistant

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// maxAnswerOps bounds the operations of one answer.
const maxAnswerOps = 50

// candidate is a model's answer after domain repair and validation.
type candidate struct {
	summary string
	ops     []flowdoc.Op // as stored in the suggestion (delete_block unconfirmed)
	repairs []string     // what domain repair changed, for the run's record
	result  flowdoc.Document
	// noChange: the operations leave the text as it was.
	noChange bool
}

// The answer as models write it: lenient about run and block shapes,
// which domain repair then makes exact.
type rawAnswer struct {
	Summary string   `json:"summary"`
	Ops     *[]rawOp `json:"ops"` // nil: the answer has no "ops" at all
}

type rawOp struct {
	Op       string     `json:"op"`
	BlockID  string     `json:"blockId"`
	Start    *int       `json:"start"`
	End      *int       `json:"end"`
	RichText []rawRun   `json:"richText"`
	Text     *string    `json:"text"`
	Block    *rawBlock  `json:"block"`
	Blocks   []rawBlock `json:"blocks"`
	Document *struct {
		Blocks []rawBlock `json:"blocks"`
	} `json:"document"`
}

type rawBlock struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Attrs    *flowdoc.Attrs     `json:"attrs"`
	Level    int                `json:"level"`
	RichText []rawRun           `json:"richText"`
	Text     *string            `json:"text"`
	Items    []flowdoc.ListItem `json:"items"`
	Rows     []flowdoc.TableRow `json:"rows"`
	Children []flowdoc.Block    `json:"children"`
	Cols     []flowdoc.Column   `json:"columns"`
}

// rawRun is a run, or a bare string standing for one.
type rawRun struct{ flowdoc.Run }

func (r *rawRun) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &r.Text)
	}
	return json.Unmarshal(b, &r.Run)
}

func runsOf(raw []rawRun, text *string) []flowdoc.Run {
	if len(raw) == 0 && text != nil {
		if *text == "" {
			return nil
		}
		return []flowdoc.Run{{Text: *text}}
	}
	out := make([]flowdoc.Run, 0, len(raw))
	for _, r := range raw {
		out = append(out, r.Run)
	}
	return out
}

// repairer applies DESIGN.md §6's domain repair and records what it did.
type repairer struct {
	notes []string
}

func (rp *repairer) note(format string, args ...any) {
	if len(rp.notes) < 50 {
		rp.notes = append(rp.notes, fmt.Sprintf(format, args...))
	}
}

func invalidAnswer(format string, args ...any) error {
	return errs.E(errs.Invalid, "the answer is not a valid suggestion: "+format, args...)
}

// headingLike reports whether an unknown type names a heading, and the
// level its name carries (0 when none).
func headingLike(t string) (bool, int) {
	for _, p := range []string{"heading", "header", "title", "subtitle", "subheading", "h"} {
		rest, ok := strings.CutPrefix(t, p)
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, "_- ")
		if rest == "" {
			if p == "h" {
				return false, 0
			}
			if p == "title" {
				return true, 1
			}
			return true, 0
		}
		if n, err := strconv.Atoi(rest); err == nil {
			return true, n
		}
	}
	return false, 0
}

func knownType(t string) bool {
	for _, k := range flowdoc.BlockTypes {
		if string(k) == t {
			return true
		}
	}
	return false
}

// textBlock makes a model's block a clean text block (paragraph, heading,
// quote): unknown heading-like types become headings, other unknown text
// becomes a paragraph, heading levels are kept within 1..4, and fields a
// text block does not have are dropped. complex is true (and the block
// unrepaired) when the model gave a known complex type.
func (rp *repairer) textBlock(rb rawBlock, where string) (b flowdoc.Block, complex bool) {
	t := strings.ToLower(strings.TrimSpace(rb.Type))
	if knownType(t) && flowdoc.BlockType(t).IsComplex() {
		return flowdoc.Block{ID: rb.ID, Type: flowdoc.BlockType(t), Attrs: rb.Attrs, RichText: runsOf(rb.RichText, rb.Text),
			Items: rb.Items, Rows: rb.Rows, Children: rb.Children, Cols: rb.Cols}, true
	}
	level := rb.Level
	if rb.Attrs != nil && rb.Attrs.Level != 0 {
		level = rb.Attrs.Level
	}
	switch {
	case t == "paragraph" || t == "heading" || t == "quote":
	case t == "":
		rp.note("%s: a block without a type became a paragraph", where)
		t = "paragraph"
	default:
		if ok, n := headingLike(t); ok {
			rp.note("%s: unknown type %q became a heading", where, rb.Type)
			t = "heading"
			if level == 0 {
				level = n
			}
		} else {
			rp.note("%s: unknown type %q became a paragraph", where, rb.Type)
			t = "paragraph"
		}
	}
	b = flowdoc.Block{ID: rb.ID, Type: flowdoc.BlockType(t), RichText: runsOf(rb.RichText, rb.Text)}
	if t == "heading" {
		switch {
		case level == 0:
			rp.note("%s: a heading without a level got level 2", where)
			level = 2
		case level < 1:
			rp.note("%s: heading level %d became 1", where, level)
			level = 1
		case level > 4:
			rp.note("%s: heading level %d became 4", where, level)
			level = 4
		}
		b.Attrs = &flowdoc.Attrs{Level: level}
	}
	if len(rb.Items) > 0 || len(rb.Rows) > 0 || len(rb.Children) > 0 || len(rb.Cols) > 0 ||
		(rb.Attrs != nil && (*rb.Attrs != flowdoc.Attrs{Level: rb.Attrs.Level})) {
		rp.note("%s: fields a %s block does not have were dropped", where, t)
	}
	return b, false
}

// parseAnswer turns a model's JSON object into a candidate for scope s of
// base: it decodes leniently, applies domain repair, then checks the
// operations against the scope's rules and applies them to base. Anything
// still invalid is an error (the run fails; there is no suggestion).
// seed makes the ids of new blocks deterministic per run.
func parseAnswer(obj json.RawMessage, base flowdoc.Document, r resolved, l flowdoc.Limits, seed string) (candidate, error) {
	var a rawAnswer
	if err := json.Unmarshal(obj, &a); err != nil {
		return candidate{}, invalidAnswer("%v", err)
	}
	if a.Ops == nil {
		return candidate{}, invalidAnswer(`it has no "ops" (an empty list says there is nothing to change)`)
	}
	ops := *a.Ops
	if len(ops) > maxAnswerOps {
		return candidate{}, invalidAnswer("%d operations, at most %d", len(ops), maxAnswerOps)
	}
	c := candidate{summary: strings.TrimSpace(a.Summary)}
	c.summary, _ = clipRunes(c.summary, 500)
	if len(ops) == 0 {
		c.noChange, c.result = true, base
		return c, nil
	}
	rp := &repairer{}
	var err error
	switch r.scope.Kind {
	case ScopeSelection:
		c.ops, err = rp.selection(ops, r.scope)
	case ScopeBlock:
		c.ops, err = rp.block(ops, r)
	case ScopeSection:
		c.ops, err = rp.section(ops, r)
	case ScopeDocument:
		c.ops, err = rp.document(ops, base, seed)
	default:
		err = invalidAnswer("unknown scope %q", r.scope.Kind)
	}
	if err != nil {
		return candidate{}, err
	}
	c.repairs = rp.notes
	apply := make([]flowdoc.Op, len(c.ops))
	for i, op := range c.ops {
		apply[i] = op
		if op.Op == flowdoc.DeleteBlock {
			apply[i].Confirm = true // the preview shows the deletion; accepting it needs confirmation
		}
	}
	res, err := flowdoc.Apply(base, apply, l)
	if err != nil {
		return candidate{}, invalidAnswer("%v", err)
	}
	if len(res.Blocks) == 0 {
		return candidate{}, invalidAnswer("it would leave the article empty")
	}
	c.result = res
	c.noChange = bytes.Equal(flowdoc.EncodeBody(res), flowdoc.EncodeBody(flowdoc.Sanitize(base)))
	return c, nil
}

func wantOne(ops []rawOp, kind flowdoc.OpKind) (rawOp, error) {
	if len(ops) != 1 || flowdoc.OpKind(ops[0].Op) != kind {
		names := make([]string, len(ops))
		for i, o := range ops {
			names[i] = o.Op
		}
		return rawOp{}, invalidAnswer("this scope takes exactly one %s operation, the answer has [%s]", kind, strings.Join(names, ", "))
	}
	return ops[0], nil
}

// selection: one replace_selection on the request's block and offsets
// (the current selection always wins over the model's copy of it).
func (rp *repairer) selection(ops []rawOp, s Scope) ([]flowdoc.Op, error) {
	o, err := wantOne(ops, flowdoc.ReplaceSelection)
	if err != nil {
		return nil, err
	}
	if o.BlockID != s.Block || o.Start == nil || *o.Start != s.Start || o.End == nil || *o.End != s.End {
		rp.note("ops[0]: the selection is the request's (%s %d..%d)", s.Block, s.Start, s.End)
	}
	runs := runsOf(o.RichText, o.Text)
	if runs == nil {
		runs = []flowdoc.Run{} // an empty replacement deletes the selected text
	}
	return []flowdoc.Op{{Op: flowdoc.ReplaceSelection, BlockID: s.Block, Start: s.Start, End: s.End, RichText: runs}}, nil
}

// block: replace_block, insert_before, insert_after and delete_block, all
// on the scope's block; new blocks are text blocks.
func (rp *repairer) block(ops []rawOp, r resolved) ([]flowdoc.Op, error) {
	target := r.blocks[0]
	var out []flowdoc.Op
	for i, o := range ops {
		where := fmt.Sprintf("ops[%d]", i)
		if o.BlockID == "" {
			rp.note("%s: the block is the request's (%s)", where, target.ID)
			o.BlockID = target.ID
		}
		if o.BlockID != target.ID {
			return nil, invalidAnswer("%s names block %q; this request is about block %q only", where, o.BlockID, target.ID)
		}
		switch k := flowdoc.OpKind(o.Op); k {
		case flowdoc.ReplaceBlock:
			if o.Block == nil {
				return nil, invalidAnswer("%s: replace_block needs block", where)
			}
			var nb flowdoc.Block
			if target.Type.IsText() {
				var complex bool
				nb, complex = rp.textBlock(*o.Block, where+".block")
				if complex {
					return nil, invalidAnswer("%s: a text block can only become a paragraph, heading or quote, not %s", where, nb.Type)
				}
				if len(target.Children) > 0 {
					// A quote's blocks are not the answer's to drop.
					if nb.Type != target.Type {
						return nil, invalidAnswer("%s: quote %q holds blocks and must stay a quote", where, target.ID)
					}
					nb.Children = target.Clone().Children
				}
			} else {
				nb = flowdoc.Block{Type: flowdoc.BlockType(strings.ToLower(o.Block.Type)), Attrs: o.Block.Attrs,
					RichText: runsOf(o.Block.RichText, o.Block.Text), Items: o.Block.Items, Rows: o.Block.Rows,
					Children: o.Block.Children, Cols: o.Block.Cols}
				if nb.Type != target.Type {
					return nil, invalidAnswer("%s: %s block %q must stay %s", where, target.Type, target.ID, article(target.Type))
				}
			}
			nb.ID = target.ID
			out = append(out, flowdoc.Op{Op: k, BlockID: target.ID, Block: &nb})
		case flowdoc.InsertBefore, flowdoc.InsertAfter:
			if len(o.Blocks) == 0 {
				return nil, invalidAnswer("%s: %s needs blocks", where, k)
			}
			var nbs []flowdoc.Block
			for j, rb := range o.Blocks {
				nb, complex := rp.textBlock(rb, fmt.Sprintf("%s.blocks[%d]", where, j))
				if complex {
					return nil, invalidAnswer("%s.blocks[%d]: new blocks are paragraphs, headings or quotes, not %s", where, j, nb.Type)
				}
				if nb.ID != "" {
					rp.note("%s.blocks[%d]: a new block's id %q was replaced by a fresh one", where, j, nb.ID)
					nb.ID = ""
				}
				nbs = append(nbs, nb)
			}
			out = append(out, flowdoc.Op{Op: k, BlockID: target.ID, Blocks: nbs})
		case flowdoc.DeleteBlock:
			out = append(out, flowdoc.Op{Op: k, BlockID: target.ID})
		default:
			return nil, invalidAnswer("%s: operation %q is not one a block request may use (replace_block, insert_before, insert_after, delete_block)", where, o.Op)
		}
	}
	return out, nil
}

// section: one replace_section with the section's blocks, their ids,
// order and types; text blocks take the model's rich text, every other
// block stays exactly as it was.
func (rp *repairer) section(ops []rawOp, r resolved) ([]flowdoc.Op, error) {
	o, err := wantOne(ops, flowdoc.ReplaceSection)
	if err != nil {
		return nil, err
	}
	if len(o.Blocks) != len(r.blocks) {
		return nil, invalidAnswer("replace_section returns %d blocks; the section has %d and a section keeps its count", len(o.Blocks), len(r.blocks))
	}
	out := make([]flowdoc.Block, len(r.blocks))
	for i, old := range r.blocks {
		rb := o.Blocks[i]
		where := fmt.Sprintf("ops[0].blocks[%d]", i)
		if rb.ID != old.ID {
			if rb.ID != "" {
				return nil, invalidAnswer("%s is %q where the section has %q; a section keeps its order and ids", where, rb.ID, old.ID)
			}
			rp.note("%s: the id %q was restored", where, old.ID)
		}
		if !old.Type.IsText() {
			nb, _ := (&repairer{}).textBlock(rb, where)
			nb.ID = old.ID
			if !bytes.Equal(flowdoc.EncodeContent(flowdoc.Sanitize(flowdoc.Document{Blocks: []flowdoc.Block{nb}}).Blocks[0]), flowdoc.EncodeContent(old)) {
				rp.note("%s: %s block %q was restored unchanged", where, old.Type, old.ID)
			}
			out[i] = old.Clone()
			continue
		}
		if t := strings.ToLower(rb.Type); t != "" && t != string(old.Type) {
			rp.note("%s: block %q keeps its type %s (the answer said %q)", where, old.ID, old.Type, rb.Type)
		}
		nb := old.Clone()
		nb.RichText = runsOf(rb.RichText, rb.Text)
		out[i] = nb
	}
	return []flowdoc.Op{{Op: flowdoc.ReplaceSection, Blocks: out}}, nil
}

// document: one replace_document. Complex blocks named by their id are
// put back exactly as they were; text blocks are repaired; blocks
// without a usable id get a fresh one.
func (rp *repairer) document(ops []rawOp, base flowdoc.Document, seed string) ([]flowdoc.Op, error) {
	o, err := wantOne(ops, flowdoc.ReplaceDocument)
	if err != nil {
		return nil, err
	}
	if o.Document == nil || len(o.Document.Blocks) == 0 {
		return nil, invalidAnswer("replace_document needs a document with blocks; a whole-article candidate is never empty")
	}
	old := map[string]flowdoc.Block{}
	for _, b := range base.Blocks {
		old[b.ID] = b
	}
	used := map[string]bool{}
	out := make([]flowdoc.Block, 0, len(o.Document.Blocks))
	for i, rb := range o.Document.Blocks {
		where := fmt.Sprintf("ops[0].document.blocks[%d]", i)
		if ob, ok := old[rb.ID]; ok && ob.Complex() && !used[rb.ID] {
			nb, _ := (&repairer{}).textBlock(rb, where)
			nb.ID = rb.ID
			if nb.Type != ob.Type || !bytes.Equal(flowdoc.EncodeContent(flowdoc.Sanitize(flowdoc.Document{Blocks: []flowdoc.Block{nb}}).Blocks[0]), flowdoc.EncodeContent(ob)) {
				rp.note("%s: %s block %q was restored unchanged", where, ob.Type, ob.ID)
			}
			used[rb.ID] = true
			out = append(out, ob.Clone())
			continue
		}
		nb, complex := rp.textBlock(rb, where)
		if complex {
			return nil, invalidAnswer("%s: a whole-article candidate cannot add %s block (complex blocks keep their ids and content)", where, article(nb.Type))
		}
		if nb.ID == "" || !flowdoc.ValidID(nb.ID) || used[nb.ID] || (old[nb.ID].Type != "" && old[nb.ID].Complex()) {
			if nb.ID != "" {
				rp.note("%s: id %q was replaced by a fresh one", where, nb.ID)
			}
			nb.ID = freshID(seed, i, used, old)
		}
		used[nb.ID] = true
		out = append(out, nb)
	}
	return []flowdoc.Op{{Op: flowdoc.ReplaceDocument, Document: &flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: out}}}, nil
}

// freshID derives an unused block id from the run and the position.
func freshID(seed string, i int, used map[string]bool, old map[string]flowdoc.Block) string {
	for n := 0; ; n++ {
		h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", seed, i, n)))
		id := "t" + hex.EncodeToString(h[:6])
		if _, taken := old[id]; !taken && !used[id] {
			return id
		}
	}
}
