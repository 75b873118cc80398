package flowdoc

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Unsupported is something in imported Markdown that has no block or mark
// of its own. Line is 1-based; Kind is a stable name (see ImportMarkdown);
// Text is the source it came from, shortened; Note says what the import
// did with it (dropped, kept as text, clamped …).
type Unsupported struct {
	Line int    `json:"line"`
	Kind string `json:"kind"`
	Text string `json:"text"`
	Note string `json:"note,omitempty"`
}

// Kinds of Unsupported.
const (
	UnsupportedHTML          = "html"          // raw HTML block: images and text kept, other markup kept as an html code block
	UnsupportedInlineHTML    = "inline-html"   // raw HTML tag; dropped, text around it kept
	UnsupportedScript        = "script"        // <script> or <style>; dropped with its content
	UnsupportedLinkRefused   = "link-refused"  // link the URL policy refuses (see url.go); text kept
	UnsupportedInlineImage   = "inline-image"  // image inside text; alt text kept
	UnsupportedFootnote      = "footnote"      // definition kept as a paragraph "[n] …" at the end
	UnsupportedFrontMatter   = "front-matter"  // YAML (---) or TOML (+++) header kept as a code block
	UnsupportedNestedQuote   = "nested-quote"  // a quote in a quote nested too deep for blocks, flattened into the outer one
	UnsupportedQuoteContent  = "quote-content" // a block in a quote nested too deep for blocks: text joined, others placed after it
	UnsupportedListContent   = "list-content"  // a block in an item of a list nested too deep for blocks, kept as its text
	UnsupportedListStart     = "list-start"    // ordered list starting at 0, numbered from 1
	UnsupportedTableAlign    = "table-alignment"
	UnsupportedEmptyEquation = "empty-equation" // $$ $$ with nothing inside; dropped
	UnsupportedCodeLanguage  = "code-language"  // info string cut to a valid language
	UnsupportedTableSize     = "table-size"     // columns beyond MaxTableColumns, or no rows
	UnsupportedListDepth     = "list-depth"     // items deeper than MaxListDepth, lifted up
	UnsupportedDetailsDepth  = "details-depth"  // details deeper than MaxDepth, flattened
	UnsupportedNestedMark    = "nested-mark"    // *a *b* c*: the inner emphasis merged into the outer
	UnsupportedOther         = "other"
)

// ImportMarkdown converts CommonMark with GFM tables, strikethrough, task
// lists and footnotes (and $…$ / $$…$$ math) to a document, mapping each
// construct to the nearest block (docs/markdown.md is the full table):
//
//	paragraph, ATX and setext headings, blockquote (its blocks its
//	children; one paragraph starting with an emoji becomes a callout),
//	ordered and bullet lists, loose or tight, with nesting, task items and
//	blocks inside items, fenced and indented code, tables, an image alone
//	in a paragraph (media), <details><summary> (details), $$ (equation),
//	each <img> of an HTML block (media; the rest of the block's text
//	becomes paragraphs, a <br> or block tag a line break), and any other
//	HTML block as a code block of language html holding its source
//
// Inline: emphasis, strong, ~~strike~~, code spans, links and autolinks,
// <u>/<b>/<i>/<s>/<code> tags and $…$ math. A hard break (two blanks or a
// backslash at a line end) and <br> are a "\n" in the text, without the
// blanks around them. A soft line break is a blank, except where
// CommonMark's CJK-friendly rule joins lines without one (see
// softBreakJoins). Links whose scheme is not http, https or mailto
// (javascript:, data: …) are removed, keeping their text. <script> and
// <style> elements are dropped with their content.
//
// Constructs a document has no block for map to the nearest one:
//
//   - front matter (a YAML block between "---" lines, or TOML between
//     "+++" lines, opening the file) becomes a code block of language
//     yaml or toml, so its fields stay visible;
//   - a footnote reference becomes the text "[n]", n numbering the
//     footnotes in the order they are first referenced, and each
//     definition a paragraph (or its blocks) at the end of the document
//     starting "[n] "; a definition nothing references is kept there too,
//     numbered after the others.
//
// Everything without a place of its own in the document is reported in
// the returned []Unsupported with its line, in source order, never
// dropped silently.
//
// Block ids are "b1", "b2", … in document order, so the same input gives
// the same document. The only error is input that is not UTF-8.
func ImportMarkdown(src []byte) (Document, []Unsupported, error) {
	return ImportMarkdownWith(src, ImportOptions{})
}

// ImportMarkdownWith is ImportMarkdown with options (markdown_asset.go).
func ImportMarkdownWith(src []byte, o ImportOptions) (Document, []Unsupported, error) {
	if !utf8.Valid(src) {
		off := 0
		for off < len(src) {
			c, size := utf8.DecodeRune(src[off:])
			if c == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return Document{}, nil, fmt.Errorf("flowdoc: markdown is not valid UTF-8 (first bad byte at offset %d); convert it to UTF-8 and import again", off)
	}
	md := markdownParsers.Get().(goldmark.Markdown)
	defer markdownParsers.Put(md)
	opening, _, _ := bytes.Cut(src, []byte("\n"))
	src, fm := frontMatter(src)
	im := &importer{src: src, images: o.Image}
	root := md.Parser().Parse(text.NewReader(src))
	if fm != "" {
		im.reportAt(0, UnsupportedFrontMatter, strings.TrimSpace(string(opening)), "kept as a "+fm+" code block at the start")
	}
	for i, c := range src {
		if c == '\n' {
			im.lineStarts = append(im.lineStarts, i+1)
		}
	}
	blocks := im.blockList(children(root), 1)
	blocks = append(blocks, im.footnoteBlocks()...)
	im.nextID = 0
	im.renumber(blocks)
	d := Document{SchemaVersion: SchemaVersion, Blocks: blocks}
	sort.SliceStable(im.unsupported, func(i, j int) bool { return im.unsupported[i].Line < im.unsupported[j].Line })
	return d, im.unsupported, nil
}

// markdownParsers are the import's Markdown parsers, each used by one
// import at a time: building one costs more than parsing a paragraph,
// which RenderMarkdown does to check its emphasis.
var markdownParsers = sync.Pool{New: func() any {
	return goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, mathExtension{}),
		// Footnotes without goldmark's transformer, which would drop a
		// definition nothing references: footnoteBlocks places them all.
		goldmark.WithParserOptions(
			parser.WithBlockParsers(util.Prioritized(extension.NewFootnoteBlockParser(), 999)),
			parser.WithInlineParsers(util.Prioritized(extension.NewFootnoteParser(), 101)),
		),
	)
}}

