package flowdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// checkStructure asserts the structural rules an imported document keeps:
// unique valid ids (nested blocks included), heading levels 1..4, no
// Validate problems, and nothing for Sanitize to change.
func checkStructure(t testing.TB, d Document) {
	t.Helper()
	seen := map[string]bool{}
	var walk func(bs []Block, path string)
	walk = func(bs []Block, path string) {
		for i, b := range bs {
			p := fmt.Sprintf("%s[%d]", path, i)
			if !validID.MatchString(b.ID) || seen[b.ID] {
				t.Fatalf("%s: id %q is invalid or repeated", p, b.ID)
			}
			seen[b.ID] = true
			if b.Type == Heading && (b.Attrs == nil || b.Attrs.Level < 1 || b.Attrs.Level > MaxHeadingLevel) {
				t.Fatalf("%s: heading level out of 1..6: %+v", p, b.Attrs)
			}
			walk(b.Children, p+".children")
			for j, c := range b.Cols {
				walk(c.Blocks, fmt.Sprintf("%s.columns[%d]", p, j))
			}
		}
	}
	walk(d.Blocks, "blocks")
	if ps := Validate(d, Limits{MaxBlocks: 1 << 30, MaxBytes: 1 << 40}); len(ps) > 0 {
		t.Fatalf("imported document is invalid: %v", ps)
	}
	if !bytes.Equal(CanonicalJSON(Sanitize(d)), CanonicalJSON(d)) {
		t.Fatalf("imported document changes under Sanitize:\n%s\n%s", CanonicalJSON(d), CanonicalJSON(Sanitize(d)))
	}
}

func TestImportMarkdownGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(goldenRoot, "markdown/sample.md"))
	if err != nil {
		t.Fatal(err)
	}
	d, unsupported, err := ImportMarkdown(src)
	if err != nil {
		t.Fatal(err)
	}
	checkStructure(t, d)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, CanonicalJSON(d), "", "  "); err != nil {
		t.Fatal(err)
	}
	golden(t, "markdown/sample.json", pretty.String()+"\n")
	var u bytes.Buffer
	enc := json.NewEncoder(&u)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(unsupported); err != nil {
		t.Fatal(err)
	}
	golden(t, "markdown/sample.unsupported.json", u.String())
	golden(t, "markdown/sample.rendered.md", RenderMarkdown(d))

	// The same input gives the same document.
	again, _, _ := ImportMarkdown(src)
	if !bytes.Equal(CanonicalJSON(d), CanonicalJSON(again)) {
		t.Fatal("importing the same Markdown twice gave different documents")
	}
}

