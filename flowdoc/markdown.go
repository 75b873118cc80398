package flowdoc

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RenderMarkdown renders d as CommonMark with GFM tables and
// strikethrough, plus $…$ / $$…$$ for equations. Text is escaped so that
// ImportMarkdown(RenderMarkdown(d)) gives back the same text. Blocks
// Markdown has no syntax for are written in the nearest form:
//
//	callout        a blockquote that starts with the icon
//	details        <details><summary>…</summary> … </details>
//	columns        each column's blocks in turn
//	video          a link to the source
//	bookmark, file, embed   links
//	underline      <u>…</u>
func RenderMarkdown(d Document) string {
	r := mdRenderer{sb: &strings.Builder{}}
	r.blocks(d.Blocks)
	return r.sb.String()
}

type mdRenderer struct {
	sb *strings.Builder
	// lastList is the list block rendered just before the current one, if
	// any: two adjacent lists of the same kind need different markers or
	// Markdown would read them as one list.
	lastList  *Block
	altMarker bool
	inItem    bool // rendering the blocks of a list item
}

func (r *mdRenderer) blocks(bs []Block) {
	for i := range bs {
		r.block(bs[i])
	}
}

// render renders one block on its own (without the blank lines around
// it), keeping what r knows of the blocks before it.
func (r *mdRenderer) render(b Block) string {
	saved := r.sb
	r.sb = &strings.Builder{}
	r.block(b)
	s := r.sb.String()
	r.sb = saved
	return strings.TrimSuffix(s, "\n")
}

func (r *mdRenderer) emit(s string) {
	if s == "" {
		return
	}
	if r.sb.Len() > 0 {
		r.sb.WriteString("\n")
	}
	r.sb.WriteString(s)
	r.sb.WriteString("\n")
}

func (r *mdRenderer) block(b Block) {
	a := attrsOf(b)
	wasList := r.lastList
	r.lastList = nil
	switch b.Type {
	case Paragraph:
		r.emit(inlineMarkdown(b.RichText, false))
	case Heading:
		level := min(max(a.Level, 1), MaxHeadingLevel)
		text := inlineMarkdown(b.RichText, false)
		// A heading is one line: a line break is written as <br>.
		text = strings.ReplaceAll(text, "\\\n", "<br>")
		r.emit(strings.Repeat("#", level) + " " + text)
	case Quote:
		var parts []string
		if len(b.RichText) > 0 {
			parts = append(parts, inlineMarkdown(b.RichText, false))
		}
		sub := mdRenderer{sb: &strings.Builder{}}
		for _, ch := range b.Children {
			if s := sub.render(ch); s != "" {
				parts = append(parts, s)
			}
		}
		// Every line is marked, blank ones too, so that nothing after
		// the quote continues it.
		lines := strings.Split(strings.Join(parts, "\n\n"), "\n")
		for i, l := range lines {
			if l == "" {
				lines[i] = ">"
			} else {
				lines[i] = "> " + l
			}
		}
		r.emit(strings.Join(lines, "\n"))
	case Callout:
		text := inlineMarkdown(b.RichText, false)
		if a.Icon != "" {
			text = escapeText(a.Icon, true) + " " + text
		}
		r.emit(prefixLines(text, "> ", "> "))
	case List:
		if wasList != nil && attrsOf(*wasList).Ordered == a.Ordered {
			r.altMarker = !r.altMarker
		} else {
			r.altMarker = false
		}
		var sb strings.Builder
		listMarkdown(&sb, b.Items, a.Ordered, r.altMarker, a.Loose, "", max(a.Start, 1))
		r.emit(strings.TrimSuffix(sb.String(), "\n"))
		r.lastList = &b
	case Code:
		// Markdown reads every line end as "\n" and the last one is the
		// fence's own.
		text := strings.TrimSuffix(lineEnds.Replace(a.Text), "\n")
		fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
		lang := strings.Map(func(c rune) rune {
			if unicode.IsSpace(c) || c == '`' {
				return -1
			}
			return c
		}, a.Language)
		body := fence + lang + "\n"
		if text != "" {
			body += text + "\n"
		}
		r.emit(body + fence)
	case Equation:
		r.emit("$$\n" + mathMarkdown(strings.TrimSpace(lineEnds.Replace(a.Latex))) + "\n$$")
	case Media:
		if a.Kind == "video" {
			label := firstNonEmpty(a.Alt, a.Caption, a.Src)
			r.emit("[" + escapeText(label, false) + "](" + linkDest(a.Src) + linkTitle(a.Caption) + ")")
			return
		}
		// An image's alt text is one line: an attribute value, where a
		// hard break means nothing.
		r.emit("![" + escapeText(oneLine.Replace(a.Alt), false) + "](" + linkDest(a.Src) + linkTitle(a.Caption) + ")")
	case Table:
		r.emit(tableMarkdown(b.Rows, a.Header))
	case Details:
		summary := html.EscapeString(strings.ReplaceAll(readableRuns(b.RichText), "\n", " "))
		r.emit("<details>\n<summary>" + summary + "</summary>")
		r.blocks(b.Children)
		r.emit("</details>")
	case Columns:
		for _, col := range b.Cols {
			r.blocks(col.Blocks)
		}
	case Bookmark:
		s := "[" + escapeText(firstNonEmpty(a.Title, a.URL), false) + "](" + linkDest(a.URL) + ")"
		if a.Description != "" {
			s += " — " + escapeText(a.Description, false)
		}
		r.emit(s)
	case File:
		s := "[" + escapeText(firstNonEmpty(a.Name, a.Src), false) + "](" + linkDest(a.Src) + ")"
		if a.Size > 0 {
			s += " (" + humanSize(a.Size) + ")"
		}
		r.emit(s)
	case Divider:
		if r.inItem {
			// "- ---" would be a divider instead of the list.
			r.emit("***")
			return
		}
		r.emit("---")
	case Embed:
		label := a.URL
		if a.Provider != "" {
			label = a.Provider + ": " + a.URL
		}
		r.emit("[" + escapeText(label, false) + "](" + linkDest(a.URL) + ")")
	default:
		r.emit(inlineMarkdown(b.RichText, false))
	}
}

