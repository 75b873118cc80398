package localedit

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A row is one compiled line of a rule file: a pattern of elements and the
// replacement built from literal text and what the elements matched.
type row struct {
	rule  RuleID
	src   string // file:line, for explanations and errors
	lang  lang
	elems []elem
	repl  []part

	verbOnly bool // flag "verb": a {verb} in base form needs a verb context
	start    bool // flag "start": only at the start of a clause

	examples []example // what the row must and must not change (tests only)
}

type elemKind uint8

const (
	elLit     elemKind = iota // a|b|c
	elVerb                    // {make}: every form of the verb
	elSlotV                   // <V>: one verb word (Chinese)
	elSlotA                   // <A>: one modifier word (Chinese)
	elSlotAny                 // <*>: one to four words (Chinese)
)

type elem struct {
	kind elemKind
	alts []string // lower-cased literals (elLit)
	verb string   // base form (elVerb)
	// forms are the verb's forms (elVerb), filled in once forms.en.tsv is
	// read.
	forms verbForms
	opt   bool
}

// part of a replacement: literal text, the text an element matched (ref),
// or a verb inflected like the pattern's {verb} element (verb).
type part struct {
	lit  string
	ref  int // 1-based element index; 0 for none
	verb string
}

// compileRow parses one rule line. The syntax is in rules/README.md.
func compileRow(lg lang, pattern, repl, flags string) (*row, error) {
	r := &row{lang: lg}
	if strings.TrimSpace(pattern) == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	for _, tok := range strings.Split(pattern, " ") {
		if tok == "" {
			return nil, fmt.Errorf("pattern %q: double space", pattern)
		}
		var e elem
		if strings.HasSuffix(tok, "?") && len(tok) > 1 {
			e.opt = true
			tok = strings.TrimSuffix(tok, "?")
		}
		switch {
		case tok == "<V>" || tok == "<A>" || tok == "<*>":
			if lg != langZH {
				return nil, fmt.Errorf("pattern %q: slot %s is for Chinese rules", pattern, tok)
			}
			e.kind = map[string]elemKind{"<V>": elSlotV, "<A>": elSlotA, "<*>": elSlotAny}[tok]
		case strings.HasPrefix(tok, "{") && strings.HasSuffix(tok, "}"):
			if lg != langEN {
				return nil, fmt.Errorf("pattern %q: {verb} is for English rules", pattern)
			}
			e.kind, e.verb = elVerb, tok[1:len(tok)-1]
		default:
			for _, a := range strings.Split(tok, "|") {
				if a == "" {
					return nil, fmt.Errorf("pattern %q: empty alternative", pattern)
				}
				e.alts = append(e.alts, normWord(a))
			}
		}
		r.elems = append(r.elems, e)
	}
	if r.elems[0].opt {
		return nil, fmt.Errorf("pattern %q: the first element cannot be optional", pattern)
	}
	var err error
	if r.repl, err = compileRepl(r, repl); err != nil {
		return nil, fmt.Errorf("replacement %q: %w", repl, err)
	}
	for _, f := range strings.Fields(strings.ReplaceAll(flags, ",", " ")) {
		switch f {
		case "verb":
			r.verbOnly = true
		case "start":
			r.start = true
		default:
			return nil, fmt.Errorf("unknown flag %q (known: verb, start)", f)
		}
	}
	return r, nil
}

func compileRepl(r *row, s string) ([]part, error) {
	var out []part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, part{lit: lit.String()})
			lit.Reset()
		}
	}
	slot := func(k elemKind) int {
		for i, e := range r.elems {
			if e.kind == k {
				return i + 1
			}
		}
		return 0
	}
	for i := 0; i < len(s); {
		switch {
		case s[i] == '$':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(s[i+1 : j])
			if err != nil || n < 1 || n > len(r.elems) {
				return nil, fmt.Errorf("bad element reference %q", s[i:j])
			}
			flush()
			out = append(out, part{ref: n})
			i = j
		case strings.HasPrefix(s[i:], "<V>") || strings.HasPrefix(s[i:], "<A>") || strings.HasPrefix(s[i:], "<*>"):
			k := map[string]elemKind{"<V>": elSlotV, "<A>": elSlotA, "<*>": elSlotAny}[s[i:i+3]]
			n := slot(k)
			if n == 0 {
				return nil, fmt.Errorf("%s is not in the pattern", s[i:i+3])
			}
			flush()
			out = append(out, part{ref: n})
			i += 3
		case s[i] == '{':
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("unclosed {")
			}
			if slot(elVerb) == 0 {
				return nil, fmt.Errorf("{verb} in the replacement needs a {verb} in the pattern")
			}
			flush()
			out = append(out, part{verb: s[i+1 : i+j]})
			i += j + 1
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			lit.WriteString(s[i : i+n])
			i += n
		}
	}
	flush()
	return out, nil
}

// capture is what one element matched: tokens [from, to) of the sentence's
// word list (to == from when an optional element is absent).
type capture struct {
	from, to int
	form     verbForm
}

// matcher matches rows against one sentence.
type matcher struct {
	a    *analysis
	d    *data
	idx  []int // indices into a.toks of the sentence's non-space tokens
	caps []capture
}

// matchAt tries r at word i; on success m.caps holds one capture per element
// and end is the word after the match.
func (m *matcher) matchAt(r *row, i int) (end int, ok bool) {
	m.caps = m.caps[:0]
	for range r.elems {
		m.caps = append(m.caps, capture{})
	}
	return m.match(r, 0, i)
}

