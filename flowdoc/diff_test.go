package flowdoc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func para(id, s string) Block { return Block{ID: id, Type: Paragraph, RichText: txt(s)} }

func TestWordDiff(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       []WordEdit
	}{
		{"chinese", "我们今天去公园散步", "我们明天去公园跑步", []WordEdit{
			{OpEqual, "我们"}, {OpDelete, "今"}, {OpInsert, "明"}, {OpEqual, "天去公园"}, {OpDelete, "散"}, {OpInsert, "跑"}, {OpEqual, "步"}}},
		{"english", "The quick brown fox jumps.", "The slow brown fox jumped!", []WordEdit{
			{OpEqual, "The "}, {OpDelete, "quick"}, {OpInsert, "slow"}, {OpEqual, " brown fox "}, {OpDelete, "jumps."}, {OpInsert, "jumped!"}}},
		{"japanese and korean", "日本語のテキスト와 한국어", "日本語のメモ와 한국말", []WordEdit{
			{OpEqual, "日本語の"}, {OpDelete, "テキスト"}, {OpInsert, "メモ"}, {OpEqual, "와 한국"}, {OpDelete, "어"}, {OpInsert, "말"}}},
		{"emoji kept whole", "I 👍🏽 it 👩‍💻", "I 👍🏿 it 👩‍💻", []WordEdit{
			{OpEqual, "I "}, {OpDelete, "👍🏽"}, {OpInsert, "👍🏿"}, {OpEqual, " it 👩‍💻"}}},
		{"combining marks stay with their letter", "cafe\u0301 ok", "cafe ok", []WordEdit{
			{OpDelete, "cafe\u0301"}, {OpInsert, "cafe"}, {OpEqual, " ok"}}},
		{"insert only", "a c", "a b c", []WordEdit{{OpEqual, "a "}, {OpInsert, "b "}, {OpEqual, "c"}}},
		{"from empty", "", "new text", []WordEdit{{OpInsert, "new text"}}},
		{"to empty", "old", "", []WordEdit{{OpDelete, "old"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := WordDiff(c.a, c.b)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("WordDiff(%q, %q)\n got  %q\n want %q", c.a, c.b, got, c.want)
			}
			checkEdits(t, c.a, c.b, got)
		})
	}
}

