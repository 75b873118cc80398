package flowdoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

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

// OpKinds lists every operation kind.
var OpKinds = []OpKind{ReplaceSelection, ReplaceBlock, InsertBefore, InsertAfter, DeleteBlock, ReplaceDocument, ReplaceSection}

// Op is one structured operation on a document. Which fields an operation
// takes depends on Op; any other field set is an error:
//
//	replace_selection  BlockID, Start, End, RichText
//	replace_block      BlockID, Block
//	insert_before      BlockID, Blocks
//	insert_after       BlockID, Blocks
//	delete_block       BlockID, Confirm (must be true)
//	replace_document   Document
//	replace_section    Blocks
//
// BlockID may name any block of the document, nested ones included.
//
// replace_selection replaces code points [Start, End) of the plain text
// (see PlainText) of a paragraph, heading, quote, callout or details summary
// with RichText; the untouched text before and after keeps its runs, marks
// and links (a run cut by an offset is split). Start == End inserts; empty
// RichText deletes.
//
// replace_block replaces the block, keeping its id: Block.ID must be empty
// or equal to BlockID. insert_before / insert_after put Blocks next to
// BlockID in the same list. New blocks (and their nested blocks) may leave
// ids empty: Apply then derives fresh ids deterministically from the
// content and the operation's position; ids that are given must not be in
// use.
//
// replace_document replaces the whole body with a valid Document that
// passes GuardComplex against the body before it.
//
// replace_section (server-internal) rewrites consecutive sibling blocks,
// named by the ids of Blocks: count, order, ids and types stay; text blocks
// (paragraph, heading, quote) may change their rich text only; every other
// block must be identical.
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