// listMarkdown writes items: each its text, then its blocks, then its
// nested items, indented under its marker. Items of a loose list, and
// the parts of each, are separated by blank lines.
func listMarkdown(sb *strings.Builder, items []ListItem, ordered, alt, loose bool, indent string, start int) {
	for i, it := range items {
		var marker string
		switch {
		case ordered && alt:
			marker = strconv.Itoa(start+i) + ") "
		case ordered:
			marker = strconv.Itoa(start+i) + ". "
		case alt:
			marker = "* "
		default:
			marker = "- "
		}
		cont := indent + strings.Repeat(" ", len(marker))
		var parts []mdPart
		if len(it.RichText) > 0 || it.Task != "" {
			text := inlineMarkdown(it.RichText, false)
			switch it.Task {
			case TaskOpen:
				text = "[ ] " + text
			case TaskDone:
				text = "[x] " + text
			}
			// An item starting with a task state (see ImportMarkdown) is a
			// task-list item.
			for box, state := range map[string]string{taskOpen + " ": "[ ] ", taskDone + " ": "[x] "} {
				if rest, ok := strings.CutPrefix(text, box); ok && rest != "" {
					text = state + rest
				}
			}
			parts = append(parts, mdPart{text: text, typ: Paragraph})
		}
		r := mdRenderer{sb: &strings.Builder{}, inItem: true}
		for _, b := range it.Blocks {
			if s := r.render(b); s != "" {
				parts = append(parts, mdPart{text: s, typ: b.Type, block: b})
			}
		}
		if i > 0 && loose {
			sb.WriteByte('\n')
		}
		sb.WriteString(strings.TrimRight(indentLines(joinParts(parts, loose), indent+marker, cont), " "))
		sb.WriteByte('\n')
		if len(it.Items) > 0 {
			if loose && len(parts) > 0 {
				sb.WriteByte('\n')
			}
			listMarkdown(sb, it.Items, ordered, alt, loose, cont, 1)
		}
	}
}

// mdPart is one rendered part of a list item or quote.
type mdPart struct {
	text  string
	typ   BlockType
	block Block
}