type importer struct {
	src         []byte
	lineStarts  []int // byte offsets where lines 2, 3, … begin
	nextID      int
	unsupported []Unsupported
	footnotes   []*east.FootnoteList // met while converting, placed at the end
	images      func(string) string  // ImportOptions.Image
	task        string               // the task state of the list item being read
}

var frontMatterRE = regexp.MustCompile(`\A(---|\+\+\+)[ \t]*\r?\n(?:(?s:.*?)\r?\n)??(---|\+\+\+|\.\.\.)[ \t]*(?:\r?\n|\z)`)

// frontMatter rewrites front matter opening src as a fenced code block of
// the same lines (so reported line numbers stay true) and names its
// language, yaml or toml; src without front matter comes back as it is.
func frontMatter(src []byte) ([]byte, string) {
	m := frontMatterRE.FindSubmatchIndex(src)
	if m == nil {
		return src, ""
	}
	open, close := string(src[m[2]:m[3]]), string(src[m[4]:m[5]])
	lang := "yaml"
	if open == "+++" {
		lang = "toml"
	}
	if (open == "+++") != (close == "+++") {
		return src, ""
	}
	body := src[m[3]:m[4]]
	fence := strings.Repeat("`", max(3, longestRun(string(body), '`')+1))
	var b bytes.Buffer
	b.WriteString(fence + lang)
	b.Write(body)
	b.WriteString(fence)
	b.Write(src[m[5]:])
	return b.Bytes(), lang
}

// renumber gives blocks the ids b1, b2, … in document order (a block
// before its children), whatever order they were made in.
func (im *importer) renumber(bs []Block) {
	for i := range bs {
		bs[i].ID = im.id()
		for _, n := range bs[i].Nested() {
			im.renumber(*n)
		}
	}
}

func children(n ast.Node) []ast.Node {
	var out []ast.Node
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		out = append(out, c)
	}
	return out
}

func (im *importer) id() string {
	im.nextID++
	return "b" + strconv.Itoa(im.nextID)
}

// pos is the source offset of n, or of its nearest ancestor that has one.
func (im *importer) pos(n ast.Node) int {
	for ; n != nil; n = n.Parent() {
		if p := n.Pos(); p >= 0 {
			return p
		}
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n.Lines().At(0).Start
		}
	}
	return 0
}

func (im *importer) line(pos int) int {
	return sort.SearchInts(im.lineStarts, pos+1) + 1
}

func (im *importer) report(n ast.Node, kind, snippet, note string) {
	im.unsupported = append(im.unsupported, Unsupported{Line: im.line(im.pos(n)), Kind: kind, Text: shorten(snippet), Note: note})
}

// shorten is the start of snippet, at most 80 characters, for a report.
func shorten(snippet string) string {
	snippet = strings.TrimSpace(snippet)
	if r := []rune(snippet); len(r) > 80 {
		snippet = string(r[:79]) + "…"
	}
	return snippet
}

// rawText is the source text of a block node: its lines, or its
// children's.
func (im *importer) rawText(n ast.Node) string {
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		var b bytes.Buffer
		for i := 0; i < n.Lines().Len(); i++ {
			s := n.Lines().At(i)
			b.Write(s.Value(im.src))
		}
		if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
			b.Write(h.ClosureLine.Value(im.src))
		}
		return strings.TrimRight(lineEnds.Replace(b.String()), "\n")
	}
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() == ast.TypeBlock {
			parts = append(parts, im.rawText(c))
		}
	}
	return strings.Join(parts, "\n")
}

var (
	detailsOpen  = regexp.MustCompile(`(?is)^\s*<details(\s[^>]*)?>\s*(?:<summary(?:\s[^>]*)?>(.*?)</summary>)?(.*)$`)
	detailsClose = regexp.MustCompile(`(?i)^\s*</details\s*>\s*$`)
	htmlTag      = regexp.MustCompile(`(?s)<!--.*?-->|<[^>]*>`)
)

// blockList converts sibling block nodes at depth (1 for the top level),
// pairing <details> … </details> HTML blocks into details blocks. Details
// nested deeper than MaxDepth allows are flattened into their parent.
func (im *importer) blockList(nodes []ast.Node, depth int) []Block {
	var out []Block
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if h, ok := n.(*ast.HTMLBlock); ok {
			if m := detailsOpen.FindStringSubmatch(im.rawText(h)); m != nil {
				if end := im.detailsEnd(nodes, i, m[3]); end >= 0 {
					var inner []ast.Node
					if end > i {
						inner = nodes[i+1 : end]
					}
					summary := htmlText(m[2])
					if depth >= MaxDepth {
						im.report(h, UnsupportedDetailsDepth, im.lineText(h), fmt.Sprintf("details nested deeper than %d levels: summary and content kept as paragraphs", MaxDepth))
						if summary != "" {
							out = append(out, Block{ID: im.id(), Type: Paragraph, RichText: []Run{{Text: summary}}})
						}
						out = append(out, im.blockList(inner, depth)...)
					} else {
						b := Block{ID: im.id(), Type: Details}
						if summary != "" {
							b.RichText = []Run{{Text: summary}}
						}
						b.Children = im.blockList(inner, depth+1)
						out = append(out, b)
					}
					i = max(i, end)
					continue
				}
			}
		}
		out = append(out, im.block(n, depth)...)
	}
	return out
}

