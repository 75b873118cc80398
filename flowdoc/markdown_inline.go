package flowdoc

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rich text as Markdown inline content.
//
// A document keeps marks and links per run; Markdown nests them. The
// writer opens a mark or link where it starts and keeps it open over
// every run that has it, so "*foo **bar** baz*" comes back as written:
// of the marks starting at one run, the one lasting longest is opened
// first (outside), a link before a mark of the same length, italic
// before bold ("***x***" reads as <em><strong>). A mark that must close
// while one opened after it continues is closed and opened again.
//
// Emphasis is written with delimiters ("*", "**", "~~") where
// CommonMark reads them as such and with the HTML tags the import reads
// (<em>, <strong>, <del>, <u>) elsewhere; a rendering whose delimiters
// would read back differently is written with tags throughout.

// An inline element: a link or a mark that spans runs.
type inlineElem struct {
	mark  Mark // "" for a link
	link  string
	title string
}

// elemOrder is the nesting order of elements that span the same runs.
var elemOrder = []Mark{"", Italic, Bold, Strike, Underline}

func runElems(r Run) []inlineElem {
	var out []inlineElem
	if r.Equation != "" {
		return nil
	}
	if r.Link != "" {
		out = append(out, inlineElem{link: r.Link, title: r.Title})
	}
	for _, m := range elemOrder[1:] {
		if hasMark(r.Marks, m) {
			out = append(out, inlineElem{mark: m})
		}
	}
	return out
}

func hasMark(ms []Mark, m Mark) bool { return slices.Contains(ms, m) }

// inlineMarkdown renders runs as Markdown inline content.
func inlineMarkdown(runs []Run, inTable bool) string {
	runs = exportRuns(runs)
	s, delims := writeInline(runs, inTable, true)
	if delims && !inlineReadsAs(s, runs, inTable) {
		s, _ = writeInline(runs, inTable, false)
	}
	return s
}

// exportRuns is runs as Markdown can hold them: sanitized, and without
// marks on the white space at the edges of a marked span (Markdown's
// delimiters cannot touch it), which a code span keeps.
func exportRuns(runs []Run) []Run {
	runs = sanitizeRuns(runs)
	var pieces []Run
	for _, r := range runs {
		if r.Equation != "" || len(r.Marks) == 0 || hasMark(r.Marks, CodeMark) {
			pieces = append(pieces, r)
			continue
		}
		core := strings.TrimLeftFunc(r.Text, unicode.IsSpace)
		lead := r.Text[:len(r.Text)-len(core)]
		mid := strings.TrimRightFunc(core, unicode.IsSpace)
		trail := core[len(mid):]
		for _, t := range []string{lead, mid, trail} {
			if t != "" {
				p := r
				p.Text = t
				p.Marks = slices.Clone(r.Marks)
				pieces = append(pieces, p)
			}
		}
	}
	blank := func(r Run) bool {
		return r.Equation == "" && !hasMark(r.Marks, CodeMark) && strings.TrimSpace(r.Text) == ""
	}
	for _, m := range []Mark{Bold, Italic, Underline, Strike} {
		for i := 0; i < len(pieces); {
			if !hasMark(pieces[i].Marks, m) {
				i++
				continue
			}
			j := i
			for j < len(pieces) && hasMark(pieces[j].Marks, m) {
				j++
			}
			for k := i; k < j && blank(pieces[k]); k++ {
				pieces[k].Marks = slices.DeleteFunc(pieces[k].Marks, func(x Mark) bool { return x == m })
			}
			for k := j - 1; k >= i && blank(pieces[k]); k-- {
				pieces[k].Marks = slices.DeleteFunc(pieces[k].Marks, func(x Mark) bool { return x == m })
			}
			i = j
		}
	}
	return sanitizeRuns(pieces)
}

// inlineReadsAs reports whether s, imported, gives back runs.
func inlineReadsAs(s string, runs []Run, inTable bool) bool {
	src := s
	if inTable {
		src = "| |\n|---|\n| " + s + " |\n"
	}
	d, _, err := ImportMarkdown([]byte(src))
	if err != nil || len(d.Blocks) != 1 {
		return false
	}
	got := d.Blocks[0].RichText
	if inTable {
		b := d.Blocks[0]
		if b.Type != Table || len(b.Rows) != 1 || len(b.Rows[0].Cells) != 1 {
			return false
		}
		got = b.Rows[0].Cells[0]
	} else if d.Blocks[0].Type != Paragraph {
		return false
	}
	return runsEqual(sanitizeRuns(got), runs)
}

func runsEqual(a, b []Run) bool {
	return slices.EqualFunc(a, b, func(x, y Run) bool {
		return x.Text == y.Text && x.Link == y.Link && x.Title == y.Title && x.Equation == y.Equation && slices.Equal(x.Marks, y.Marks)
	})
}