// OpError says which operation of an Apply failed and why. Err wraps
// ErrBadOp, ErrBlockNotFound, ErrConfirmationRequired, a *ValidationError
// (the result would be invalid) or a *ComplexError (replace_document broke
// the complex-block guard).
type OpError struct {
	Index int    // position of the operation in the list
	Op    OpKind // its kind
	Err   error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("flowdoc: op %d (%s): %v", e.Index, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// Apply applies ops in order to a copy of d and returns the result,
// sanitized and validated against l. d and ops are not modified and the
// result shares no memory with them. After every operation the document is
// sanitized and validated, so an error names the first operation whose
// result is invalid; the error is an *OpError (with no operations Apply is
// Normalize and the error a *ValidationError). Apply is deterministic: equal
// inputs give byte-identical results.
func Apply(d Document, ops []Op, l Limits) (Document, error) {
	cur := Sanitize(d) // a deep copy: operations below may mutate it
	if len(ops) == 0 {
		if ps := Validate(cur, l); len(ps) > 0 {
			return Document{}, &ValidationError{Problems: ps}
		}
		return cur, nil
	}
	for i, op := range ops {
		next, err := applyOp(cur, op, l)
		if err == nil {
			next = Sanitize(next)
			if ps := Validate(next, l); len(ps) > 0 {
				err = &ValidationError{Problems: ps}
			}
		}
		if err != nil {
			return Document{}, &OpError{Index: i, Op: op.Op, Err: err}
		}
		cur = next
	}
	return cur, nil
}

// opFields lists the fields each kind takes (JSON names).
var opFields = map[OpKind][]string{
	ReplaceSelection: {"blockId", "start", "end", "richText"},
	ReplaceBlock:     {"blockId", "block"},
	InsertBefore:     {"blockId", "blocks"},
	InsertAfter:      {"blockId", "blocks"},
	DeleteBlock:      {"blockId", "confirm"},
	ReplaceDocument:  {"document"},
	ReplaceSection:   {"blocks"},
}

func checkOpFields(op Op) error {
	allowed, ok := opFields[op.Op]
	if !ok {
		names := make([]string, len(OpKinds))
		for i, k := range OpKinds {
			names[i] = string(k)
		}
		return fmt.Errorf("%w: unknown operation %q (known: %s)", ErrBadOp, op.Op, strings.Join(names, ", "))
	}
	set := []struct {
		name string
		on   bool
	}{
		{"blockId", op.BlockID != ""}, {"start", op.Start != 0}, {"end", op.End != 0},
		{"richText", op.RichText != nil}, {"block", op.Block != nil}, {"blocks", op.Blocks != nil},
		{"document", op.Document != nil}, {"confirm", op.Confirm},
	}
	for _, f := range set {
		if f.on && !containsString(allowed, f.name) {
			return fmt.Errorf("%w: %s does not take %s (it takes %s)", ErrBadOp, op.Op, f.name, strings.Join(allowed, ", "))
		}
	}
	if containsString(allowed, "blockId") && op.BlockID == "" {
		return fmt.Errorf("%w: %s needs blockId", ErrBadOp, op.Op)
	}
	return nil
}

// applyOp applies one operation to cur, which it may modify (cur is
// Apply's private copy). Content taken from op is cloned first.
func applyOp(cur Document, op Op, l Limits) (Document, error) {
	if err := checkOpFields(op); err != nil {
		return Document{}, err
	}
	switch op.Op {
	case ReplaceDocument:
		if op.Document == nil {
			return Document{}, fmt.Errorf("%w: replace_document needs document", ErrBadOp)
		}
		next := Sanitize(*op.Document)
		if ps := Validate(next, l); len(ps) > 0 {
			return Document{}, &ValidationError{Problems: ps}
		}
		if ps := GuardComplex(cur, next); len(ps) > 0 {
			return Document{}, &ComplexError{Problems: ps}
		}
		return next, nil
	case ReplaceSection:
		return cur, replaceSection(&cur, op.Blocks)
	}

	list, i, ok := locate(&cur.Blocks, op.BlockID)
	if !ok {
		return Document{}, fmt.Errorf("%w: %q", ErrBlockNotFound, op.BlockID)
	}
	switch op.Op {
	case ReplaceSelection:
		return cur, replaceSelection(&(*list)[i], op)
	case ReplaceBlock:
		if op.Block == nil {
			return Document{}, fmt.Errorf("%w: replace_block needs block", ErrBadOp)
		}
		if op.Block.ID != "" && op.Block.ID != op.BlockID {
			return Document{}, fmt.Errorf("%w: replace_block keeps the block id: block.id is %q, blockId is %q", ErrBadOp, op.Block.ID, op.BlockID)
		}
		nb := op.Block.Clone()
		nb.ID = op.BlockID
		used := collectIDs(cur.Blocks, nil)
		for id := range collectIDs([]Block{(*list)[i]}, nil) {
			delete(used, id)
		}
		used[nb.ID] = true
		g := idGen{used: used}
		if err := g.fillNested(&nb); err != nil {
			return Document{}, err
		}
		(*list)[i] = nb
	case InsertBefore, InsertAfter:
		if len(op.Blocks) == 0 {
			return Document{}, fmt.Errorf("%w: %s needs at least one block in blocks", ErrBadOp, op.Op)
		}
		nbs := make([]Block, len(op.Blocks))
		g := idGen{used: collectIDs(cur.Blocks, nil)}
		for k := range op.Blocks {
			nbs[k] = op.Blocks[k].Clone()
			if err := g.fill(&nbs[k]); err != nil {
				return Document{}, err
			}
		}
		at := i
		if op.Op == InsertAfter {
			at = i + 1
		}
		out := make([]Block, 0, len(*list)+len(nbs))
		out = append(out, (*list)[:at]...)
		out = append(out, nbs...)
		out = append(out, (*list)[at:]...)
		*list = out
	case DeleteBlock:
		if !op.Confirm {
			return Document{}, ErrConfirmationRequired
		}
		out := make([]Block, 0, len(*list)-1)
		out = append(out, (*list)[:i]...)
		out = append(out, (*list)[i+1:]...)
		*list = out
	}
	return cur, nil
}

// selectable reports whether replace_selection may edit t's rich text.
func selectable(t BlockType) bool {
	return t.IsText() || t == Callout || t == Details
}

func replaceSelection(b *Block, op Op) error {
	if !selectable(b.Type) {
		return fmt.Errorf("%w: replace_selection needs a paragraph, heading, quote, callout or details block; %q is %s block", ErrBadOp, b.ID, withArticle(b.Type))
	}
	n := textLen(b.RichText)
	if op.Start < 0 || op.End < op.Start || op.End > n {
		return fmt.Errorf("%w: selection %d..%d is outside the text of %q (0 <= start <= end <= %d code points)", ErrBadOp, op.Start, op.End, b.ID, n)
	}
	before, rest := splitRuns(b.RichText, op.Start)
	_, after := splitRuns(rest, op.End-op.Start)
	runs := make([]Run, 0, len(before)+len(op.RichText)+len(after))
	runs = append(runs, before...)
	runs = append(runs, cloneRuns(op.RichText)...)
	runs = append(runs, after...)
	b.RichText = runs
	return nil
}

func replaceSection(cur *Document, blocks []Block) error {
	if len(blocks) == 0 {
		return fmt.Errorf("%w: replace_section needs at least one block in blocks", ErrBadOp)
	}
	if blocks[0].ID == "" {
		return fmt.Errorf("%w: replace_section blocks[0] needs the id of an existing block", ErrBadOp)
	}
	list, start, ok := locate(&cur.Blocks, blocks[0].ID)
	if !ok {
		return fmt.Errorf("%w: %q", ErrBlockNotFound, blocks[0].ID)
	}
	for k, nb := range blocks {
		j := start + k
		if j >= len(*list) || (*list)[j].ID != nb.ID {
			want := "the end of the list"
			if j < len(*list) {
				want = fmt.Sprintf("%q", (*list)[j].ID)
			}
			return fmt.Errorf("%w: replace_section blocks must be consecutive blocks in document order: blocks[%d] is %q where the document has %s", ErrBadOp, k, nb.ID, want)
		}
		old := (*list)[j]
		if nb.Type != old.Type {
			return fmt.Errorf("%w: replace_section keeps block types: %q is a %s, not a %s", ErrBadOp, old.ID, old.Type, nb.Type)
		}
		cand := sanitizeBlock(nb)
		if old.Type.IsText() {
			probe := cand
			probe.RichText = old.RichText
			if !bytes.Equal(EncodeContent(probe), EncodeContent(old)) {
				return fmt.Errorf("%w: replace_section may change only the rich text of %s block %q", ErrBadOp, old.Type, old.ID)
			}
			(*list)[j].RichText = cand.RichText
			continue
		}
		if !bytes.Equal(EncodeContent(cand), EncodeContent(old)) {
			return fmt.Errorf("%w: replace_section must keep %s block %q identical", ErrBadOp, old.Type, old.ID)
		}
	}
	return nil
}

// locate finds the block with id anywhere in *bs (depth first, document
// order) and returns the list holding it and its index there.
func locate(bs *[]Block, id string) (*[]Block, int, bool) {
	for i := range *bs {
		b := &(*bs)[i]
		if b.ID == id {
			return bs, i, true
		}
		for _, n := range b.Nested() {
			if l, j, ok := locate(n, id); ok {
				return l, j, true
			}
		}
	}
	return nil, 0, false
}

// topOf returns the id of the top-level block that is or contains id.
func topOf(d Document, id string) (string, bool) {
	for i := range d.Blocks {
		if d.Blocks[i].ID == id {
			return id, true
		}
		for _, n := range d.Blocks[i].Nested() {
			if _, _, ok := locate(n, id); ok {
				return d.Blocks[i].ID, true
			}
		}
	}
	return "", false
}

func collectIDs(bs []Block, into map[string]bool) map[string]bool {
	if into == nil {
		into = map[string]bool{}
	}
	for _, b := range bs {
		if b.ID != "" {
			into[b.ID] = true
		}
		for _, n := range b.Nested() {
			collectIDs(*n, into)
		}
	}
	return into
}

// idGen gives new blocks ids. Generated ids are "b" and 11 hex digits of
// SHA-256 over the ids in use, a counter and the block's content: Apply
// stays deterministic, and applying a list of operations at once gives the
// same ids as applying them one by one.
type idGen struct {
	used map[string]bool
	base []byte // hash of the sorted ids in use, computed on first need
	n    uint64
}

func (g *idGen) fill(b *Block) error {
	if b.ID == "" {
		b.ID = g.next(b)
	} else if g.used[b.ID] {
		return fmt.Errorf("%w: block id %q is already used in the document; leave it empty for a new id", ErrBadOp, b.ID)
	}
	g.used[b.ID] = true
	return g.fillNested(b)
}

func (g *idGen) fillNested(b *Block) error {
	for _, n := range b.Nested() {
		for i := range *n {
			if err := g.fill(&(*n)[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *idGen) next(b *Block) string {
	if g.base == nil {
		ids := make([]string, 0, len(g.used))
		for id := range g.used {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		h := sha256.New()
		for _, id := range ids {
			h.Write([]byte(id))
			h.Write([]byte{0})
		}
		g.base = h.Sum(nil)
	}
	content := EncodeContent(*b)
	for {
		g.n++
		h := sha256.New()
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], g.n)
		h.Write(g.base[:])
		h.Write(buf[:])
		h.Write(content)
		id := "b" + hex.EncodeToString(h.Sum(nil))[:11]
		if !g.used[id] {
			return id
		}
	}
}

// TargetBlocks returns the ids of the existing blocks of d that ops touch,
// in first-touched order, without repeats (for baseline checks). Ids are
// those of top-level blocks: an operation on a nested block touches the
// top-level block containing it. insert_before / insert_after touch their
// anchor; replace_document touches every block; ids that d does not have
// (blocks an earlier op inserts) are left out.
func TargetBlocks(d Document, ops []Op) []string {
	var out []string
	seen := map[string]bool{}
	touch := func(id string) {
		if id == "" {
			return
		}
		top, ok := topOf(d, id)
		if ok && !seen[top] {
			seen[top] = true
			out = append(out, top)
		}
	}
	for _, op := range ops {
		switch op.Op {
		case ReplaceDocument:
			for _, b := range d.Blocks {
				touch(b.ID)
			}
		case ReplaceSection:
			for _, b := range op.Blocks {
				touch(b.ID)
			}
		default:
			touch(op.BlockID)
		}
	}
	return out
}
