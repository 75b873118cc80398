package flowdoc

import (
	"strings"
	"testing"
)

func TestRenderHTMLEscapesEverythingAndKeepsOnlySafeURLs(t *testing.T) {
	d := Document{SchemaVersion: SchemaVersion, Blocks: []Block{
		{ID: "h", Type: Heading, Attrs: &Attrs{Level: 1}, RichText: []Run{{Text: "<script>alert(1)</script>"}}},
		{ID: "p", Type: Paragraph, RichText: []Run{
			{Text: "bold & ", Marks: []Mark{Bold, Italic}},
			{Text: "click", Link: "javascript:alert(1)"},
			{Text: " ok", Link: "https://example.org/a?b=1&c=\"2\""},
			{Equation: `x<y`},
		}},
		{ID: "m", Type: Media, Attrs: &Attrs{Kind: "image", Src: "data:image/png;base64,AAAA", Alt: `" onerror="x`}},
		{ID: "m2", Type: Media, Attrs: &Attrs{Kind: "image", Src: "https://img.example/x.png", Alt: `a "quoted" alt`, Caption: "<b>cap</b>"}},
		{ID: "c", Type: Code, Attrs: &Attrs{Language: `go" onload="x`, Text: "</code><script>"}},
		{ID: "e", Type: Embed, Attrs: &Attrs{URL: "vbscript:msgbox", Provider: "x"}},
		{ID: "t", Type: Table, Attrs: &Attrs{Header: true}, Rows: []TableRow{{Cells: [][]Run{{{Text: "<th>"}}}}, {Cells: [][]Run{{{Text: "1"}}}}}},
	}}
	out := RenderHTML(d)
	for _, bad := range []string{"<script", `href="javascript`, `src="data`, `href="vbscript`, `onerror="`, `onload="`, "<b>cap"} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{
		`<h2 data-block="h">&lt;script&gt;alert(1)&lt;/script&gt;</h2>`,
		`<strong><em>bold &amp; </em></strong>`,
		`click<a href="https://example.org/a?b=1&amp;c=&#34;2&#34;" rel="nofollow noopener noreferrer"> ok</a>`,
		`<span class="math">x&lt;y</span>`,
		`<img loading="lazy" src="https://img.example/x.png" alt="a &#34;quoted&#34; alt"><figcaption>&lt;b&gt;cap&lt;/b&gt;</figcaption>`,
		`<code class="language-goonloadx">&lt;/code&gt;&lt;script&gt;</code>`,
		`<thead><tr><th>&lt;th&gt;</th></tr></thead><tbody><tr><td>1</td></tr></tbody>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

// Relative links and images are written as they are (the browser resolves
// them against the page); a divider is a rule; headings 5 and 6 share h6
// since the page's title is the h1.
func TestRenderHTMLRelativeDividerHeadings(t *testing.T) {
	d := Document{SchemaVersion: SchemaVersion, Blocks: []Block{
		{ID: "p", Type: Paragraph, RichText: []Run{{Text: "about", Link: "/about"}, {Text: " top", Link: "#top"}, {Text: " evil", Link: "//evil.example/"}}},
		{ID: "hr", Type: Divider},
		{ID: "m", Type: Media, Attrs: &Attrs{Kind: "image", Src: "img/a.png", Alt: "A"}},
		{ID: "h5", Type: Heading, Attrs: &Attrs{Level: 5}, RichText: []Run{{Text: "Five"}}},
		{ID: "h6", Type: Heading, Attrs: &Attrs{Level: 6}, RichText: []Run{{Text: "Six"}}},
		{ID: "ol", Type: List, Attrs: &Attrs{Ordered: true, Start: 3}, Items: []ListItem{{RichText: []Run{{Text: "three"}}}}},
	}}
	out := RenderHTML(d)
	for _, want := range []string{
		`<a href="/about" rel="nofollow noopener noreferrer">about</a>`,
		`<a href="#top" rel="nofollow noopener noreferrer"> top</a>`,
		` evil</p>`,
		`<hr data-block="hr">`,
		`src="img/a.png"`,
		`<h6 data-block="h5">Five</h6>`,
		`<h6 data-block="h6">Six</h6>`,
		`<ol data-block="ol" start="3"><li>three</li>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
