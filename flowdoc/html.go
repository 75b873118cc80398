package flowdoc

import (
	"html"
	"strconv"
	"strings"
)

// RenderHTML renders d as an HTML fragment for a public page. It is
// written from the typed blocks, not through Markdown and an HTML
// sanitizer: a document holds no HTML, so every text and attribute value
// is escaped here and no markup can come from the document. URLs are
// checked again against the document URL policy (see url.go) when they
// are written — a stored version made under an older rule or imported
// from a pack still cannot put a javascript: or data: URL on the page —
// and a URL that fails is written as text, not as a link or a source.
//
// The output holds no script, style or event-handler attribute. Links get
// rel="nofollow noopener noreferrer"; embeds are links (no iframes: a
// page that frames third parties is a choice for the site's templates).
// Equations are written as their LaTeX in <span class="math"> / <div
// class="math"> for a client-side typesetter. Block ids become data-block
// attributes so that a page can address a passage (the reading
// assistant's selection).
func RenderHTML(d Document) string { return RenderHTMLWith(d, HTMLOptions{}) }

// HTMLOptions tune RenderHTMLWith.
type HTMLOptions struct {
	// AssetURL gives the URL under which the page serves the asset with
	// a hex id (the public site's "/assets/<id>"); nil: assets are not
	// served, and media and file blocks naming one are written as their
	// alt text or name.
	AssetURL func(hash string) string
}

// RenderHTMLWith is RenderHTML with options.
func RenderHTMLWith(d Document, o HTMLOptions) string {
	w := htmlWriter{assetURL: o.AssetURL}
	w.blocks(d.Blocks)
	return w.sb.String()
}

type htmlWriter struct {
	sb       strings.Builder
	assetURL func(string) string
}

// source returns the URL to write for the src of a media or file block,
// and whether there is one: a resource URL that passes the policy, or
// the served URL of an asset.
func (w *htmlWriter) source(src string) (string, bool) {
	if h, ok := ParseAssetURL(src); ok {
		if w.assetURL == nil {
			return "", false
		}
		return w.assetURL(h), true
	}
	return src, checkMediaSrc(src) == ""
}

func (w *htmlWriter) s(s string)   { w.sb.WriteString(s) }
func (w *htmlWriter) esc(s string) { w.sb.WriteString(html.EscapeString(s)) }

func (w *htmlWriter) blocks(bs []Block) {
	for i := range bs {
		w.block(bs[i])
	}
}

func (w *htmlWriter) open(tag string, b Block, class string) {
	w.s("<" + tag)
	if b.ID != "" && ValidID(b.ID) {
		w.s(` data-block="`)
		w.esc(b.ID)
		w.s(`"`)
	}
	if class != "" {
		w.s(` class="` + class + `"`)
	}
	w.s(">")
}

func (w *htmlWriter) block(b Block) {
	a := attrsOf(b)
	switch b.Type {
	case Paragraph:
		w.open("p", b, "")
		w.runs(b.RichText)
		w.s("</p>\n")
	case Heading:
		// The page's title is the h1; HTML has no h7, so 5 and 6 share h6.
		tag := "h" + strconv.Itoa(min(max(a.Level, 1)+1, 6))
		w.open(tag, b, "")
		w.runs(b.RichText)
		w.s("</" + tag + ">\n")
	case Quote:
		w.open("blockquote", b, "")
		if len(b.RichText) > 0 || len(b.Children) == 0 {
			w.s("<p>")
			w.runs(b.RichText)
			w.s("</p>")
		}
		w.blocks(b.Children)
		w.s("</blockquote>\n")
	case Callout:
		w.open("aside", b, "callout")
		if a.Icon != "" {
			w.s(`<span class="callout-icon">`)
			w.esc(a.Icon)
			w.s("</span> ")
		}
		w.runs(b.RichText)
		w.s("</aside>\n")
	case List:
		tag := "ul"
		if a.Ordered {
			tag = "ol"
		}
		w.open(tag, b, "")
		if a.Ordered && a.Start > 1 {
			s := w.sb.String() // the open tag gets its start
			w.sb.Reset()
			w.s(s[:len(s)-1] + ` start="` + strconv.Itoa(a.Start) + `">`)
		}
		w.items(b.Items, tag, a.Loose)
		w.s("</" + tag + ">\n")
	case Code:
		w.open("pre", b, "")
		w.s("<code")
		if lang := cssIdent(a.Language); lang != "" {
			w.s(` class="language-` + lang + `"`)
		}
		w.s(">")
		w.esc(a.Text)
		w.s("</code></pre>\n")
	case Equation:
		w.open("div", b, "math")
		w.esc(a.Latex)
		w.s("</div>\n")
	case Media:
		w.open("figure", b, "")
		src, ok := w.source(a.Src)
		switch {
		case ok && a.Kind == "video":
			w.s(`<video controls preload="metadata" src="`)
			w.esc(src)
			w.s(`"></video>`)
		case ok:
			w.s(`<img loading="lazy" src="`)
			w.esc(src)
			w.s(`" alt="`)
			w.esc(a.Alt)
			w.s(`">`)
		default:
			w.esc(firstNonEmpty(a.Alt, a.Caption))
		}
		if a.Caption != "" {
			w.s("<figcaption>")
			w.esc(a.Caption)
			w.s("</figcaption>")
		}
		w.s("</figure>\n")
	case Table:
		w.open("table", b, "")
		rows := b.Rows
		if a.Header && len(rows) > 0 {
			w.s("<thead>")
			w.row(rows[0], "th")
			w.s("</thead>")
			rows = rows[1:]
		}
		w.s("<tbody>")
		for _, r := range rows {
			w.row(r, "td")
		}
		w.s("</tbody></table>\n")
	case Details:
		w.open("details", b, "")
		w.s("<summary>")
		w.runs(b.RichText)
		w.s("</summary>\n")
		w.blocks(b.Children)
		w.s("</details>\n")
	case Columns:
		w.open("div", b, "columns")
		for _, c := range b.Cols {
			w.s(`<div class="column">`)
			w.blocks(c.Blocks)
			w.s("</div>")
		}
		w.s("</div>\n")
	case Bookmark:
		w.open("p", b, "bookmark")
		w.link(a.URL, firstNonEmpty(a.Title, a.URL), false)
		if a.Description != "" {
			w.s(" — ")
			w.esc(a.Description)
		}
		w.s("</p>\n")
	case File:
		w.open("p", b, "file")
		if src, ok := w.source(a.Src); ok && src != a.Src {
			w.s(`<a href="`)
			w.esc(src)
			w.s(`" download>`)
			w.esc(firstNonEmpty(a.Name, "file"))
			w.s("</a>")
		} else {
			w.link(a.Src, firstNonEmpty(a.Name, a.Src), false)
		}
		if a.Size > 0 {
			w.s(" (" + html.EscapeString(humanSize(a.Size)) + ")")
		}
		w.s("</p>\n")
	case Divider:
		w.open("hr", b, "")
		w.s("\n")
	case Embed:
		w.open("p", b, "embed")
		label := a.URL
		if a.Provider != "" {
			label = a.Provider + ": " + a.URL
		}
		w.link(a.URL, label, false)
		w.s("</p>\n")
	default:
		w.open("p", b, "")
		w.runs(b.RichText)
		w.s("</p>\n")
	}
}