// detailsEnd finds the HTML block closing the <details> at nodes[i]: its
// index, i itself when the opening block closes it, or -1.
func (im *importer) detailsEnd(nodes []ast.Node, i int, rest string) int {
	rest = strings.TrimSpace(rest)
	if detailsClose.MatchString(rest) {
		return i
	}
	if rest != "" {
		return -1
	}
	depth := 1
	for j := i + 1; j < len(nodes); j++ {
		h, ok := nodes[j].(*ast.HTMLBlock)
		if !ok {
			continue
		}
		raw := im.rawText(h)
		switch {
		case detailsClose.MatchString(raw):
			depth--
			if depth == 0 {
				return j
			}
		case detailsOpen.MatchString(raw):
			depth++
		}
	}
	return -1
}

// htmlText is the text of an HTML fragment: tags removed, references
// resolved, white space collapsed.
func htmlText(s string) string {
	s = htmlTag.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}

func (im *importer) block(n ast.Node, depth int) []Block {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		if b, ok := im.media(n); ok {
			return []Block{b}
		}
		if b, ok := im.video(n); ok {
			return []Block{b}
		}
		runs := im.inlines(n)
		if len(runs) == 0 {
			return nil
		}
		return []Block{{ID: im.id(), Type: Paragraph, RichText: runs}}
	case *ast.Heading:
		return []Block{{ID: im.id(), Type: Heading, Attrs: &Attrs{Level: n.Level}, RichText: im.inlines(n)}}
	case *ast.Blockquote:
		return im.quote(n, depth)
	case *ast.List:
		b := Block{ID: im.id(), Type: List}
		if n.IsOrdered() || !n.IsTight {
			b.Attrs = &Attrs{Loose: !n.IsTight}
		}
		if n.IsOrdered() {
			b.Attrs.Ordered = true
			switch {
			case n.Start == 0:
				im.report(n, UnsupportedListStart, im.lineText(n), "numbering starts at 1, not 0")
			case n.Start != 1:
				b.Attrs.Start = n.Start
			}
		}
		b.Items = im.items(n, 1, depth)
		return []Block{b}
	case *ast.FencedCodeBlock:
		a := &Attrs{Text: im.codeText(n)}
		if lang := n.Language(im.src); lang != nil {
			a.Language = codeLanguage(decodeMarkdown(lang))
			if a.Language != decodeMarkdown(lang) {
				im.report(n, UnsupportedCodeLanguage, string(lang), fmt.Sprintf("language imported as %q (at most 32 characters, no blanks)", a.Language))
			}
		}
		return []Block{{ID: im.id(), Type: Code, Attrs: a}}
	case *ast.CodeBlock:
		return []Block{{ID: im.id(), Type: Code, Attrs: &Attrs{Text: im.codeText(n)}}}
	case *mathBlock:
		latex := latexFromMarkdown(strings.TrimSpace(im.codeText(n)))
		if latex == "" {
			im.report(n, UnsupportedEmptyEquation, im.lineText(n), "dropped: an equation needs LaTeX")
			return nil
		}
		return []Block{{ID: im.id(), Type: Equation, Attrs: &Attrs{Latex: latex}}}
	case *east.Table:
		if b, ok := im.table(n); ok {
			return []Block{b}
		}
		return nil
	case *ast.ThematicBreak:
		return []Block{{ID: im.id(), Type: Divider}}
	case *ast.HTMLBlock:
		return im.htmlBlock(n)
	case *ast.LinkReferenceDefinition:
		return nil // used by the links that name it
	case *east.FootnoteList:
		im.footnotes = append(im.footnotes, n)
		return nil // footnoteBlocks places the definitions at the end
	}
	raw := im.rawText(n)
	if strings.TrimSpace(raw) == "" {
		im.report(n, UnsupportedOther, n.Kind().String(), "dropped")
		return nil
	}
	im.report(n, UnsupportedOther, raw, n.Kind().String()+" kept as a paragraph of its source text")
	return []Block{{ID: im.id(), Type: Paragraph, RichText: []Run{{Text: raw}}}}
}

func (im *importer) lineText(n ast.Node) string {
	p := im.pos(n)
	end := bytes.IndexByte(im.src[p:], '\n')
	if end < 0 {
		return string(im.src[p:])
	}
	return string(im.src[p : p+end])
}

func (im *importer) codeText(n ast.Node) string {
	var b bytes.Buffer
	for i := 0; i < n.Lines().Len(); i++ {
		s := n.Lines().At(i)
		b.Write(s.Value(im.src))
	}
	return strings.TrimSuffix(lineEnds.Replace(b.String()), "\n")
}