// joinParts joins the parts of a list item: with a blank line between
// them when loose, or when the second would otherwise continue the first
// (a paragraph after a paragraph, a quote or a list) or change it (a
// divider under a paragraph is a setext heading).
func joinParts(parts []mdPart, loose bool) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
			if loose || !joinsTight(parts[i-1], p) {
				b.WriteByte('\n')
			}
		}
		b.WriteString(p.text)
	}
	return b.String()
}

func joinsTight(prev, next mdPart) bool {
	switch prev.typ {
	case Heading, Code, Divider, Equation:
		return true
	case Quote, Callout, List:
		// A fence or a heading is no continuation of what is before it.
		return next.typ == Heading || next.typ == Code
	case Paragraph:
		switch next.typ {
		case Heading, Code, Quote, Callout:
			return true
		case List:
			// A numbered list interrupts a paragraph only from 1, and an
			// empty item none.
			a := attrsOf(next.block)
			return (!a.Ordered || a.Start <= 1) && len(next.block.Items) > 0 && len(next.block.Items[0].RichText) > 0
		}
	}
	return false
}

// indentLines is prefixLines leaving empty lines empty.
func indentLines(s, first, rest string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		switch {
		case i == 0:
			lines[i] = first + lines[i]
		case lines[i] != "":
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func tableMarkdown(rows []TableRow, header bool) string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r.Cells))
	}
	if width == 0 {
		return ""
	}
	line := func(cells []string) string {
		return "| " + strings.Join(cells, " | ") + " |"
	}
	cellsOf := func(r TableRow) []string {
		out := make([]string, width)
		for i := range out {
			if i < len(r.Cells) {
				// A cell is one line: a line break is written as <br>.
				out[i] = strings.ReplaceAll(inlineMarkdown(r.Cells[i], true), "\\\n", "<br>")
			}
		}
		return out
	}
	var lines []string
	body := rows
	if header && len(rows) > 0 {
		lines = append(lines, line(cellsOf(rows[0])))
		body = rows[1:]
	} else {
		// GFM needs a header row: an empty one means "no header".
		lines = append(lines, line(make([]string, width)))
	}
	sep := make([]string, width)
	for i := range sep {
		sep[i] = "---"
	}
	lines = append(lines, line(sep))
	for _, r := range body {
		lines = append(lines, line(cellsOf(r)))
	}
	return strings.Join(lines, "\n")
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// linkDest writes a link destination that Markdown reads back unchanged.
func linkDest(u string) string {
	if u == "" {
		return "<>"
	}
	if strings.ContainsAny(u, " ()<>\\\n\t") || strings.Contains(u, "&") {
		var b strings.Builder
		b.WriteByte('<')
		for _, c := range u {
			switch c {
			case '<', '>', '\\', '&':
				b.WriteByte('\\')
				b.WriteRune(c)
			case '\n', '\r':
				b.WriteString("%0A")
			default:
				b.WriteRune(c)
			}
		}
		b.WriteByte('>')
		return b.String()
	}
	return u
}

func linkTitle(t string) string {
	if t == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(` "`)
	for _, c := range t {
		switch {
		case c < utf8.RuneSelf && isASCIIPunct(byte(c)):
			b.WriteByte('\\')
		case c == '\n' || c == '\r':
			// A title may span lines, but not a blank one.
			b.WriteString("&#" + strconv.Itoa(int(c)) + ";")
			continue
		}
		b.WriteRune(c)
	}
	b.WriteByte('"')
	return b.String()
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

var lineEnds = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// oneLine writes line ends as blanks.
var oneLine = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")

// mdSpecial are the characters escaped anywhere in text.
const mdSpecial = "\\`*_[]<>#&~|$"

var listStart = regexp.MustCompile(`^(\d{1,9})([.)])`)

// escapeText escapes s for Markdown inline text. lineStart says s begins
// a line, where "-", "+", "=", "1." and leading blanks mean something.
func escapeText(s string, lineStart bool) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	atStart := lineStart
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if atStart {
			switch {
			case c == '-' || c == '+' || c == '=':
				b.WriteByte('\\')
				b.WriteRune(c)
				i += size
				atStart = false
				continue
			case c == ' ' || c == '\t' || c == '\v' || c == '\f':
				// Leading blanks are stripped by Markdown: keep them as
				// character references.
				b.WriteString("&#" + strconv.Itoa(int(c)) + ";")
				i += size
				continue
			case c >= '0' && c <= '9':
				if m := listStart.FindStringSubmatch(s[i:]); m != nil {
					b.WriteString(m[1] + "\\" + m[2])
					i += len(m[0])
					atStart = false
					continue
				}
			}
			atStart = false
		}
		switch {
		case c == '\n':
			b.WriteString("\\\n")
			atStart = true
		case c == '\r':
			b.WriteString("&#13;")
		case c == 0:
			b.WriteString("\uFFFD")
		case c < utf8.RuneSelf && strings.ContainsRune(mdSpecial, c):
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
		i += size
	}
	return b.String()
}

