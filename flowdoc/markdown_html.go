package flowdoc

import (
	"fmt"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// Raw HTML in imported Markdown. A document holds no HTML, so the import
// keeps what a reader of the rendered page would see: images become media
// blocks, text becomes paragraphs with its line breaks, <script> and
// <style> go with their content. What is dropped is reported.

var (
	// scriptElement is a <script> or <style> element with its content, or
	// an opening tag whose element runs to the end of the block.
	scriptElement = regexp.MustCompile(`(?is)<(script|style)\b[^>]*>.*?(?:</\s*(?:script|style)\s*>|$)`)
	imgTag        = regexp.MustCompile(`(?is)<img\b(?:[^>"']|"[^"]*"|'[^']*')*>`)
	htmlAttr      = regexp.MustCompile(`(?s)([A-Za-z_:][-A-Za-z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>` + "`" + `]+)))?`)
	// lineTags end a line of text: <br> and the block-level elements.
	lineTags = regexp.MustCompile(`(?i)<(?:br|/?(?:p|div|h[1-6]|li|ul|ol|dl|dt|dd|tr|table|thead|tbody|blockquote|pre|section|article|header|footer|nav|aside|center|figure|figcaption|hr|picture))\b[^>]*>`)
	cellTags = regexp.MustCompile(`(?i)</?t[dh]\b[^>]*>`)
	// htmlCommentRE is an HTML comment, which a reader does not see.
	htmlCommentRE = regexp.MustCompile(`(?s)<!--.*?(?:-->|$)`)
	tagName       = regexp.MustCompile(`<\/?([A-Za-z][A-Za-z0-9-]*)`)
	// textTags are the elements whose text a paragraph holds as a reader
	// sees it: line breaks, paragraphs and text styles.
	textTags = map[string]bool{"p": true, "br": true, "div": true, "span": true, "center": true, "b": true, "strong": true,
		"i": true, "em": true, "u": true, "ins": true, "s": true, "del": true, "strike": true, "code": true, "small": true, "sub": true, "sup": true}
)

// onlyTextTags reports whether the HTML s holds nothing but text, comments
// and textTags.
func onlyTextTags(s string) bool {
	for _, m := range tagName.FindAllStringSubmatch(htmlCommentRE.ReplaceAllString(s, ""), -1) {
		if !textTags[strings.ToLower(m[1])] {
			return false
		}
	}
	return true
}

var ()

// htmlImage is what an <img> tag says about its image.
type htmlImage struct {
	src, alt, title string
	other           []string // attributes a media block has no place for
}

func (h htmlImage) block(id string) Block {
	return Block{ID: id, Type: Media, Attrs: &Attrs{Kind: "image", Src: h.src, Alt: h.alt, Caption: h.title}}
}

// parseImgTag reads one <img …> tag (the whole of s).
func parseImgTag(s string) (htmlImage, bool) {
	s = strings.TrimSpace(s)
	if !imgTag.MatchString(s) || imgTag.FindStringIndex(s)[1] != len(s) {
		return htmlImage{}, false
	}
	var h htmlImage
	body := strings.TrimSuffix(strings.TrimSuffix(s[len("<img"):], ">"), "/")
	for _, m := range htmlAttr.FindAllStringSubmatch(body, -1) {
		v := html.UnescapeString(m[2] + m[3] + m[4])
		switch strings.ToLower(m[1]) {
		case "src":
			h.src = strings.TrimSpace(v)
		case "alt":
			h.alt = strings.Join(strings.Fields(v), " ")
		case "title":
			h.title = strings.Join(strings.Fields(v), " ")
		default:
			h.other = append(h.other, strings.ToLower(m[1]))
		}
	}
	return h, h.src != ""
}

func rawHTMLText(c *ast.RawHTML, src []byte) string {
	var b strings.Builder
	for i := 0; i < c.Segments.Len(); i++ {
		s := c.Segments.At(i)
		b.Write(s.Value(src))
	}
	return b.String()
}

// htmlLines is the text of an HTML fragment as a reader sees it: tags
// removed, references resolved, blanks collapsed, a line break for <br>
// and at block-level elements, empty lines dropped.
func htmlLines(s string) string {
	s = lineTags.ReplaceAllString(s, "\n")
	s = cellTags.ReplaceAllString(s, " ")
	s = htmlTag.ReplaceAllString(s, "")
	var lines []string
	for _, l := range strings.Split(html.UnescapeString(s), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// htmlBlock converts a raw HTML block: each <img> with an allowed source
// becomes a media block, the text around them paragraphs; <script> and
// <style> are dropped with their content. A block that is nothing but
// <img src alt title> tags loses nothing and is not reported.
func (im *importer) htmlBlock(n *ast.HTMLBlock) []Block {
	raw := im.rawText(n)
	for _, m := range scriptElement.FindAllString(raw, -1) {
		im.report(n, UnsupportedScript, m, "dropped with its content: a document holds no scripts or styles")
	}
	rest := scriptElement.ReplaceAllString(raw, "")
	if strings.TrimSpace(rest) == "" {
		return nil
	}
	if !imgTag.MatchString(rest) && !onlyTextTags(rest) {
		// Markup a document has no block for (a table, a <div>, a
		// <pre> …) stays visible as its source.
		im.report(n, UnsupportedHTML, raw, "kept as a code block of its HTML source")
		return []Block{{ID: im.id(), Type: Code, Attrs: &Attrs{Language: "html", Text: strings.TrimRight(rest, "\n")}}}
	}
	var out []Block
	var dropped []string
	var pending strings.Builder // HTML not yet made a paragraph
	paragraphs, images, last := 0, 0, 0
	flush := func() {
		if t := htmlLines(pending.String()); t != "" {
			out = append(out, Block{ID: im.id(), Type: Paragraph, RichText: []Run{{Text: t}}})
			paragraphs++
		}
		pending.Reset()
	}
	for _, loc := range imgTag.FindAllStringIndex(rest, -1) {
		pending.WriteString(rest[last:loc[0]])
		last = loc[1]
		h, ok := parseImgTag(rest[loc[0]:loc[1]])
		if !ok {
			continue // an <img> without a source: nothing to show
		}
		if rule := checkMediaSrc(h.src); rule != "" {
			im.report(n, UnsupportedInlineImage, h.src, "image kept as its alt text: "+rule)
			pending.WriteString(" " + html.EscapeString(h.alt) + " ")
			continue
		}
		flush()
		out = append(out, h.block(im.id()))
		images++
		dropped = append(dropped, h.other...)
	}
	pending.WriteString(rest[last:])
	onlyImages := strings.TrimSpace(pending.String()) == "" && images > 0
	flush()
	if onlyImages && len(dropped) == 0 {
		return out
	}
	var notes []string
	if images > 0 {
		notes = append(notes, fmt.Sprintf("%d image(s) imported as media blocks", images))
	}
	if len(dropped) > 0 {
		notes = append(notes, "<img> attributes dropped: "+strings.Join(dropped, ", "))
	}
	switch {
	case paragraphs == 1:
		notes = append(notes, "tags dropped, text kept as a paragraph")
	case paragraphs > 1:
		notes = append(notes, "tags dropped, text kept as paragraphs")
	case images == 0:
		notes = append(notes, "dropped: no text")
	case !onlyImages:
		notes = append(notes, "the tags around them dropped")
	}
	im.report(n, UnsupportedHTML, raw, strings.Join(notes, "; "))
	return out
}