// media turns a paragraph holding one image and nothing else (Markdown
// image or <img> tag) into a media block.
func (im *importer) media(p ast.Node) (Block, bool) {
	var img *ast.Image
	var tag *htmlImage
	for c := p.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Image:
			if img != nil || tag != nil {
				return Block{}, false
			}
			img = c
		case *ast.RawHTML:
			t, ok := parseImgTag(rawHTMLText(c, im.src))
			if !ok || img != nil || tag != nil {
				return Block{}, false
			}
			tag = &t
		case *ast.Text:
			if strings.TrimSpace(string(c.Segment.Value(im.src))) != "" {
				return Block{}, false
			}
		default:
			return Block{}, false
		}
	}
	if tag != nil {
		tag.src = im.imageSrc(tag.src)
		if checkSource(tag.src) != "" {
			return Block{}, false // inlines reports it and keeps the alt text
		}
		return tag.block(im.id()), true
	}
	if img == nil {
		return Block{}, false
	}
	src := im.imageSrc(decodeMarkdown(img.Destination))
	if checkSource(src) != "" {
		return Block{}, false // inlines reports it and keeps the alt text
	}
	a := &Attrs{Kind: "image", Src: src, Alt: PlainText(im.inlines(img)), Caption: decodeMarkdown(img.Title)}
	return Block{ID: im.id(), Type: Media, Attrs: a}, true
}

var videoExt = regexp.MustCompile(`(?i)\.(mp4|m4v|webm|mov|ogv)([?#].*)?$`)

// video turns a paragraph holding only a link to a video file into a
// video media block (how RenderMarkdown writes one).
func (im *importer) video(p ast.Node) (Block, bool) {
	l, ok := p.FirstChild().(*ast.Link)
	if !ok || l.NextSibling() != nil {
		return Block{}, false
	}
	src := decodeMarkdown(l.Destination)
	if checkMediaSrc(src) != "" || !videoExt.MatchString(src) {
		return Block{}, false
	}
	a := &Attrs{Kind: "video", Src: src, Caption: decodeMarkdown(l.Title)}
	if alt := PlainText(im.inlines(l)); alt != src {
		a.Alt = alt
	}
	return Block{ID: im.id(), Type: Media, Attrs: a}, true
}

// quote converts a block quote at depth: its first paragraph is the
// quote's text, every other block inside it (paragraphs, code, lists,
// nested quotes …) its children. A quote of one paragraph starting with
// an emoji is a callout. A quote too deep for children keeps its
// paragraphs as lines of its text and places other blocks after it.
func (im *importer) quote(q *ast.Blockquote, depth int) []Block {
	kids := children(q)
	b := Block{ID: im.id(), Type: Quote}
	if len(kids) > 0 && isTextNode(kids[0]) {
		if bs := im.block(kids[0], depth+1); len(bs) == 1 && bs[0].Type == Paragraph {
			b.RichText = bs[0].RichText
			kids = kids[1:]
		}
	}
	if len(kids) == 0 {
		if len(b.RichText) > 0 {
			return []Block{quoteOrCallout(b.ID, b.RichText)}
		}
		return []Block{b}
	}
	if depth < MaxDepth {
		b.Children = im.blockList(kids, depth+1)
		return []Block{b}
	}
	return im.flatQuote(b, kids, depth)
}

// flatQuote is a quote nested too deep to hold blocks: its paragraphs
// are lines of its text, nested quotes flattened into it, other blocks
// placed after it; all reported.
func (im *importer) flatQuote(b Block, kids []ast.Node, depth int) []Block {
	out := []Block{b}
	reportedNested := false
	var walk func(nodes []ast.Node)
	walk = func(nodes []ast.Node) {
		for _, c := range nodes {
			switch c := c.(type) {
			case *ast.Paragraph, *ast.TextBlock:
				runs := im.inlines(c)
				if len(runs) == 0 {
					continue
				}
				im.report(c, UnsupportedQuoteContent, im.lineText(c), fmt.Sprintf("paragraph of a quote nested deeper than %d levels joined to its text", MaxDepth))
				if len(out[0].RichText) > 0 {
					out[0].RichText = append(out[0].RichText, Run{Text: "\n"})
				}
				out[0].RichText = append(out[0].RichText, runs...)
			case *east.FootnoteList:
				im.footnotes = append(im.footnotes, c)
			case *ast.LinkReferenceDefinition:
			case *ast.Blockquote:
				if !reportedNested {
					im.report(c, UnsupportedNestedQuote, im.lineText(c), "flattened into the outer quote")
					reportedNested = true
				}
				walk(children(c))
			default:
				im.report(c, UnsupportedQuoteContent, im.lineText(c), c.Kind().String()+" inside a quote placed after it")
				out = append(out, im.blockList([]ast.Node{c}, depth)...)
			}
		}
	}
	walk(kids)
	out[0].RichText = sanitizeRuns(out[0].RichText)
	return out
}

// quoteOrCallout makes a quote, or a callout when the text starts with an
// emoji or symbol and a blank ("> 💡 Tip"), the way callouts are written.
func quoteOrCallout(id string, runs []Run) Block {
	runs = sanitizeRuns(runs)
	first := runs[0]
	if first.Equation == "" && len(first.Marks) == 0 && first.Link == "" {
		icon := leadingSymbol(first.Text)
		if icon != "" && utf8.RuneCountInString(icon) <= 16 && strings.HasPrefix(first.Text[len(icon):], " ") {
			rest := append([]Run{{Text: first.Text[len(icon)+1:]}}, runs[1:]...)
			if rest[0].Text == "" {
				rest = rest[1:]
			}
			return Block{ID: id, Type: Callout, Attrs: &Attrs{Icon: icon}, RichText: rest}
		}
	}
	return Block{ID: id, Type: Quote, RichText: runs}
}

// leadingSymbol returns the emoji or symbol that s starts with (with its
// modifiers and joined parts), or "".
func leadingSymbol(s string) string {
	c, size := utf8.DecodeRuneInString(s)
	if size == 0 || !unicode.Is(unicode.So, c) {
		return ""
	}
	return s[:size+emojiTail(s[size:])]
}

