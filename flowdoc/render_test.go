package flowdoc

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/flowdoc")

const goldenRoot = "../testdata/flowdoc"

// golden compares got with the file name under testdata/flowdoc, or
// rewrites the file with -update.
func golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join(goldenRoot, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s: %v (run go test ./flowdoc -run %s -update to create it)", path, err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file.\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func txt(s string) []Run { return []Run{{Text: s}} }

// renderCases has one document per block type plus the inline marks, in
// the forms a user writes them.
var renderCases = []struct {
	name string
	doc  Document
}{
	{"paragraph", doc(
		Block{ID: "p1", Type: Paragraph, RichText: []Run{
			{Text: "Plain, "}, {Text: "bold", Marks: []Mark{Bold}}, {Text: ", "},
			{Text: "italic", Marks: []Mark{Italic}}, {Text: ", "},
			{Text: "both", Marks: []Mark{Bold, Italic}}, {Text: ", "},
			{Text: "under", Marks: []Mark{Underline}}, {Text: ", "},
			{Text: "struck", Marks: []Mark{Strike}}, {Text: ", "},
			{Text: "a `tick`", Marks: []Mark{CodeMark}}, {Text: ", "},
			{Text: "a link", Link: "https://example.com/a_b?x=1&y=2"}, {Text: " and "},
			{Equation: `x^2`}, {Text: " inline."},
		}},
		Block{ID: "p2", Type: Paragraph, RichText: txt("Specials *not* _emph_ [x](y) <b> # 5$ ~a~ | \\ `c` &amp;\n- not a list\n1. not ordered")},
		Block{ID: "p3", Type: Paragraph, RichText: []Run{{Text: "mid"}, {Text: "word", Marks: []Mark{Bold}}, {Text: "bold"}}},
		Block{ID: "p4", Type: Paragraph, RichText: txt("我们今天去公园散步。Emoji 👩🏽‍💻 and e\u0301 combining.")},
	)},
	{"heading", doc(
		Block{ID: "h1", Type: Heading, Attrs: &Attrs{Level: 1}, RichText: txt("Title #1")},
		Block{ID: "h2", Type: Heading, Attrs: &Attrs{Level: 2}, RichText: []Run{{Text: "Second "}, {Text: "level", Marks: []Mark{Italic}}}},
		Block{ID: "h3", Type: Heading, Attrs: &Attrs{Level: 3}, RichText: txt("Third")},
		Block{ID: "h4", Type: Heading, Attrs: &Attrs{Level: 4}, RichText: txt("Fourth")},
	)},
	{"quote", doc(Block{ID: "q1", Type: Quote, RichText: txt("To be, or not to be.\nThat is the question.")})},
	{"list", doc(
		Block{ID: "l1", Type: List, Items: []ListItem{
			{RichText: txt("apples")},
			{RichText: txt("fruit"), Items: []ListItem{{RichText: txt("pears")}, {RichText: txt("plums"), Items: []ListItem{{RichText: txt("damson")}}}}},
			{RichText: []Run{{Text: "bold", Marks: []Mark{Bold}}, {Text: " item"}}},
		}},
		Block{ID: "l2", Type: List, Attrs: &Attrs{Ordered: true}, Items: []ListItem{
			{RichText: txt("first")}, {RichText: txt("second"), Items: []ListItem{{RichText: txt("second.one")}}}, {RichText: txt("third")},
		}},
		Block{ID: "l3", Type: List, Attrs: &Attrs{Ordered: true}, Items: []ListItem{{RichText: txt("a separate list")}}},
	)},
	{"code", doc(
		Block{ID: "c1", Type: Code, Attrs: &Attrs{Language: "go", Text: "func main() {\n\tfmt.Println(\"hi\")\n}"}},
		Block{ID: "c2", Type: Code, Attrs: &Attrs{Text: "Markdown fences:\n```\nnested\n````"}},
	)},
	{"equation", doc(Block{ID: "e1", Type: Equation, Attrs: &Attrs{Latex: `\int_0^1 x^2\,dx = \frac{1}{3}`}})},
	{"media", doc(
		Block{ID: "m1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://img.example/cat.png", Alt: "A cat", Caption: "Our \"cat\""}},
		Block{ID: "m2", Type: Media, Attrs: &Attrs{Kind: "video", Src: "https://video.example/v (1).mp4", Alt: "Launch video"}},
	)},
	{"table", doc(
		Block{ID: "t1", Type: Table, Attrs: &Attrs{Header: true}, Rows: []TableRow{
			{Cells: [][]Run{txt("Name"), txt("Price")}},
			{Cells: [][]Run{txt("tea | coffee"), {{Text: "3", Marks: []Mark{Bold}}}}},
			{Cells: [][]Run{txt("cake"), txt("4\nor 5")}},
		}},
		Block{ID: "t2", Type: Table, Rows: []TableRow{{Cells: [][]Run{txt("no"), txt("header")}}, {Cells: [][]Run{txt("short")}}}},
	)},
	{"callout", doc(Block{ID: "k1", Type: Callout, Attrs: &Attrs{Icon: "💡"}, RichText: []Run{{Text: "Tip: "}, {Text: "save often", Marks: []Mark{Bold}}}})},
	{"details", doc(Block{ID: "d1", Type: Details, RichText: txt("Show <more>"), Children: []Block{
		{ID: "d1p", Type: Paragraph, RichText: txt("Hidden text.")},
		{ID: "d1c", Type: Code, Attrs: &Attrs{Text: "x := 1"}},
	}})},
	{"columns", doc(Block{ID: "col", Type: Columns, Cols: []Column{
		{Blocks: []Block{{ID: "left", Type: Paragraph, RichText: txt("Left column")}}},
		{Blocks: []Block{{ID: "right", Type: Heading, Attrs: &Attrs{Level: 3}, RichText: txt("Right column")}}},
	}})},
	{"bookmark", doc(Block{ID: "bm", Type: Bookmark, Attrs: &Attrs{URL: "https://go.dev/doc/", Title: "Go docs", Description: "Everything about Go."}})},
	{"file", doc(Block{ID: "f1", Type: File, Attrs: &Attrs{Src: "https://files.example/report.pdf", Name: "report.pdf", Size: 1536000}})},
	{"embed", doc(Block{ID: "em", Type: Embed, Attrs: &Attrs{URL: "https://www.youtube.com/watch?v=abc", Provider: "youtube"}})},
	{"divider", doc(Block{ID: "p1", Type: Paragraph, RichText: txt("Before")}, Block{ID: "hr", Type: Divider}, Block{ID: "p2", Type: Paragraph, RichText: txt("After")})},
}

