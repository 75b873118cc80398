package flowdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func opsSampleDoc() Document {
	return mkDoc(
		mkPara("a", Run{Text: "Hello "}, Run{Text: "wörld", Marks: []Mark{Bold}}),
		Block{ID: "t", Type: Table, Rows: []TableRow{{Cells: [][]Run{{{Text: "x"}}}}}},
		Block{ID: "k", Type: Columns, Cols: []Column{{Blocks: []Block{mkPara("k1", Run{Text: "left"})}}, {Blocks: []Block{mkPara("k2", Run{Text: "right"})}}}},
		mkPara("z", Run{Text: "end"}),
	)
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name   string
		ops    []Op
		target error
		index  int
		msg    string
	}{
		{"unknown block", []Op{{Op: DeleteBlock, BlockID: "nope", Confirm: true}}, ErrBlockNotFound, 0, `block not found: "nope"`},
		{"no confirmation", []Op{{Op: DeleteBlock, BlockID: "a"}}, ErrConfirmationRequired, 0, "needs confirmation"},
		{"second op fails", []Op{{Op: ReplaceSelection, BlockID: "a", Start: 0, End: 5, RichText: []Run{{Text: "Bye"}}}, {Op: ReplaceSelection, BlockID: "a", Start: 0, End: 99}},
			ErrBadOp, 1, "outside the text"},
		{"missing blockId", []Op{{Op: ReplaceBlock, Block: &Block{Type: Paragraph}}}, ErrBadOp, 0, "needs blockId"},
		{"stray field", []Op{{Op: InsertAfter, BlockID: "a", Blocks: []Block{mkPara("")}, Confirm: true}}, ErrBadOp, 0, "does not take confirm"},
		{"empty insert", []Op{{Op: InsertAfter, BlockID: "a"}}, ErrBadOp, 0, "needs at least one block"},
		{"invalid result", []Op{{Op: ReplaceBlock, BlockID: "a", Block: &Block{Type: Heading}}}, ErrInvalid, 0, "heading level must be 1..6"},
		{"guard", []Op{{Op: ReplaceDocument, Document: &Document{Blocks: []Block{mkPara("a")}}}}, ErrComplexChanged, 0, `complex block "t" (table) is missing`},
		{"replace_document must be valid", []Op{{Op: ReplaceDocument, Document: &Document{Blocks: []Block{mkPara("")}}}}, ErrInvalid, 0, "block id is required"},
		{"selection in a table", []Op{{Op: ReplaceSelection, BlockID: "t"}}, ErrBadOp, 0, "table block"},
		{"replace_block id", []Op{{Op: ReplaceBlock, BlockID: "a", Block: &Block{ID: "b", Type: Paragraph}}}, ErrBadOp, 0, "keeps the block id"},
		{"inserted nested id clash", []Op{{Op: InsertBefore, BlockID: "a", Blocks: []Block{{Type: Details, Children: []Block{mkPara("k2")}}}}}, ErrBadOp, 0, `"k2" is already used`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := opsSampleDoc()
			before := CanonicalJSON(d)
			_, err := Apply(d, tt.ops, DefaultLimits)
			var oe *OpError
			if !errors.As(err, &oe) {
				t.Fatalf("error %T %v is not an *OpError", err, err)
			}
			if oe.Index != tt.index || oe.Op != tt.ops[tt.index].Op {
				t.Fatalf("OpError names op %d (%s), want %d", oe.Index, oe.Op, tt.index)
			}
			if !errors.Is(err, tt.target) {
				t.Fatalf("error %v does not match %v", err, tt.target)
			}
			if !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "flowdoc: op ") {
				t.Fatalf("error %q does not say %q", err, tt.msg)
			}
			if !bytes.Equal(CanonicalJSON(d), before) {
				t.Fatal("Apply modified its input on error")
			}
		})
	}
}