// items converts the items of l at depth (1 for a list block's own
// items), in a list block at blockDepth. An item's first paragraph is its
// rich text, a last nested list like l (same kind, spacing and, when
// numbered, starting at 1) its nested items, and everything else its
// blocks, in order. Items nested deeper than MaxListDepth are lifted to
// that depth, after their parent; in a list too deep for blocks, an
// item's blocks are kept as its text.
func (im *importer) items(l *ast.List, depth, blockDepth int) []ListItem {
	var out []ListItem
	for li := l.FirstChild(); li != nil; li = li.NextSibling() {
		var lifted []ListItem
		var item ListItem
		kids := children(li)
		var first []Block // an image alone opening the item: a media block
		if len(kids) > 0 && isTextNode(kids[0]) {
			im.task = ""
			bs := im.block(kids[0], blockDepth+1)
			item.Task, im.task = im.task, ""
			if len(bs) == 1 && bs[0].Type == Paragraph {
				item.RichText = bs[0].RichText
			} else {
				first = bs
			}
			kids = kids[1:]
		}
		if n := len(kids); n > 0 {
			if sub, ok := kids[n-1].(*ast.List); ok && sub.IsOrdered() == l.IsOrdered() && sub.IsTight == l.IsTight &&
				(!sub.IsOrdered() || sub.Start == 1) {
				kids = kids[:n-1]
				if depth >= MaxListDepth {
					im.report(sub, UnsupportedListDepth, im.lineText(sub), fmt.Sprintf("items nested deeper than %d levels lifted to level %d", MaxListDepth, MaxListDepth))
					lifted = im.items(sub, depth, blockDepth)
				} else {
					item.Items = im.items(sub, depth+1, blockDepth)
				}
			}
		}
		if blockDepth < MaxDepth {
			item.Blocks = append(first, im.blockList(kids, blockDepth+1)...)
		} else {
			for _, b := range first {
				if b.Type == Media {
					item.RichText = append(item.RichText, Run{Text: b.Attrs.Alt})
					im.report(li, UnsupportedListContent, im.lineText(li), "image inside a list item nested too deep: its alt text kept")
				}
			}
			item.RichText = im.flatItem(item.RichText, kids)
		}
		out = append(out, item)
		out = append(out, lifted...)
	}
	return out
}

func isTextNode(n ast.Node) bool {
	switch n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return true
	}
	return false
}

// flatItem appends the text of blocks that have no place in an item
// nested too deep (reported) to its text.
func (im *importer) flatItem(text []Run, kids []ast.Node) []Run {
	for _, c := range kids {
		if fl, ok := c.(*east.FootnoteList); ok {
			im.footnotes = append(im.footnotes, fl)
			continue
		}
		if _, ok := c.(*ast.LinkReferenceDefinition); ok {
			continue
		}
		var runs []Run
		if isTextNode(c) {
			runs = im.inlines(c)
		} else {
			raw := im.rawText(c)
			if strings.TrimSpace(raw) == "" {
				im.report(c, UnsupportedListContent, c.Kind().String(), "dropped")
				continue
			}
			runs = []Run{{Text: raw}}
		}
		im.report(c, UnsupportedListContent, im.lineText(c), fmt.Sprintf("%s inside a list item nested deeper than %d levels kept as its text", c.Kind(), MaxDepth))
		if len(text) > 0 && len(runs) > 0 {
			text = append(text, Run{Text: "\n"})
		}
		text = append(text, runs...)
	}
	return sanitizeRuns(text)
}

func (im *importer) table(t *east.Table) (Block, bool) {
	b := Block{Type: Table}
	for _, al := range t.Alignments {
		if al != east.AlignNone {
			im.report(t, UnsupportedTableAlign, im.lineText(t), "column alignment dropped")
			break
		}
	}
	header := false
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row TableRow
		empty := true
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			if len(row.Cells) == MaxTableColumns {
				im.report(c, UnsupportedTableSize, im.lineText(r), fmt.Sprintf("cells after the first %d dropped", MaxTableColumns))
				break
			}
			cell := im.inlines(c)
			if len(cell) > 0 {
				empty = false
			}
			row.Cells = append(row.Cells, cell)
		}
		if _, ok := r.(*east.TableHeader); ok {
			// An empty header row is how a table without one is written.
			if empty {
				continue
			}
			header = true
		}
		b.Rows = append(b.Rows, row)
	}
	if len(b.Rows) == 0 {
		im.report(t, UnsupportedTableSize, im.lineText(t), "dropped: a table with an empty header row and no other rows")
		return Block{}, false
	}
	// Every row gets as many cells as the widest.
	width := 0
	for _, r := range b.Rows {
		width = max(width, len(r.Cells))
	}
	for i := range b.Rows {
		for len(b.Rows[i].Cells) < width {
			b.Rows[i].Cells = append(b.Rows[i].Cells, nil)
		}
	}
	if header {
		b.Attrs = &Attrs{Header: true}
	}
	b.ID = im.id()
	return b, true
}

// codeLanguage makes an info string a valid code language: no blanks or
// control characters, at most 32 characters.
func codeLanguage(s string) string {
	s = strings.Map(func(c rune) rune {
		if c <= ' ' || c == 0x7f || unicode.IsSpace(c) {
			return -1
		}
		return c
	}, s)
	if r := []rune(s); len(r) > 32 {
		s = string(r[:32])
	}
	return s
}

// inlineState is the marks and link in force while walking inlines.
type inlineState struct {
	marks map[Mark]int
	link  string
	title string // of link
}