func TestImportMarkdownMapping(t *testing.T) {
	cases := []struct {
		name, md  string
		want      []Block
		wantKinds []string
	}{
		{"paragraph", "Hello *world*", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{{Text: "Hello "}, {Text: "world", Marks: []Mark{Italic}}}}}, nil},
		{"nested marks", "***both*** ~~gone~~ `x`", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{
			{Text: "both", Marks: []Mark{Bold, Italic}}, {Text: " "}, {Text: "gone", Marks: []Mark{Strike}}, {Text: " "}, {Text: "x", Marks: []Mark{CodeMark}}}}}, nil},
		{"heading six", "###### Six", []Block{{ID: "b1", Type: Heading, Attrs: &Attrs{Level: 6}, RichText: txt("Six")}}, nil},
		{"list start", "3. three\n4. four", []Block{{ID: "b1", Type: List, Attrs: &Attrs{Ordered: true, Start: 3}, Items: []ListItem{{RichText: txt("three")}, {RichText: txt("four")}}}}, nil},
		{"setext", "Title\n=====", []Block{{ID: "b1", Type: Heading, Attrs: &Attrs{Level: 1}, RichText: txt("Title")}}, nil},
		{"unsafe link", "[click](javascript:alert(1))", []Block{{ID: "b1", Type: Paragraph, RichText: txt("click")}}, []string{UnsupportedLinkRefused}},
		{"unsafe link hidden by tab", "[click](java&#9;script:alert(1))", []Block{{ID: "b1", Type: Paragraph, RichText: txt("click")}}, []string{UnsupportedLinkRefused}},
		{"relative link", "[up](../x.md)", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{{Text: "up", Link: "../x.md"}}}}, nil},
		{"refused link", "[up](javascript:x)", []Block{{ID: "b1", Type: Paragraph, RichText: txt("up")}}, []string{UnsupportedLinkRefused}},
		{"mailto autolink", "<me@x.example>", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{{Text: "me@x.example", Link: "mailto:me@x.example"}}}}, nil},
		{"empty equation", "$$\n$$", nil, []string{UnsupportedEmptyEquation}},
		{"code language", "```c++ extra words\nx\n```", []Block{{ID: "b1", Type: Code, Attrs: &Attrs{Language: "c++", Text: "x"}}}, nil},
		{"empty table", "| |\n|-|", nil, []string{UnsupportedTableSize}},
		{"ragged table", "| a | b |\n|---|---|\n| 1 |", []Block{{ID: "b1", Type: Table, Attrs: &Attrs{Header: true}, Rows: []TableRow{{Cells: [][]Run{txt("a"), txt("b")}}, {Cells: [][]Run{txt("1"), nil}}}}}, nil},
		{"image alone", "![a](https://x.example/a.png)", []Block{{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://x.example/a.png", Alt: "a"}}}, nil},
		{"video link alone", "[Launch](https://v.example/a.mp4)", []Block{{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "video", Src: "https://v.example/a.mp4", Alt: "Launch"}}}, nil},
		{"link title", "[a](https://x.example \"T\")", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{{Text: "a", Link: "https://x.example", Title: "T"}}}}, nil},
		{"link to a path with a blank", "[a](</my uri>)", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{{Text: "a", Link: "/my%20uri"}}}}, nil},
		{"unsafe image", "![a](javascript:x)", []Block{{ID: "b1", Type: Paragraph, RichText: txt("a")}}, []string{UnsupportedInlineImage}},
		{"thematic break", "a\n\n***\n\nb\n\n___", []Block{{ID: "b1", Type: Paragraph, RichText: txt("a")}, {ID: "b2", Type: Divider}, {ID: "b3", Type: Paragraph, RichText: txt("b")}, {ID: "b4", Type: Divider}}, nil},
		{"html table", "<table><tr><td>a &amp; b</td></tr></table>", []Block{{ID: "b1", Type: Code, Attrs: &Attrs{Language: "html", Text: "<table><tr><td>a &amp; b</td></tr></table>"}}}, []string{UnsupportedHTML}},
		{"html block", "<div>\nkept <i>text</i>\n</div>", []Block{{ID: "b1", Type: Paragraph, RichText: txt("kept text")}}, []string{UnsupportedHTML}},
		{"task list", "- [x] done\n- [ ] open", []Block{{ID: "b1", Type: List, Items: []ListItem{{Task: TaskDone, RichText: txt("done")}, {Task: TaskOpen, RichText: txt("open")}}}}, nil},
		{"windows line ends", "```\r\ncode\r\nmore\r\n```\r\n\r\na  \r\nb", []Block{{ID: "b1", Type: Code, Attrs: &Attrs{Text: "code\nmore"}},
			{ID: "b2", Type: Paragraph, RichText: txt("a\nb")}}, nil},
		{"indented code", "    x := 1\n    y := 2", []Block{{ID: "b1", Type: Code, Attrs: &Attrs{Text: "x := 1\ny := 2"}}}, nil},
		{"math", "$$\na+b\n$$\n\nso $c$ holds", []Block{{ID: "b1", Type: Equation, Attrs: &Attrs{Latex: "a+b"}},
			{ID: "b2", Type: Paragraph, RichText: []Run{{Text: "so "}, {Equation: "c"}, {Text: " holds"}}}}, nil},
		{"dollars stay text", "costs $5 and $10", []Block{{ID: "b1", Type: Paragraph, RichText: txt("costs $5 and $10")}}, nil},
		{"table without header", "| | |\n|-|-|\n| a | b |", []Block{{ID: "b1", Type: Table, Rows: []TableRow{{Cells: [][]Run{txt("a"), txt("b")}}}}}, nil},
		{"callout", "> ⚠️ Careful", []Block{{ID: "b1", Type: Callout, Attrs: &Attrs{Icon: "⚠️"}, RichText: txt("Careful")}}, nil},
		{"details", "<details>\n<summary>More</summary>\n\nInside.\n\n</details>", []Block{{ID: "b1", Type: Details, RichText: txt("More"),
			Children: []Block{{ID: "b2", Type: Paragraph, RichText: txt("Inside.")}}}}, nil},
		{"quote with list", "> intro\n> - item", []Block{{ID: "b1", Type: Quote, RichText: txt("intro"),
			Children: []Block{{ID: "b2", Type: List, Items: []ListItem{{RichText: txt("item")}}}}}}, nil},
		{"quote of two paragraphs and a nested quote", "> one\n>\n> two\n>\n> > inner", []Block{{ID: "b1", Type: Quote, RichText: txt("one"),
			Children: []Block{{ID: "b2", Type: Paragraph, RichText: txt("two")}, {ID: "b3", Type: Quote, RichText: txt("inner")}}}}, nil},
		{"loose list whose item holds code", "- one\n\n  ```\n  x\n  ```\n- two", []Block{{ID: "b1", Type: List, Attrs: &Attrs{Loose: true},
			Items: []ListItem{{RichText: txt("one"), Blocks: []Block{{ID: "b2", Type: Code, Attrs: &Attrs{Text: "x"}}}}, {RichText: txt("two")}}}}, nil},
		// What writers write that has no block of its own.
		{"img in a div", "<div align=\"center\">\n  <img src=\"https://x.example/logo.png\" alt=\"Logo\" width=\"200\">\n</div>",
			[]Block{{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://x.example/logo.png", Alt: "Logo"}}}, []string{UnsupportedHTML}},
		{"img tag alone", "<img src=\"https://x.example/a.png\" alt=\"A &amp; B\" title=\"Cap\">",
			[]Block{{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://x.example/a.png", Alt: "A & B", Caption: "Cap"}}}, nil},
		{"figure", "<figure>\n<img src=\"https://x.example/a.png\" alt=\"A\">\n<figcaption>The caption.</figcaption>\n</figure>",
			[]Block{{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://x.example/a.png", Alt: "A"}}, {ID: "b2", Type: Paragraph, RichText: txt("The caption.")}}, []string{UnsupportedHTML}},
		{"img with a relative source", "<p>\n<img src=\"logo.png\" alt=\"Logo\"> and text\n</p>",
			[]Block{{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "logo.png", Alt: "Logo"}}, {ID: "b2", Type: Paragraph, RichText: txt("and text")}}, []string{UnsupportedHTML}},
		{"image with a relative source", "![Logo](img/logo.png)", []Block{{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "img/logo.png", Alt: "Logo"}}}, nil},
		{"img with a refused source", "<p>\n<img src=\"javascript:x\" alt=\"Logo\"> and text\n</p>",
			[]Block{{ID: "b1", Type: Paragraph, RichText: txt("Logo and text")}}, []string{UnsupportedInlineImage, UnsupportedHTML}},
		{"img inside text", "see <img src=\"https://x.example/a.png\" alt=\"this\"> here", []Block{{ID: "b1", Type: Paragraph, RichText: txt("see this here")}}, []string{UnsupportedInlineImage}},
		{"html lines", "<p>one<br>two</p>\n<p>three</p>", []Block{{ID: "b1", Type: Paragraph, RichText: txt("one\ntwo\nthree")}}, []string{UnsupportedHTML}},
		{"br with blanks", "red and <br> break", []Block{{ID: "b1", Type: Paragraph, RichText: txt("red and\nbreak")}}, nil},
		{"br at a line end", "one<br>\ntwo<BR/>\nthree", []Block{{ID: "b1", Type: Paragraph, RichText: txt("one\ntwo\nthree")}}, nil},
		{"blanks written as references stay", "a&#32;<br>&#32;b", []Block{{ID: "b1", Type: Paragraph, RichText: txt("a \n b")}}, nil},
		{"heading with br", "# a<br>b", []Block{{ID: "b1", Type: Heading, Attrs: &Attrs{Level: 1}, RichText: txt("a\nb")}}, nil},
		{"script block", "<script>alert(1)</script>\n\nafter", []Block{{ID: "b1", Type: Paragraph, RichText: txt("after")}}, []string{UnsupportedScript}},
		{"style in a div", "<div>\n<style>p { color: red }</style>\nkept\n</div>", []Block{{ID: "b1", Type: Paragraph, RichText: txt("kept")}}, []string{UnsupportedScript, UnsupportedHTML}},
		{"inline script", "a <script>alert(1)</script> b", []Block{{ID: "b1", Type: Paragraph, RichText: txt("a b")}}, []string{UnsupportedScript}},
		{"unclosed inline style", "a <style>p{} b", []Block{{ID: "b1", Type: Paragraph, RichText: txt("a ")}}, []string{UnsupportedScript}},
		{"footnote", "Text[^a] and[^b].\n\n[^b]: Second.\n[^a]: First.", []Block{{ID: "b1", Type: Paragraph, RichText: txt("Text[1] and[2].")},
			{ID: "b2", Type: Paragraph, RichText: txt("[1] First.")}, {ID: "b3", Type: Paragraph, RichText: txt("[2] Second.")}}, []string{UnsupportedFootnote, UnsupportedFootnote}},
		{"unreferenced footnote", "Text.\n\n[^z]: Orphan.", []Block{{ID: "b1", Type: Paragraph, RichText: txt("Text.")}, {ID: "b2", Type: Paragraph, RichText: txt("[1] Orphan.")}}, []string{UnsupportedFootnote}},
		{"footnote of a code block", "x[^c]\n\n[^c]:\n    ```\n    code\n    ```", []Block{{ID: "b1", Type: Paragraph, RichText: txt("x[1]")},
			{ID: "b2", Type: Paragraph, RichText: txt("[1]")}, {ID: "b3", Type: Code, Attrs: &Attrs{Text: "code"}}}, []string{UnsupportedFootnote}},
		{"footnote defined in a quote", "> q[^1]\n>\n> [^1]: n", []Block{{ID: "b1", Type: Quote, RichText: txt("q[1]")}, {ID: "b2", Type: Paragraph, RichText: txt("[1] n")}}, []string{UnsupportedFootnote}},
		{"undefined footnote stays text", "a[^x]", []Block{{ID: "b1", Type: Paragraph, RichText: txt("a[^x]")}}, nil},
		{"cjk lines join", "中文第一行\n第二行", []Block{{ID: "b1", Type: Paragraph, RichText: txt("中文第一行第二行")}}, nil},
		{"after cjk punctuation", "> 千里之行，始于足下。\n> — 古语", []Block{{ID: "b1", Type: Quote, RichText: txt("千里之行，始于足下。— 古语")}}, nil},
		{"cjk and shared punctuation", "他说\n“好”\n然后", []Block{{ID: "b1", Type: Paragraph, RichText: txt("他说“好”然后")}}, nil},
		{"kana", "日本語の\nテキスト", []Block{{ID: "b1", Type: Paragraph, RichText: txt("日本語のテキスト")}}, nil},
		{"cjk then latin keeps the blank", "中文\nEnglish\n中文", []Block{{ID: "b1", Type: Paragraph, RichText: txt("中文 English 中文")}}, nil},
		{"hangul keeps the blank", "한국어는\n띄어쓰기", []Block{{ID: "b1", Type: Paragraph, RichText: txt("한국어는 띄어쓰기")}}, nil},
		{"cjk across marks", "**中文**\n*第二*", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{{Text: "中文", Marks: []Mark{Bold}}, {Text: "第二", Marks: []Mark{Italic}}}}}, nil},
		{"yaml front matter", "---\ntitle: \"x\"\ntags: [a]\n---\n\nBody", []Block{{ID: "b1", Type: Code, Attrs: &Attrs{Language: "yaml", Text: "title: \"x\"\ntags: [a]"}},
			{ID: "b2", Type: Paragraph, RichText: txt("Body")}}, []string{UnsupportedFrontMatter}},
		{"toml front matter", "+++\ntitle = \"x\"\n+++\nBody", []Block{{ID: "b1", Type: Code, Attrs: &Attrs{Language: "toml", Text: "title = \"x\""}},
			{ID: "b2", Type: Paragraph, RichText: txt("Body")}}, []string{UnsupportedFrontMatter}},
		{"underline tag", "<u>under</u> <br> x", []Block{{ID: "b1", Type: Paragraph, RichText: []Run{{Text: "under", Marks: []Mark{Underline}}, {Text: "\nx"}}}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, un, err := ImportMarkdown([]byte(c.md))
			if err != nil {
				t.Fatal(err)
			}
			want := Document{SchemaVersion: SchemaVersion, Blocks: c.want}
			if got, w := string(CanonicalJSON(d)), string(CanonicalJSON(want)); got != w {
				t.Errorf("import of %q:\n got  %s\n want %s", c.md, got, w)
			}
			var kinds []string
			for _, u := range un {
				kinds = append(kinds, u.Kind)
				if u.Line < 1 {
					t.Errorf("unsupported %+v has no line", u)
				}
			}
			if !reflect.DeepEqual(kinds, c.wantKinds) {
				t.Errorf("unsupported kinds = %v, want %v (%+v)", kinds, c.wantKinds, un)
			}
			// What the import made survives rendering and importing again.
			md := RenderMarkdown(d)
			if back, _, _ := ImportMarkdown([]byte(md)); !bytes.Equal(CanonicalJSON(back), CanonicalJSON(d)) {
				t.Errorf("import -> render -> import of %q changed the document:\n%s\n got  %s\n want %s", c.md, md, CanonicalJSON(back), CanonicalJSON(d))
			}
		})
	}
}

func TestImportMarkdownReportsLines(t *testing.T) {
	_, un, err := ImportMarkdown([]byte("para\n\n---\n\n[a](javascript:x)\n\n<x-y>\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(un) != 2 || un[0].Line != 5 || un[1].Line != 7 {
		t.Fatalf("want a refused link on line 5 and an HTML block on line 7, got %+v", un)
	}
}

func TestImportMarkdownRejectsInvalidUTF8(t *testing.T) {
	_, _, err := ImportMarkdown([]byte("ok \xff bad"))
	if err == nil || !strings.Contains(err.Error(), "UTF-8") || !strings.Contains(err.Error(), "offset 3") {
		t.Fatalf("want a UTF-8 error naming offset 3, got %v", err)
	}
}

// textBlocks is the text of every paragraph, heading and quote of d, in
// order, nested ones included.
func textBlocks(d Document) []string {
	var out []string
	var walk func(bs []Block)
	walk = func(bs []Block) {
		for _, b := range bs {
			if b.Type.IsText() {
				out = append(out, string(b.Type)+": "+PlainText(b.RichText))
			}
			walk(b.Children)
			for _, c := range b.Cols {
				walk(c.Blocks)
			}
		}
	}
	walk(d.Blocks)
	return out
}

func TestMarkdownRoundTripText(t *testing.T) {
	tricky := doc(
		Block{ID: "a", Type: Paragraph, RichText: txt("  leading blanks, trailing  ")},
		Block{ID: "b", Type: Paragraph, RichText: txt("# not a heading\n> not a quote\n+ not a list\n10) not ordered\n=== not setext")},
		Block{ID: "c", Type: Heading, Attrs: &Attrs{Level: 2}, RichText: txt("ends with hashes ##")},
		Block{ID: "d", Type: Quote, RichText: []Run{{Text: "x*"}, {Text: "y", Marks: []Mark{Bold}}, {Text: "*z_ "}, {Text: "spaced", Marks: []Mark{Italic}}, {Text: " end"}}},
		Block{ID: "e", Type: Paragraph, RichText: []Run{{Text: "see "}, {Text: "the ", Link: "https://a.example/(x)"}, {Text: "docs", Marks: []Mark{Bold}, Link: "https://a.example/(x)"}, {Text: "!"}}},
		Block{ID: "f", Type: Paragraph, RichText: txt("&copy; &#35; \\* <not-html> $not math$ ~~no~~ http://x.example")},
		Block{ID: "g", Type: Paragraph, RichText: []Run{{Text: "a", Marks: []Mark{Bold}}, {Text: "b", Marks: []Mark{Italic}}, {Text: "c", Marks: []Mark{Strike}}, {Text: "d", Marks: []Mark{Bold, Underline}}}},
		Block{ID: "h", Type: Paragraph, RichText: txt("中文，日本語、한국어 👍🏽 e\u0301")},
		Block{ID: "i", Type: Paragraph, RichText: []Run{{Text: "wow!"}, {Text: "link", Link: "https://x.example"}, {Text: " and "}, {Equation: "n"}, {Text: "2 items"}}},
		Block{ID: "j", Type: Paragraph, RichText: []Run{{Text: "x", Link: "https://x.example"}, {Text: " is no task"}}},
	)
	cases := append([]struct {
		name string
		doc  Document
	}{{"tricky", tricky}}, renderCases...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			md := RenderMarkdown(c.doc)
			back, _, err := ImportMarkdown([]byte(md))
			if err != nil {
				t.Fatal(err)
			}
			checkStructure(t, back)
			// Blocks written as links (video, bookmark, file, embed) come
			// back as extra paragraphs; every text block must come back
			// unchanged and in order.
			want, got := textBlocks(c.doc), textBlocks(back)
			if !isSubsequence(want, got) {
				t.Errorf("text changed through Markdown:\n%s\n got  %q\n want %q", md, got, want)
			}
		})
	}
	// Documents of text blocks keep their marks and links exactly.
	back, _, _ := ImportMarkdown([]byte(RenderMarkdown(tricky)))
	for i := range tricky.Blocks {
		tricky.Blocks[i].ID = back.Blocks[i].ID
	}
	if got, want := string(CanonicalJSON(back)), string(CanonicalJSON(tricky)); got != want {
		t.Errorf("rich text changed through Markdown:\n got  %s\n want %s", got, want)
	}
}

func isSubsequence(sub, s []string) bool {
	i := 0
	for _, x := range s {
		if i < len(sub) && sub[i] == x {
			i++
		}
	}
	return i == len(sub)
}

func TestMarkdownRoundTripMediaAndCode(t *testing.T) {
	d := doc(
		Block{ID: "b1", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://img.example/a_(b).png", Alt: "An [alt]", Caption: "A \"caption\""}},
		Block{ID: "b2", Type: Media, Attrs: &Attrs{Kind: "video", Src: "https://v.example/clip.webm", Alt: "Clip", Caption: "Cap"}},
		Block{ID: "b3", Type: Code, Attrs: &Attrs{Language: "python", Text: "def f():\n    return '```'"}},
		Block{ID: "b4", Type: Equation, Attrs: &Attrs{Latex: `\sum_{i=1}^n i = \frac{n(n+1)}{2}`}},
		Block{ID: "b5", Type: Table, Attrs: &Attrs{Header: true}, Rows: []TableRow{{Cells: [][]Run{txt("a|b"), txt("c")}}, {Cells: [][]Run{{{Text: "x|y", Marks: []Mark{CodeMark}}}, txt("2\n3")}}}},
		Block{ID: "b6", Type: Callout, Attrs: &Attrs{Icon: "⚠️"}, RichText: txt("Mind the gap")},
		Block{ID: "b7", Type: Details, RichText: txt("Summary"), Children: []Block{{ID: "b8", Type: Paragraph, RichText: txt("inside")}}},
		Block{ID: "b9", Type: List, Attrs: &Attrs{Ordered: true}, Items: []ListItem{{RichText: txt("one"), Items: []ListItem{{RichText: txt("one.a\nsecond line")}}}, {RichText: txt("two")}}},
		Block{ID: "b10", Type: List, Attrs: &Attrs{Ordered: true}, Items: []ListItem{{RichText: txt("another list")}}},
		Block{ID: "b11", Type: List, Items: []ListItem{{RichText: txt("bullet")}}},
		Block{ID: "b12", Type: List, Items: []ListItem{{RichText: txt("and another")}}},
	)
	md := RenderMarkdown(d)
	back, un, err := ImportMarkdown([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(CanonicalJSON(back)), string(CanonicalJSON(d)); got != want {
		t.Errorf("blocks changed through Markdown:\n%s\n got  %s\n want %s", md, got, want)
	}
	if len(un) != 0 {
		t.Errorf("rendered Markdown should import cleanly, got %+v", un)
	}
}
