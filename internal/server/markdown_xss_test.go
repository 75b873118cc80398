package server

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/renderer/html"
)

// xssPayloads are strings that try to leave Markdown text for HTML, or a
// $ / $$ equation for the text around it.
var xssPayloads = []string{
	`<script>alert(1)</script>`,
	`<img src=x onerror=alert(1)>`,
	`"><svg onload=alert(1)>`,
	`</p><iframe src="javascript:alert(1)"></iframe>`,
	"$$\n<script>alert(1)</script>\n$$",
	"x$$\n\n<img src=x onerror=alert(1)>\n\n$$",
	`$ <b onmouseover=alert(1)>hover</b> $`,
	`x$<img src=x onerror=alert(1)>$`,
	`\$<script>alert(1)</script>`,
	`x\`,
	"```\n<script>alert(1)</script>\n```",
	"~~~\n<script>alert(1)</script>",
	`](javascript:alert(1)) [x](javascript:alert(1))`,
	`<a href="javascript:alert(1)">x</a>`,
	`<!-- --><script>alert(1)</script>`,
	`<![CDATA[<script>alert(1)</script>]]>`,
	`<?php echo 1 ?><style>*{}</style>`,
	"\n<div onclick=alert(1)>x</div>\n",
	`&lt;script&gt;alert(1)&lt;/script&gt;`,
	"    <script>alert(1)</script>",
}

// xssPlacements put a payload into an article where its author could.
var xssPlacements = []struct {
	kind string
	make func(p string) (title string, blocks []flowdoc.Block)
}{
	{"title", func(p string) (string, []flowdoc.Block) { return p, []flowdoc.Block{para("b1", "text")} }},
	{"equation", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Equation, Attrs: &flowdoc.Attrs{Latex: p}}}
	}},
	{"inline equation", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "see "}, {Equation: p}, {Text: " and $"}, {Equation: p}, {Text: "2"}}}}
	}},
	{"code fence", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Text: p, Language: p}}}
	}},
	{"link", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: p, Link: "https://x.example/" + p}}}}
	}},
	{"image alt", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: "https://x.example/a.png", Alt: p, Caption: p}}}
	}},
	{"heading", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 2}, RichText: []flowdoc.Run{{Text: p}}}}
	}},
	{"code span", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: p, Marks: []flowdoc.Mark{flowdoc.CodeMark}}}}}
	}},
	{"callout icon", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Callout, Attrs: &flowdoc.Attrs{Icon: p}, RichText: []flowdoc.Run{{Text: p}}}}
	}},
	{"bookmark", func(p string) (string, []flowdoc.Block) {
		return "t", []flowdoc.Block{{ID: "b1", Type: flowdoc.Bookmark, Attrs: &flowdoc.Attrs{URL: "https://x.example/", Title: p, Description: p}}}
	}},
}

var (
	htmlTag  = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>`)
	htmlAttr = regexp.MustCompile(`([a-zA-Z-]+)="([^"]*)"`)
	// safeTags are the tags goldmark writes for Markdown, and the few
	// RenderMarkdown writes itself (<u>, <br>, <details> …).
	safeTags = map[string]bool{"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "a": true, "img": true, "pre": true,
		"code": true, "em": true, "strong": true, "del": true, "u": true, "br": true, "blockquote": true, "ul": true, "ol": true,
		"li": true, "hr": true, "details": true, "summary": true}
	safeAttrs = map[string]bool{"href": true, "src": true, "alt": true, "title": true, "class": true, "start": true}
)