func (im *importer) inlines(n ast.Node) []Run {
	st := &inlineState{marks: map[Mark]int{}}
	var out []Run
	im.walkInline(n, st, &out)
	return sanitizeRuns(resolveSoftBreaks(out))
}

func (st *inlineState) run(text string) Run {
	r := Run{Text: text, Link: st.link, Title: st.title}
	for _, m := range Marks {
		if st.marks[m] > 0 {
			r.Marks = append(r.Marks, m)
		}
	}
	return r
}

var (
	inlineTag = regexp.MustCompile(`^<(/?)([A-Za-z][A-Za-z0-9]*)\b[^>]*?(/?)>$`)
	tagMarks  = map[string]Mark{"b": Bold, "strong": Bold, "i": Italic, "em": Italic, "u": Underline,
		"ins": Underline, "s": Strike, "del": Strike, "strike": Strike, "code": CodeMark}
)

func (im *importer) walkInline(parent ast.Node, st *inlineState, out *[]Run) {
	add := func(s string) {
		if s != "" {
			*out = append(*out, st.run(s))
		}
	}
	trimLead := false // the blanks after a dropped element: one is enough
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		if h, ok := c.(*ast.RawHTML); ok {
			if end, skip := im.scriptInline(h); skip {
				if end == nil {
					return
				}
				if n := len(*out); n > 0 && strings.HasSuffix((*out)[n-1].Text, " ") {
					trimLead = true
				}
				c = end
				continue
			}
		}
		lead := trimLead
		trimLead = false
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(im.src)
			if lead {
				v = bytes.TrimLeft(v, " \t")
			}
			// The blanks written around a <br> are not part of the
			// text (as around a hard break); blanks written as
			// references are.
			if isBreakTag(c.PreviousSibling(), im.src) {
				v = bytes.TrimLeft(v, " \t")
			}
			if isBreakTag(c.NextSibling(), im.src) {
				v = bytes.TrimRight(v, " \t")
			}
			if c.IsRaw() {
				add(string(v))
			} else {
				s := decodeMarkdown(v)
				if strings.ContainsAny(s, "\n\r") {
					im.report(c, UnsupportedOther, string(v), "a line end written as a character reference (&#10;) reads as a line break")
				}
				add(s)
			}
			switch {
			case c.HardLineBreak():
				add("\n")
			case c.SoftLineBreak():
				*out = append(*out, st.run(softBreak))
			}
		case *ast.String:
			if c.IsRaw() || c.IsCode() {
				add(string(c.Value))
			} else {
				add(decodeMarkdown(c.Value))
			}
		case *ast.CodeSpan:
			var b strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if tt, ok := t.(*ast.Text); ok {
					b.Write(tt.Segment.Value(im.src))
				} else if s, ok := t.(*ast.String); ok {
					b.Write(s.Value)
				}
			}
			st.marks[CodeMark]++
			add(strings.ReplaceAll(b.String(), "\n", " "))
			st.marks[CodeMark]--
		case *ast.Emphasis:
			m := Italic
			if c.Level >= 2 {
				m = Bold
			}
			im.nestedMark(c, st, m)
			st.marks[m]++
			im.walkInline(c, st, out)
			st.marks[m]--
		case *east.Strikethrough:
			im.nestedMark(c, st, Strike)
			st.marks[Strike]++
			im.walkInline(c, st, out)
			st.marks[Strike]--
		case *ast.Link:
			dest := decodeMarkdown(c.Destination)
			saved, savedTitle := st.link, st.title
			if rule := checkLink(dest); rule == "" {
				st.link, st.title = dest, decodeMarkdown(c.Title)
			} else if esc := escapeURL(dest); checkLink(esc) == "" {
				// What a browser would request: the blanks, backslashes
				// and other bytes a URL cannot hold percent-encoded.
				st.link, st.title = esc, decodeMarkdown(c.Title)
			} else {
				if dest == "" {
					rule = "the link has no destination (a link needs a URL)"
				}
				im.report(c, UnsupportedLinkRefused, dest, "link removed, text kept: "+rule)
			}
			n := len(*out)
			im.walkInline(c, st, out)
			if len(*out) == n && st.link != saved {
				im.report(c, UnsupportedOther, dest, "a link without text dropped")
			}
			st.link, st.title = saved, savedTitle
		case *ast.AutoLink:
			url := string(c.URL(im.src))
			if c.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(url), "mailto:") {
				url = "mailto:" + url
			}
			saved, savedTitle := st.link, st.title
			st.title = ""
			if rule := checkLink(url); rule == "" {
				st.link = url
			} else if esc := escapeURL(url); checkLink(esc) == "" {
				st.link = esc
			} else {
				im.report(c, UnsupportedLinkRefused, url, "link removed, text kept: "+rule)
			}
			add(string(c.Label(im.src)))
			st.link, st.title = saved, savedTitle
		case *ast.Image:
			src := decodeMarkdown(c.Destination)
			note := "image inside text: its alt text kept"
			if rule := checkMediaSrc(src); rule != "" {
				note = "image kept as its alt text: " + rule
			}
			im.report(c, UnsupportedInlineImage, src, note)
			im.walkInline(c, st, out)
		case *ast.RawHTML:
			im.rawHTML(c, st, out)
		case *east.TaskCheckBox:
			im.task = TaskOpen
			if c.IsChecked {
				im.task = TaskDone
			}
			trimLead = true // the blank after the box
		case *east.FootnoteLink:
			add("[" + strconv.Itoa(c.Index) + "]")
		case *mathInline:
			*out = append(*out, Run{Equation: latexFromMarkdown(c.Latex)})
		default:
			im.report(c, UnsupportedOther, c.Kind().String(), "inline kept as its text")
			im.walkInline(c, st, out)
		}
	}
}