// An inline token: an element opening or closing, or a run's text.
type inlineTok struct {
	open, close bool
	elem        inlineElem
	run         int
	pair        int // for open and close: the index of the other token
}

// inlineTokens nests the elements of runs.
func inlineTokens(runs []Run) []inlineTok {
	var toks []inlineTok
	var stack []int // indexes of open tokens
	end := func(e inlineElem, from int) int {
		j := from
		for j < len(runs) && slices.Contains(runElems(runs[j]), e) {
			j++
		}
		return j
	}
	closeTo := func(k int) {
		for len(stack) > k {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			toks[o].pair = len(toks)
			toks = append(toks, inlineTok{close: true, elem: toks[o].elem, pair: o})
		}
	}
	for i, r := range runs {
		want := runElems(r)
		k := 0
		for k < len(stack) && slices.Contains(want, toks[stack[k]].elem) {
			k++
		}
		closeTo(k)
		var opening []inlineElem
		for _, e := range want {
			if !slices.ContainsFunc(stack, func(o int) bool { return toks[o].elem == e }) {
				opening = append(opening, e)
			}
		}
		// want is in elemOrder already: a stable sort by extent keeps it
		// for ties.
		slices.SortStableFunc(opening, func(a, b inlineElem) int { return end(b, i) - end(a, i) })
		for _, e := range opening {
			stack = append(stack, len(toks))
			toks = append(toks, inlineTok{open: true, elem: e})
		}
		toks = append(toks, inlineTok{run: i})
	}
	closeTo(0)
	return toks
}

// writeInline writes runs; with delims, emphasis uses delimiters where
// they read as such. It reports whether it used any.
func writeInline(runs []Run, inTable, delims bool) (string, bool) {
	toks := inlineTokens(runs)
	// The text next to a token, for deciding whether a delimiter there
	// flanks: a neighbouring token writes punctuation.
	const punct = tokenPunct
	before := func(t int) rune {
		if t == 0 {
			return 0
		}
		p := toks[t-1]
		if p.open || p.close {
			return punct
		}
		r := runs[p.run]
		if r.Equation != "" || hasMark(r.Marks, CodeMark) {
			return punct
		}
		c, _ := utf8.DecodeLastRuneInString(r.Text)
		return c
	}
	after := func(t int) rune {
		if t+1 >= len(toks) {
			return 0
		}
		n := toks[t+1]
		if n.open || n.close {
			return punct
		}
		r := runs[n.run]
		if r.Equation != "" || hasMark(r.Marks, CodeMark) {
			return punct
		}
		c, _ := utf8.DecodeRuneInString(r.Text)
		return c
	}
	use := make([]bool, len(toks)) // open tokens written as delimiters
	used := false
	if delims {
		for t, tok := range toks {
			if !tok.open || tok.elem.mark == "" || tok.elem.mark == Underline {
				continue
			}
			c := tok.pair
			// A delimiter right after a closing one, or right before an
			// opening one, would join its run: those use tags.
			if t > 0 && toks[t-1].close || c+1 < len(toks) && toks[c+1].open {
				continue
			}
			if flanks(before(t), after(t), before(c), after(c)) {
				use[t] = true
				used = true
			}
		}
	}
	w := inlineWriter{inTable: inTable}
	for t, tok := range toks {
		switch {
		case tok.open && tok.elem.mark == "":
			if autolink(runs, toks, t) {
				w.raw("<" + tok.elem.link + ">")
				continue
			}
			if w.endsWithUnescaped('!') {
				// "!" before "[" would make the link an image.
				s := w.sb.String()
				w.sb.Reset()
				w.sb.WriteString(s[:len(s)-1] + "\\!")
			}
			w.raw("[")
			w.linkStart, w.linkOpen = w.sb.Len(), true
		case tok.close && tok.elem.mark == "":
			if autolink(runs, toks, tok.pair) {
				continue
			}
			if text := w.sb.String()[w.linkStart:]; text == "x" || text == "X" {
				// "- [x](…)" would read as a task item.
				s := w.sb.String()
				w.sb.Reset()
				w.sb.WriteString(s[:w.linkStart] + "&#" + strconv.Itoa(int(text[0])) + ";")
			}
			w.raw("](" + linkDest(tok.elem.link) + linkTitle(tok.elem.title) + ")")
			w.linkOpen = false
		case tok.open:
			w.raw(markOpen(tok.elem.mark, use[t]))
		case tok.close:
			w.raw(markClose(tok.elem.mark, use[tok.pair]))
		default:
			if autolink(runs, toks, t-1) {
				continue
			}
			var next *Run
			if tok.run+1 < len(runs) {
				next = &runs[tok.run+1]
			}
			w.text(runs[tok.run], next)
		}
	}
	return protectTrailingBlanks(w.sb.String()), used
}