func doc(bs ...Block) Document { return Document{SchemaVersion: SchemaVersion, Blocks: bs} }

func TestRenderGolden(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, "render/"+tc.name+".txt", RenderText(tc.doc))
			golden(t, "render/"+tc.name+".md", RenderMarkdown(tc.doc))
		})
	}
}

func TestRenderDeterministic(t *testing.T) {
	for _, tc := range renderCases {
		if RenderMarkdown(tc.doc) != RenderMarkdown(tc.doc.Clone()) || RenderText(tc.doc) != RenderText(tc.doc.Clone()) {
			t.Errorf("%s: rendering differs between equal documents", tc.name)
		}
	}
}

func TestRenderTextPlaceholders(t *testing.T) {
	cases := []struct {
		block Block
		want  string
	}{
		{Block{Type: Media, Attrs: &Attrs{Kind: "image", Src: "a.png", Alt: "diagram"}}, "[image: diagram]"},
		{Block{Type: Media, Attrs: &Attrs{Kind: "video", Src: "v.mp4"}}, "[video: v.mp4]"},
		{Block{Type: File, Attrs: &Attrs{Name: "a.zip", Size: 2048}}, "[file: a.zip, 2.0 KiB]"},
		{Block{Type: Embed, Attrs: &Attrs{URL: "https://x.example"}}, "[embed: https://x.example]"},
		{Block{Type: List, Attrs: &Attrs{Ordered: true}, Items: []ListItem{{RichText: txt("a"), Items: []ListItem{{RichText: txt("b")}}}}}, "1. a\n   1. b"},
		{Block{Type: Table, Rows: []TableRow{{Cells: [][]Run{txt("a"), txt("b")}}}}, "a\tb"},
		{Block{Type: Paragraph, RichText: []Run{{Text: "x = "}, {Equation: `\pi`}}}, `x = \pi`},
	}
	for _, c := range cases {
		if got := strings.TrimSuffix(RenderText(doc(c.block)), "\n"); got != c.want {
			t.Errorf("RenderText(%s) = %q, want %q", c.block.Type, got, c.want)
		}
	}
}

func TestRenderMarkdownCodeFence(t *testing.T) {
	md := RenderMarkdown(doc(Block{ID: "c", Type: Code, Attrs: &Attrs{Text: "a ```` b"}}))
	if !strings.HasPrefix(md, "`````\n") {
		t.Fatalf("fence must be longer than the backtick run inside, got:\n%s", md)
	}
	d, _, err := ImportMarkdown([]byte(md))
	if err != nil || len(d.Blocks) != 1 || d.Blocks[0].Attrs.Text != "a ```` b" {
		t.Fatalf("code did not round-trip: %+v %v", d.Blocks, err)
	}
}