func (im *importer) rawHTML(c *ast.RawHTML, st *inlineState, out *[]Run) {
	raw := rawHTMLText(c, im.src)
	if h, ok := parseImgTag(raw); ok {
		note := "image inside text: its alt text kept"
		if rule := checkMediaSrc(h.src); rule != "" {
			note = "image kept as its alt text: " + rule
		}
		im.report(c, UnsupportedInlineImage, h.src, note)
		if h.alt != "" {
			*out = append(*out, st.run(h.alt))
		}
		return
	}
	if m := inlineTag.FindStringSubmatch(raw); m != nil {
		name := strings.ToLower(m[2])
		if name == "br" {
			*out = append(*out, st.run("\n"))
			return
		}
		if mark, ok := tagMarks[name]; ok {
			switch {
			case m[3] == "/":
			case m[1] == "/":
				if st.marks[mark] > 0 {
					st.marks[mark]--
				}
			default:
				im.nestedMark(c, st, mark)
				st.marks[mark]++
			}
			return
		}
	}
	im.report(c, UnsupportedInlineHTML, raw, "tag dropped, the text around it kept")
}

// nestedMark reports emphasis inside emphasis of the same kind
// ("*a *b* c*", "****x****"): a run has each mark once, so the inner one
// adds nothing a document can hold.
func (im *importer) nestedMark(n ast.Node, st *inlineState, m Mark) {
	if st.marks[m] > 0 {
		im.report(n, UnsupportedNestedMark, string(m), "emphasis nested in emphasis of the same kind: the inner one merged into the outer")
	}
}

// A task-list item keeps its state as the first character of its text.
const (
	taskOpen = "☐"
	taskDone = "☑"
)

// footnoteBlocks places the footnote definitions met during the import at
// the end of the document, in the order of their numbers: those
// referenced first, then the others in source order. Each starts with
// "[n] ", the text its references were given.
func (im *importer) footnoteBlocks() []Block {
	var notes, unreferenced []*east.Footnote
	for _, l := range im.footnotes {
		for c := l.FirstChild(); c != nil; c = c.NextSibling() {
			if fn, ok := c.(*east.Footnote); ok {
				if fn.Index > 0 {
					notes = append(notes, fn)
				} else {
					unreferenced = append(unreferenced, fn)
				}
			}
		}
	}
	sort.SliceStable(notes, func(i, j int) bool { return notes[i].Index < notes[j].Index })
	var out []Block
	for i, fn := range append(notes, unreferenced...) {
		n := i + 1
		if fn.Index > 0 {
			n = fn.Index
		}
		label := "[" + strconv.Itoa(n) + "]"
		note := "definition kept as a paragraph at the end starting " + label + ", references read " + label
		if fn.Index <= 0 {
			note = "never referenced; kept as a paragraph at the end starting " + label
		}
		im.reportAt(im.footnotePos(fn), UnsupportedFootnote, "[^"+string(fn.Ref)+"]:", note)
		blocks := im.blockList(children(fn), 1)
		if len(blocks) > 0 && blocks[0].Type == Paragraph {
			blocks[0].RichText = sanitizeRuns(append([]Run{{Text: label + " "}}, blocks[0].RichText...))
		} else {
			blocks = append([]Block{{ID: im.id(), Type: Paragraph, RichText: []Run{{Text: label}}}}, blocks...)
		}
		out = append(out, blocks...)
	}
	return out
}

// footnotePos is the source offset of a footnote definition: its first
// line of content, or where "[^label]:" is written.
func (im *importer) footnotePos(fn *east.Footnote) int {
	var first func(n ast.Node) int
	first = func(n ast.Node) int {
		if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
			return n.Lines().At(0).Start
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if p := first(c); p >= 0 {
				return p
			}
		}
		return -1
	}
	def := regexp.MustCompile(`(?m)^ {0,3}\[\^` + regexp.QuoteMeta(string(fn.Ref)) + `\]:`)
	if loc := def.FindIndex(im.src); loc != nil {
		return loc[0]
	}
	return max(first(fn), 0)
}

func (im *importer) reportAt(pos int, kind, snippet, note string) {
	im.unsupported = append(im.unsupported, Unsupported{Line: im.line(pos), Kind: kind, Text: snippet, Note: note})
}

// softBreak stands for a soft line break until resolveSoftBreaks knows
// the characters on both sides. It cannot occur in imported text, which
// is valid UTF-8.
const softBreak = "\xff"

// resolveSoftBreaks turns each soft line break into a blank, or into
// nothing where softBreakJoins says the lines join without one.
func resolveSoftBreaks(runs []Run) []Run {
	edge := func(i, step int) rune {
		for j := i + step; j >= 0 && j < len(runs); j += step {
			r := runs[j]
			switch {
			case r.Equation != "":
				return ObjectReplacement
			case r.Text == softBreak:
				return ' '
			case r.Text == "":
				continue
			case step < 0:
				c, _ := utf8.DecodeLastRuneInString(r.Text)
				return c
			default:
				c, _ := utf8.DecodeRuneInString(r.Text)
				return c
			}
		}
		return 0
	}
	for i := range runs {
		if runs[i].Text != softBreak {
			continue
		}
		runs[i].Text = " "
		if softBreakJoins(edge(i, -1), edge(i, 1)) {
			runs[i].Text = ""
		}
	}
	return runs
}