// autolink reports whether the link opened at token t is written as
// <url>: one unmarked run whose text is the URL.
func autolink(runs []Run, toks []inlineTok, t int) bool {
	if t < 0 || !toks[t].open || toks[t].elem.mark != "" || toks[t].pair != t+2 {
		return false
	}
	r := runs[toks[t+1].run]
	return r.Text == r.Link && r.Title == "" && len(r.Marks) == 0 && isPlainURL(r.Link)
}

// flanks reports whether "*"-style delimiters around content from
// first to last, with before and after outside, read as emphasis.
func flanks(before, first, last, after rune) bool {
	if first <= 0 && first != tokenPunct || last <= 0 && last != tokenPunct || unicode.IsSpace(first) || unicode.IsSpace(last) {
		return false
	}
	if !innerOK(first) || !innerOK(last) {
		return false
	}
	loose := func(c rune) bool { return c == 0 || unicode.IsSpace(c) || isPunctRune(c) }
	if isPunctRune(first) && !loose(before) {
		return false
	}
	if isPunctRune(last) && !loose(after) {
		return false
	}
	return true
}

// tokenPunct stands for the punctuation a neighbouring delimiter, tag,
// code span or equation writes.
const tokenPunct rune = -1

func isPunctRune(c rune) bool { return c == tokenPunct || unicode.IsPunct(c) || unicode.IsSymbol(c) }

// innerOK reports whether c may stand just inside an emphasis delimiter:
// an escaped delimiter character there would join the delimiter run.
func innerOK(c rune) bool { return !strings.ContainsRune("*_~\\", c) }

func markOpen(m Mark, delim bool) string {
	switch m {
	case Bold:
		if delim {
			return "**"
		}
		return "<strong>"
	case Italic:
		if delim {
			return "*"
		}
		return "<em>"
	case Strike:
		if delim {
			return "~~"
		}
		return "<del>"
	}
	return "<u>"
}

func markClose(m Mark, delim bool) string {
	switch m {
	case Bold:
		if delim {
			return "**"
		}
		return "</strong>"
	case Italic:
		if delim {
			return "*"
		}
		return "</em>"
	case Strike:
		if delim {
			return "~~"
		}
		return "</del>"
	}
	return "</u>"
}

type inlineWriter struct {
	sb strings.Builder
	// inTable says the text is a table cell, where GFM splits cells at
	// every unescaped "|", code spans included.
	inTable   bool
	linkStart int  // where the text of the open link begins
	linkOpen  bool // a link's text is being written
}

func (w *inlineWriter) raw(s string) { w.sb.WriteString(s) }

func (w *inlineWriter) lastRune() rune {
	s := w.sb.String()
	if s == "" {
		return 0
	}
	c, _ := utf8.DecodeLastRuneInString(s)
	return c
}

// endsWithUnescaped reports whether the output ends with c that no
// backslash escapes.
func (w *inlineWriter) endsWithUnescaped(c byte) bool {
	s := w.sb.String()
	if !strings.HasSuffix(s, string(c)) {
		return false
	}
	n := 0
	for i := len(s) - 2; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}

func (w *inlineWriter) atLineStart() bool {
	s := w.sb.String()
	// The text of a link is written as if it began a line: its leading
	// blanks are kept as references, so that "- [ ](…)" is no task item.
	return s == "" || strings.HasSuffix(s, "\n") || w.linkOpen && w.sb.Len() == w.linkStart
}

// text writes the text of one run (its marks and link are written around
// it): an inline equation, a code span or escaped text.
func (w *inlineWriter) text(r Run, next *Run) {
	if r.Equation != "" && r.Text == "" {
		w.raw("$" + escapeMath(r.Equation) + "$")
		return
	}
	text := r.Text
	if text == "" {
		return
	}
	if !hasMark(r.Marks, CodeMark) {
		if c := text[0]; c >= '0' && c <= '9' && w.endsWithUnescaped('$') {
			// "$x$2" would not read as math: the digit goes as a
			// reference.
			w.raw("&#" + strconv.Itoa(int(c)) + ";")
			text = text[1:]
		}
		w.raw(escapeText(text, w.atLineStart()))
		return
	}
	if strings.ContainsAny(text, "\r\n") || w.lastRune() == '`' || next != nil && hasMark(next.Marks, CodeMark) {
		// A code span cannot hold a line break, and two spans side by
		// side would read as one: use the tag, whose content is
		// ordinary escaped text.
		w.raw("<code>" + escapeText(text, w.atLineStart()) + "</code>")
		return
	}
	span := codeSpan(text)
	if w.inTable {
		span = strings.ReplaceAll(span, "|", "\\|")
	}
	w.raw(span)
}