// unsafeHTML returns what in goldmark's HTML could run script or is not
// what Markdown text becomes: a tag outside safeTags, an attribute
// outside safeAttrs, a javascript: URL; "" when there is nothing.
func unsafeHTML(out string) string {
	for _, m := range htmlTag.FindAllStringSubmatch(out, -1) {
		if !safeTags[strings.ToLower(m[2])] {
			return m[0]
		}
		rest := m[3]
		for _, a := range htmlAttr.FindAllStringSubmatch(rest, -1) {
			name := strings.ToLower(a[1])
			if !safeAttrs[name] || strings.HasPrefix(strings.ToLower(strings.TrimSpace(a[2])), "javascript:") {
				return m[0]
			}
			rest = strings.Replace(rest, a[0], "", 1)
		}
		if strings.Trim(rest, " /") != "" {
			return m[0] // an attribute without quotes
		}
	}
	return ""
}

// TestPublicMarkdownHoldsNoRawHTML: every payload, in every place an
// author can put text, comes out of the public /markdown as text: a
// renderer with default options (goldmark) writes no script, and with
// raw HTML allowed it writes no tag, attribute or URL but those of
// Markdown and the few bare tags RenderMarkdown uses itself — no raw HTML
// of the payload passes.
func TestPublicMarkdownHoldsNoRawHTML(t *testing.T) {
	safe := goldmark.New()
	unsafe := goldmark.New(goldmark.WithRendererOptions(html.WithUnsafe()))
	kinds := map[string]bool{}
	for _, pl := range xssPlacements {
		for _, p := range xssPayloads {
			title, blocks := pl.make(p)
			md, _, err := render(publish.Publication{Title: title}, flowdoc.Document{SchemaVersion: 1, Blocks: blocks}, "markdown")
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			if err := safe.Convert(md, &a); err != nil {
				t.Fatal(err)
			}
			if err := unsafe.Convert(md, &b); err != nil {
				t.Fatal(err)
			}
			if bad := unsafeHTML(a.String()); bad != "" || strings.Contains(a.String(), "<script") {
				kinds[pl.kind] = true
				t.Errorf("%s %q: %s with default options, from\n%s\n→ %s", pl.kind, p, bad, md, a.String())
				continue
			}
			if bad := unsafeHTML(b.String()); bad != "" {
				kinds[pl.kind] = true
				t.Errorf("%s %q: %s in the HTML of\n%s\n→ %s", pl.kind, p, bad, md, b.String())
			}
		}
	}
	if len(kinds) > 0 {
		t.Logf("kinds that let HTML through: %v", kinds)
	}
}

// TestMarkdownEquationsRoundTrip: equations holding "$", "$$" and "<"
// come back from ImportMarkdown as they were written (a bare "$", an
// error in LaTeX math, as "\$").
func TestMarkdownEquationsRoundTrip(t *testing.T) {
	for _, c := range []struct{ latex, back string }{
		{`a<b`, `a<b`},
		{`x<y \le z`, `x<y \le z`},
		{`\$5 + x`, `\$5 + x`},
		{`a$$b`, `a\$\$b`},
		{"x$$\n<script>", `x\$\$` + "\n<script>"},
	} {
		for _, inline := range []bool{false, true} {
			var b flowdoc.Block
			if inline {
				b = flowdoc.Block{ID: "b1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "see "}, {Equation: c.latex}}}
			} else {
				b = flowdoc.Block{ID: "b1", Type: flowdoc.Equation, Attrs: &flowdoc.Attrs{Latex: c.latex}}
			}
			md := flowdoc.RenderMarkdown(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{b}})
			doc, _, err := flowdoc.ImportMarkdown([]byte(md))
			if err != nil {
				t.Fatal(err)
			}
			want := c.back
			if inline {
				want = strings.ReplaceAll(want, "\n", " ")
			}
			var got string
			if bs := doc.Blocks; len(bs) == 1 && inline && len(bs[0].RichText) == 2 {
				got = bs[0].RichText[1].Equation
			} else if len(bs) == 1 && !inline && bs[0].Attrs != nil {
				got = bs[0].Attrs.Latex
			}
			if got != want {
				t.Errorf("latex %q (inline %v) → %q → %+v, want %q", c.latex, inline, md, doc.Blocks, want)
			}
		}
	}
}