// softBreakJoins reports whether a soft line break between before and
// after joins the lines with no blank, following the CJK-friendly
// reading of CommonMark (as CSS Text 3 treats segment breaks): Chinese
// and Japanese put no blank between words, so a break
//
//   - next to a line break (<br> or a hard break) adds nothing;
//   - after CJK punctuation (。，、！？：；「」《》… and fullwidth forms)
//     adds nothing;
//   - between two CJK characters (Han, kana, bopomofo, fullwidth forms,
//     CJK punctuation) adds nothing, nor between one of them and the
//     punctuation CJK text shares with Western text (“ ” ‘ ’ … — · ‧).
//
// Hangul is not CJK here: Korean separates words with blanks. Everything
// else keeps the blank CommonMark gives a soft break.
func softBreakJoins(before, after rune) bool {
	switch {
	case before == '\n' || after == '\n':
		return true
	case isCJKPunct(before):
		return true
	case isCJKWide(before):
		return isCJKWide(after) || isSharedPunct(after)
	case isSharedPunct(before):
		return isCJKWide(after)
	}
	return false
}

// isCJKPunct: CJK symbols and punctuation, vertical and compatibility
// forms, and the fullwidth punctuation of the halfwidth/fullwidth block.
func isCJKPunct(c rune) bool {
	switch {
	case c >= 0x3000 && c <= 0x303F, c >= 0xFE10 && c <= 0xFE1F, c >= 0xFE30 && c <= 0xFE6F:
		return true
	case c >= 0xFF01 && c <= 0xFF0F, c >= 0xFF1A && c <= 0xFF20, c >= 0xFF3B && c <= 0xFF40, c >= 0xFF5B && c <= 0xFF65:
		return true
	}
	return false
}

// isCJKWide: Han, kana, bopomofo, CJK punctuation and the fullwidth and
// halfwidth forms (not Hangul).
func isCJKWide(c rune) bool {
	if c < 0x2E80 {
		return false
	}
	return isCJKPunct(c) || unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo) ||
		c >= 0xFF01 && c <= 0xFF9F || c == 0x30FC
}

// isSharedPunct is punctuation CJK text uses in its Western form.
func isSharedPunct(c rune) bool {
	switch c {
	case '“', '”', '‘', '’', '…', '—', '·', '‧':
		return true
	}
	return false
}

// isBreakTag reports whether n is a <br> tag.
func isBreakTag(n ast.Node, src []byte) bool {
	h, ok := n.(*ast.RawHTML)
	if !ok {
		return false
	}
	m := inlineTag.FindStringSubmatch(rawHTMLText(h, src))
	return m != nil && m[1] == "" && strings.EqualFold(m[2], "br")
}

// scriptInline skips a <script> or <style> element written inside text:
// when c opens one, it reports the element and returns its closing tag
// (nil when the element runs to the end of the paragraph).
func (im *importer) scriptInline(c *ast.RawHTML) (ast.Node, bool) {
	raw := rawHTMLText(c, im.src)
	m := inlineTag.FindStringSubmatch(raw)
	if m == nil || m[1] == "/" || m[3] == "/" {
		return nil, false
	}
	name := strings.ToLower(m[2])
	if name != "script" && name != "style" {
		return nil, false
	}
	start := c.Segments.At(0).Start
	stop := c.Segments.At(c.Segments.Len() - 1).Stop
	var end ast.Node
	for n := c.NextSibling(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.RawHTML); ok {
			if e := inlineTag.FindStringSubmatch(rawHTMLText(h, im.src)); e != nil && e[1] == "/" && strings.EqualFold(e[2], name) {
				end = n
				stop = h.Segments.At(h.Segments.Len() - 1).Stop
				break
			}
		}
		if t, ok := n.(*ast.Text); ok {
			stop = max(stop, t.Segment.Stop)
		}
	}
	im.report(c, UnsupportedScript, string(im.src[start:stop]), "dropped with its content: a document holds no scripts or styles")
	return end, true
}

// escapeURL percent-encodes what a URL cannot hold (blanks, backslashes,
// non-ASCII), as a browser does before it requests it and as Markdown
// renderers write an href.
func escapeURL(s string) string { return string(util.URLEscape([]byte(s), false)) }

// decodeMarkdown resolves backslash escapes and character references in
// one pass, as CommonMark reads text and link destinations.
func decodeMarkdown(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 && bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, 0) < 0 {
		return string(v)
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && isASCIIPunct(v[i+1]):
			b.WriteByte(v[i+1])
			i++
		case c == 0:
			b.WriteString("\uFFFD")
		case c == '&':
			if s, n := charRef(v[i:]); n > 0 {
				b.WriteString(s)
				i += n - 1
			} else {
				b.WriteByte('&')
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// charRef decodes the character reference at the start of v ("&amp;",
// "&#35;", "&#x22;"), returning its text and length, or 0.
func charRef(v []byte) (string, int) {
	end := bytes.IndexByte(v, ';')
	if end < 2 || end > 40 {
		return "", 0
	}
	body := string(v[1:end])
	if body[0] == '#' {
		var n uint64
		var err error
		switch {
		case len(body) > 1 && (body[1] == 'x' || body[1] == 'X'):
			if len(body) < 3 || len(body) > 8 {
				return "", 0
			}
			n, err = strconv.ParseUint(body[2:], 16, 32)
		default:
			if len(body) < 2 || len(body) > 8 {
				return "", 0
			}
			n, err = strconv.ParseUint(body[1:], 10, 32)
		}
		if err != nil {
			return "", 0
		}
		c := rune(n)
		if c == 0 || !utf8.ValidRune(c) {
			c = unicode.ReplacementChar
		}
		return string(c), end + 1
	}
	for _, ch := range body {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
			return "", 0
		}
	}
	if e, ok := util.LookUpHTML5EntityByName(body); ok {
		return string(e.Characters), end + 1
	}
	return "", 0
}

var _ parser.BlockParser = mathBlockParser{}