func (m *matcher) match(r *row, ei, ti int) (int, bool) {
	if ei == len(r.elems) {
		return ti, true
	}
	e := r.elems[ei]
	// Chinese elements are contiguous: no space between two of them.
	joined := ei == 0 || r.lang != langZH || (ti > 0 && ti < len(m.idx) && m.adjacent(ti-1, ti))
	if !joined {
		if e.opt {
			m.caps[ei] = capture{from: ti, to: ti}
			return m.match(r, ei+1, ti)
		}
		return 0, false
	}
	for _, n := range m.candidates(r, e, ti) {
		m.caps[ei] = capture{from: ti, to: ti + n.len, form: n.form}
		if end, ok := m.match(r, ei+1, ti+n.len); ok {
			return end, true
		}
	}
	if e.opt {
		m.caps[ei] = capture{from: ti, to: ti}
		return m.match(r, ei+1, ti)
	}
	return 0, false
}

type cand struct {
	len  int
	form verbForm
}

// candidates returns the word counts element e can match at word ti,
// preferred first.
func (m *matcher) candidates(r *row, e elem, ti int) []cand {
	if ti >= len(m.idx) {
		return nil
	}
	t := &m.a.toks[m.idx[ti]]
	switch e.kind {
	case elLit:
		var out []cand
		for _, alt := range e.alts {
			if r.lang == langEN {
				if t.lower == alt {
					out = append(out, cand{len: 1})
				}
				continue
			}
			// Chinese: the literal must cover whole words.
			acc := ""
			for j := ti; j < len(m.idx) && len(acc) < len(alt); j++ {
				if j > ti && !m.adjacent(j-1, j) {
					break
				}
				acc += m.a.toks[m.idx[j]].lower
				if acc == alt {
					out = append(out, cand{len: j - ti + 1})
					break
				}
			}
		}
		return out
	case elVerb:
		for f, w := range e.forms {
			if w == t.lower {
				return []cand{{len: 1, form: verbForm(f)}}
			}
		}
	case elSlotV:
		// A verb right before 的 modifies what follows (反复的比较): it is
		// not the clause's verb.
		if ti+1 < len(m.idx) && m.a.toks[m.idx[ti+1]].text == "的" && m.adjacent(ti, ti+1) {
			return nil
		}
		if strings.HasPrefix(t.pos, "v") && t.kind == tokWord && utf8.RuneCountInString(t.text) >= 2 && !weakVerbs[t.text] {
			return []cand{{len: 1}}
		}
	case elSlotA:
		if isHanWord(t) && utf8.RuneCountInString(t.text) >= 2 && !notModifier(t.pos) && !weakVerbs[t.text] {
			return []cand{{len: 1}}
		}
	case elSlotAny:
		var out []cand
		n := 0
		for j := ti; j < len(m.idx) && j < ti+4; j++ {
			u := &m.a.toks[m.idx[j]]
			if u.kind != tokWord || (j > ti && !m.adjacent(j-1, j)) || weakVerbs[u.text] || u.text == "的" {
				break
			}
			n += utf8.RuneCountInString(u.text)
			if n >= 2 {
				out = append(out, cand{len: j - ti + 1})
			}
		}
		return out
	}
	return nil
}

// adjacent reports whether words i and j (i < j) of the sentence touch.
func (m *matcher) adjacent(i, j int) bool {
	return m.a.toks[m.idx[i]].end == m.a.toks[m.idx[j]].start
}

// weakVerbs are the verbs the strong-verb rules remove; they never fill a
// <V> or <A> slot themselves.
var weakVerbs = map[string]bool{
	"进行": true, "加以": true, "予以": true, "做出": true, "作出": true, "给予": true,
	"是": true, "有": true, "了": true, "对": true,
}

func notModifier(pos string) bool {
	if pos == "" {
		return true
	}
	switch pos[0] {
	case 'u', 'p', 'c', 'r', 'm', 'x', 'q', 'y', 'e', 'o', 'w':
		return true
	}
	return false
}

// rowIndex finds the rows that can match at a word by the word's first key
// (an English word, or a Chinese word's first character), keeping file
// order.
type rowIndex struct {
	rows  []*row
	byKey map[string][]int
	wild  []int // rows whose first element is a slot
}

func newRowIndex(rows []*row) *rowIndex {
	ix := &rowIndex{rows: rows, byKey: map[string][]int{}}
	for i, r := range rows {
		e := r.elems[0]
		var keys []string
		switch e.kind {
		case elLit:
			for _, a := range e.alts {
				keys = append(keys, firstKey(r.lang, a))
			}
		case elVerb:
			keys = e.forms[:]
		default:
			ix.wild = append(ix.wild, i)
			continue
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				ix.byKey[k] = append(ix.byKey[k], i)
			}
		}
	}
	return ix
}

func firstKey(lg lang, word string) string {
	if lg == langZH {
		r, n := utf8.DecodeRuneInString(word)
		if r == utf8.RuneError {
			return ""
		}
		return word[:n]
	}
	return word
}

// candidates returns the rows to try at a word, in file order.
func (ix *rowIndex) candidates(lg lang, word string, buf []*row) []*row {
	buf = buf[:0]
	a, b := ix.byKey[firstKey(lg, word)], ix.wild
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || len(a) > 0 && a[0] < b[0] {
			buf = append(buf, ix.rows[a[0]])
			a = a[1:]
		} else {
			buf = append(buf, ix.rows[b[0]])
			b = b[1:]
		}
	}
	return buf
}