func TestApplyIsPure(t *testing.T) {
	d := opsSampleDoc()
	newBlock := mkPara("", Run{Text: "new", Marks: []Mark{Italic}})
	ops := []Op{
		{Op: ReplaceSelection, BlockID: "a", Start: 2, End: 8, RichText: []Run{{Text: "y", Marks: []Mark{Bold}}}},
		{Op: InsertAfter, BlockID: "k1", Blocks: []Block{newBlock}},
		{Op: DeleteBlock, BlockID: "z", Confirm: true},
	}
	beforeDoc, beforeOps := CanonicalJSON(d), mustMarshalJSON(t, ops)
	got, err := Apply(d, ops, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(CanonicalJSON(d), beforeDoc) {
		t.Fatal("Apply modified its input document")
	}
	if !bytes.Equal(mustMarshalJSON(t, ops), beforeOps) {
		t.Fatal("Apply modified its operations")
	}
	if pt := PlainText(got.Blocks[0].RichText); pt != "Heyrld" {
		t.Fatalf("plain text %q, want Heyrld", pt)
	}
	// The result shares no memory with the input or the ops.
	got.Blocks[0].RichText[0].Text = "X"
	got.Blocks[2].Cols[0].Blocks[1].RichText[0].Marks[0] = Strike
	if d.Blocks[0].RichText[0].Text != "Hello " || ops[1].Blocks[0].RichText[0].Marks[0] != Italic {
		t.Fatal("Apply result aliases its inputs")
	}
	// Deterministic, including generated ids.
	again, _ := Apply(d, ops, DefaultLimits)
	got2, _ := Apply(d, ops, DefaultLimits)
	if !bytes.Equal(CanonicalJSON(again), CanonicalJSON(got2)) {
		t.Fatal("Apply is not deterministic")
	}
	gen := again.Blocks[2].Cols[0].Blocks[1].ID
	if !ValidID(gen) || gen == "" {
		t.Fatalf("generated id %q is not a valid id", gen)
	}
}

func mustMarshalJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReplaceBlockNestedIDs(t *testing.T) {
	d := opsSampleDoc()
	got, err := Apply(d, []Op{{Op: ReplaceBlock, BlockID: "k", Block: &Block{Type: Columns, Cols: []Column{
		{Blocks: []Block{mkPara("k1", Run{Text: "kept id"})}},
		{Blocks: []Block{mkPara("", Run{Text: "new"})}},
	}}}}, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	k := got.Blocks[2]
	if k.ID != "k" || k.Cols[0].Blocks[0].ID != "k1" || k.Cols[1].Blocks[0].ID == "" {
		t.Fatalf("ids after replace_block: %s", CanonicalJSON(got))
	}
}

func TestTargetBlocks(t *testing.T) {
	d := opsSampleDoc()
	ops := []Op{
		{Op: ReplaceSelection, BlockID: "z"},
		{Op: InsertAfter, BlockID: "k2", Blocks: []Block{mkPara("new")}},
		{Op: DeleteBlock, BlockID: "new", Confirm: true}, // inserted above: not existing
		{Op: ReplaceBlock, BlockID: "k1"},                // same top-level block as k2
		{Op: ReplaceSection, Blocks: []Block{mkPara("a"), {ID: "t"}}},
	}
	got := TargetBlocks(d, ops)
	if want := []string{"z", "k", "a", "t"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("TargetBlocks = %v, want %v", got, want)
	}
	all := TargetBlocks(d, []Op{{Op: ReplaceDocument, Document: &Document{}}})
	if want := []string{"a", "t", "k", "z"}; !reflect.DeepEqual(all, want) {
		t.Fatalf("replace_document targets %v, want %v", all, want)
	}
}

func TestGuardComplex(t *testing.T) {
	before := opsSampleDoc()
	tests := []struct {
		name  string
		after Document
		want  []string
	}{
		{"text reworked", mkDoc(mkPara("new", Run{Text: "intro"}), before.Blocks[1], mkPara("mid"), before.Blocks[2]), nil},
		{"text blocks dropped", mkDoc(before.Blocks[1], before.Blocks[2]), nil},
		{"content changed", mkDoc(before.Blocks[0], Block{ID: "t", Type: Table, Rows: []TableRow{{Cells: [][]Run{{{Text: "y"}}}}}}, before.Blocks[2]),
			[]string{`blocks[1]: complex block "t" (table) must keep its content unchanged`}},
		{"nested content changed", mkDoc(before.Blocks[1], Block{ID: "k", Type: Columns, Cols: []Column{{Blocks: []Block{mkPara("k1", Run{Text: "LEFT"})}}, {Blocks: []Block{mkPara("k2", Run{Text: "right"})}}}}),
			[]string{`blocks[1]: complex block "k" (columns) must keep its content unchanged`}},
		{"order changed", mkDoc(before.Blocks[2], before.Blocks[1]), []string{`blocks[1]: complex block "t" (table) moved`}},
		{"removed", mkDoc(before.Blocks[2]), []string{`before.blocks[1]: complex block "t" (table) is missing`}},
		{"type changed", mkDoc(mkPara("t"), before.Blocks[2]), []string{`blocks[0].type: complex block "t" must stay a table`}},
		{"added", mkDoc(before.Blocks[1], before.Blocks[2], Block{ID: "e", Type: Equation, Attrs: &Attrs{Latex: "x"}}),
			[]string{`blocks[2]: a whole-document candidate cannot add complex block "e" (equation)`}},
		{"unsanitized equal content", mkDoc(before.Blocks[1], func() Block {
			b := before.Blocks[2].Clone()
			b.Cols[0].Blocks[0].RichText = []Run{{Text: "le"}, {Text: "ft"}}
			return b
		}()), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemList(GuardComplex(before, tt.after))
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("got %q, want prefix %q", got[i], tt.want[i])
				}
			}
		})
	}
}