// checkEdits asserts that edits rebuild both texts and that no two
// neighbours have the same op.
func checkEdits(t testing.TB, a, b string, edits []WordEdit) {
	t.Helper()
	var ra, rb strings.Builder
	for i, e := range edits {
		if i > 0 && edits[i-1].Op == e.Op {
			t.Fatalf("edits %d and %d both %s: not coalesced: %q", i-1, i, e.Op, edits)
		}
		if e.Op != OpInsert {
			ra.WriteString(e.Text)
		}
		if e.Op != OpDelete {
			rb.WriteString(e.Text)
		}
	}
	if ra.String() != a || rb.String() != b {
		t.Fatalf("edits do not rebuild the texts: %q -> %q / %q", edits, ra.String(), rb.String())
	}
}

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Hello, world!", []string{"Hello", ",", " ", "world", "!"}},
		{"我们去", []string{"我", "们", "去"}},
		{"naïve e\u0301te", []string{"naïve", " ", "e\u0301te"}},
		{"🇫🇷🇩🇪", []string{"🇫🇷", "🇩🇪"}},
		{"a  \tb", []string{"a", "  \t", "b"}},
		{"v2ray数据", []string{"v2ray", "数", "据"}},
	}
	for _, c := range cases {
		if got := Tokenize(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDiff(t *testing.T) {
	base := doc(para("a", "one"), para("b", "two"), para("c", "three"), para("d", "four"), para("e", "five"))
	cases := []struct {
		name string
		b    Document
		want []BlockChange
	}{
		{"same", base, []BlockChange{}},
		{"added", doc(para("a", "one"), para("n", "new"), para("b", "two"), para("c", "three"), para("d", "four"), para("e", "five")),
			[]BlockChange{{Kind: Added, BlockID: "n", Type: Paragraph, From: -1, To: 1}}},
		{"deleted in place", doc(para("a", "one"), para("b", "two"), para("d", "four"), para("e", "five")),
			[]BlockChange{{Kind: Deleted, BlockID: "c", Type: Paragraph, From: 2, To: -1}}},
		{"deleted first", doc(para("b", "two"), para("c", "three"), para("d", "four"), para("e", "five")),
			[]BlockChange{{Kind: Deleted, BlockID: "a", Type: Paragraph, From: 0, To: -1}}},
		{"one block moved to the end", doc(para("b", "two"), para("c", "three"), para("d", "four"), para("e", "five"), para("a", "one")),
			[]BlockChange{{Kind: Moved, BlockID: "a", Type: Paragraph, From: 0, To: 4, Moved: true}}},
		{"modified and moved", doc(para("a", "one"), para("c", "three"), para("d", "four"), para("b", "two!"), para("e", "five")),
			[]BlockChange{{Kind: Modified, BlockID: "b", Type: Paragraph, From: 1, To: 3, Moved: true, Words: []WordEdit{{OpEqual, "two"}, {OpInsert, "!"}}}}},
		{"type change", doc(para("a", "one"), Block{ID: "b", Type: Heading, Attrs: &Attrs{Level: 1}, RichText: txt("two")}, para("c", "three"), para("d", "four"), para("e", "five")),
			[]BlockChange{{Kind: Modified, BlockID: "b", Type: Heading, From: 1, To: 1}}},
		{"marks only", doc(para("a", "one"), Block{ID: "b", Type: Paragraph, RichText: []Run{{Text: "two", Marks: []Mark{Bold}}}}, para("c", "three"), para("d", "four"), para("e", "five")),
			[]BlockChange{{Kind: Modified, BlockID: "b", Type: Paragraph, From: 1, To: 1}}},
		{"mixed, ordered by b with deletions where they were", doc(para("e", "five"), para("a", "one"), para("x", "ex"), para("d", "FOUR")),
			[]BlockChange{
				{Kind: Moved, BlockID: "e", Type: Paragraph, From: 4, To: 0, Moved: true},
				{Kind: Deleted, BlockID: "b", Type: Paragraph, From: 1, To: -1},
				{Kind: Deleted, BlockID: "c", Type: Paragraph, From: 2, To: -1},
				{Kind: Added, BlockID: "x", Type: Paragraph, From: -1, To: 2},
				{Kind: Modified, BlockID: "d", Type: Paragraph, From: 3, To: 3, Words: []WordEdit{{OpDelete, "four"}, {OpInsert, "FOUR"}}},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Diff(base, c.b)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Diff:\n got  %+v\n want %+v", got, c.want)
			}
		})
	}
}

func TestDiffCJKBlock(t *testing.T) {
	a := doc(para("p", "我们今天去公园散步"))
	b := doc(para("p", "我们明天去公园跑步"))
	ch := Diff(a, b)
	if len(ch) != 1 || ch[0].Kind != Modified {
		t.Fatalf("want one modified block, got %+v", ch)
	}
	var dels, ins []string
	for _, w := range ch[0].Words {
		switch w.Op {
		case OpDelete:
			dels = append(dels, w.Text)
		case OpInsert:
			ins = append(ins, w.Text)
		}
	}
	if !reflect.DeepEqual(dels, []string{"今", "散"}) || !reflect.DeepEqual(ins, []string{"明", "跑"}) {
		t.Fatalf("want 今->明 and 散->跑, got %q", ch[0].Words)
	}
}

func TestDiffComplexBlockWords(t *testing.T) {
	a := doc(Block{ID: "l", Type: List, Items: []ListItem{{RichText: txt("buy milk")}, {RichText: txt("walk")}}})
	b := doc(Block{ID: "l", Type: List, Items: []ListItem{{RichText: txt("buy bread")}, {RichText: txt("walk")}}})
	ch := Diff(a, b)
	if len(ch) != 1 || ch[0].Kind != Modified || len(ch[0].Words) == 0 {
		t.Fatalf("want a modified list with words, got %+v", ch)
	}
	checkEdits(t, "• buy milk\n• walk", "• buy bread\n• walk", ch[0].Words)
}

func TestDiffMovesOnlyTheMovedBlocks(t *testing.T) {
	var a, b Document
	for i := 0; i < 50; i++ {
		a.Blocks = append(a.Blocks, para(fmt.Sprintf("p%d", i), fmt.Sprint(i)))
	}
	// Move block 10 to the end and block 40 to the front.
	for i := 0; i < 50; i++ {
		if i != 10 && i != 40 {
			b.Blocks = append(b.Blocks, a.Blocks[i])
		}
	}
	b.Blocks = append([]Block{a.Blocks[40]}, append(b.Blocks, a.Blocks[10])...)
	ch := Diff(a, b)
	var moved []string
	for _, c := range ch {
		if c.Kind != Moved {
			t.Fatalf("unexpected change %+v", c)
		}
		moved = append(moved, c.BlockID)
	}
	if !reflect.DeepEqual(moved, []string{"p40", "p10"}) {
		t.Fatalf("moved = %v, want [p40 p10]", moved)
	}
}

func TestDiffDuplicateIDs(t *testing.T) {
	a := doc(para("x", "1"), para("x", "2"))
	b := doc(para("x", "1"))
	ch := Diff(a, b)
	if len(ch) != 1 || ch[0].Kind != Deleted || ch[0].From != 1 {
		t.Fatalf("want the second x deleted, got %+v", ch)
	}
}

func TestDiffSelfAllCases(t *testing.T) {
	for _, c := range renderCases {
		if ch := Diff(c.doc, c.doc.Clone()); len(ch) != 0 {
			t.Errorf("%s: diff with itself = %+v", c.name, ch)
		}
	}
}