// items writes list items; in a loose list each item's text is a
// paragraph.
func (w *htmlWriter) items(items []ListItem, tag string, loose bool) {
	for _, it := range items {
		w.s("<li>")
		switch it.Task {
		case TaskOpen:
			w.s(`<input type="checkbox" disabled> `)
		case TaskDone:
			w.s(`<input type="checkbox" checked disabled> `)
		}
		switch {
		case loose && len(it.RichText) > 0:
			w.s("<p>")
			w.runs(it.RichText)
			w.s("</p>")
		default:
			w.runs(it.RichText)
		}
		w.blocks(it.Blocks)
		if len(it.Items) > 0 {
			w.s("<" + tag + ">")
			w.items(it.Items, tag, loose)
			w.s("</" + tag + ">")
		}
		w.s("</li>")
	}
}

func (w *htmlWriter) row(r TableRow, cell string) {
	w.s("<tr>")
	for _, c := range r.Cells {
		w.s("<" + cell + ">")
		w.runs(c)
		w.s("</" + cell + ">")
	}
	w.s("</tr>")
}

// link writes an anchor to u when u passes the link policy (resource
// policy when resource is set), else the label as text.
func (w *htmlWriter) link(u, label string, resource bool) {
	bad := checkLink(u)
	if resource {
		bad = checkResource(u)
	}
	if bad != "" {
		w.esc(label)
		return
	}
	w.s(`<a href="`)
	w.esc(u)
	w.s(`" rel="nofollow noopener noreferrer">`)
	w.esc(label)
	w.s("</a>")
}

func (w *htmlWriter) runs(runs []Run) {
	for _, r := range sanitizeRuns(runs) {
		if r.Equation != "" {
			w.s(`<span class="math">`)
			w.esc(r.Equation)
			w.s("</span>")
			continue
		}
		var open, close strings.Builder
		for _, m := range r.Marks {
			tag := map[Mark]string{Bold: "strong", Italic: "em", Underline: "u", Strike: "s", CodeMark: "code"}[m]
			if tag == "" {
				continue
			}
			open.WriteString("<" + tag + ">")
			close.WriteString("</" + tag + ">")
		}
		// Marks close in reverse order of opening.
		closing := reverseTags(close.String())
		linked := r.Link != "" && checkLink(r.Link) == ""
		if linked {
			w.s(`<a href="`)
			w.esc(r.Link)
			if r.Title != "" {
				w.s(`" title="`)
				w.esc(r.Title)
			}
			w.s(`" rel="nofollow noopener noreferrer">`)
		}
		w.s(open.String())
		w.esc(r.Text)
		w.s(closing)
		if linked {
			w.s("</a>")
		}
	}
}

// reverseTags reverses a sequence of closing tags "</a></b>" -> "</b></a>".
func reverseTags(s string) string {
	parts := strings.SplitAfter(s, ">")
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	return b.String()
}

// cssIdent keeps the characters of a code language that are safe in a
// class name.
func cssIdent(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '+' || c == '#' {
			return c
		}
		return -1
	}, s)
}