func TestPlainTextAndSplit(t *testing.T) {
	runs := []Run{{Text: "日本"}, {Equation: `\alpha`}, {Text: "👨‍👩‍👧", Marks: []Mark{Bold}}}
	if got, want := PlainText(runs), "日本\uFFFC👨‍👩‍👧"; got != want {
		t.Fatalf("PlainText = %q, want %q", got, want)
	}
	if n := textLen(runs); n != 8 {
		t.Fatalf("textLen = %d, want 8 (2 CJK + 1 equation + 5 code points of the ZWJ sequence)", n)
	}
	for off := 0; off <= 8; off++ {
		b, a := splitRuns(runs, off)
		if textLen(b) != off || PlainText(b)+PlainText(a) != PlainText(runs) {
			t.Fatalf("split at %d: %q | %q", off, PlainText(b), PlainText(a))
		}
	}
}

// A quote that holds blocks is guarded like a complex block: a rewrite of
// the whole document may edit its text but not drop what it quotes.
func TestGuardQuoteWithChildren(t *testing.T) {
	q := Block{ID: "q", Type: Quote, RichText: txt("said"), Children: []Block{para("q1", "and more")}}
	before := doc(q, para("p", "after"))
	edited := q.Clone()
	edited.RichText = txt("said it")
	if ps := GuardComplex(before, doc(edited, para("p", "after!"))); len(ps) != 1 {
		t.Fatalf("editing the text of a quote that holds blocks: %v, want its content kept", ps)
	}
	if ps := GuardComplex(before, doc(q.Clone(), para("p", "after!"))); len(ps) != 0 {
		t.Fatalf("keeping the quote: %v", ps)
	}
	flat := Block{ID: "q", Type: Quote, RichText: txt("said and more")}
	if ps := GuardComplex(before, doc(flat, para("p", "after"))); len(ps) == 0 {
		t.Fatal("a candidate dropping a quote's children was accepted")
	}
	if ps := GuardComplex(doc(para("p", "x")), doc(para("p", "x"), q)); len(ps) == 0 {
		t.Fatal("a candidate adding a quote that holds blocks was accepted")
	}
}