func protectTrailingBlanks(s string) string {
	// A hard break at either end of a block means nothing to Markdown:
	// write those line ends as references.
	var head, tail string
	for strings.HasPrefix(s, "\\\n") {
		s = s[2:]
		head += "&#10;"
	}
	for strings.HasSuffix(s, "\\\n") {
		s = s[:len(s)-2]
		tail += "&#10;"
	}
	return head + protectLineEnds(s) + tail
}

func protectLineEnds(s string) string {
	lines := strings.Split(s, "\\\n")
	for i, l := range lines {
		trimmed := strings.TrimRight(l, " \t\v\f")
		if len(trimmed) == len(l) {
			continue
		}
		var b strings.Builder
		b.WriteString(trimmed)
		for _, c := range l[len(trimmed):] {
			b.WriteString("&#" + strconv.Itoa(int(c)) + ";")
		}
		lines[i] = b.String()
	}
	return strings.Join(lines, "\\\n")
}

// codeSpan writes s as a code span with a backtick fence longer than any
// backtick run inside.
func codeSpan(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") ||
		(strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.Trim(s, " ") != "") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// escapeMath prepares LaTeX for $…$: on one line, and without blanks
// just inside the dollars, which would stop it reading as math.
func escapeMath(s string) string {
	return mathMarkdown(strings.TrimSpace(strings.ReplaceAll(lineEnds.Replace(s), "\n", " ")))
}

// mathMarkdown writes LaTeX so that it cannot end its $ or $$ delimiters
// early nor be read as HTML by a renderer without math support (which
// reads it as Markdown text):
//
//   - a "$" that no backslash escapes is written "\$" (in math mode a
//     bare dollar is an error; "\$" is the dollar sign), so a "$" or
//     "$$" inside never closes the equation;
//   - "<" is written "\lt " (the same symbol in LaTeX), so no "<tag"
//     appears; ImportMarkdown reads "\lt " back as "<";
//   - "](" is written "] (" (math ignores the blank), so no "[x](url)"
//     link appears;
//   - a trailing backslash that would escape the closing "$" is written
//     "\backslash" (the same symbol).
func mathMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	slashes := 0 // backslashes just before i
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$' && slashes%2 == 0:
			b.WriteString("\\$")
		case c == '<':
			b.WriteString("\\lt ")
		case c == '(' && i > 0 && s[i-1] == ']':
			b.WriteString(" (")
		default:
			b.WriteByte(c)
		}
		if c == '\\' {
			slashes++
		} else {
			slashes = 0
		}
	}
	out := b.String()
	if slashes%2 == 1 {
		out = out[:len(out)-1] + "\\backslash"
	}
	return out
}

// mathLtRef is how mathMarkdown writes "<" in LaTeX.
const mathLtRef = "\\lt "

// latexFromMarkdown undoes mathMarkdown's "\lt ".
func latexFromMarkdown(s string) string { return strings.ReplaceAll(s, mathLtRef, "<") }

// RenderMarkdownTitle renders an article's title as a Markdown heading of
// level 1 ("# …" and a blank line), escaped like any text: the title is
// text, never markup.
func RenderMarkdownTitle(title string) string {
	return "# " + escapeText(strings.Join(strings.Fields(lineEnds.Replace(title)), " "), false) + "\n\n"
}

// isPlainURL reports whether u can be written as an autolink <u>.
func isPlainURL(u string) bool {
	lower := strings.ToLower(u)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return false
	}
	for _, c := range u {
		if c <= ' ' || c == '<' || c == '>' || c == '\\' || c == '&' || c >= 0x7f {
			return false
		}
	}
	return true
}
