package localedit

import (
	"strings"
	"unicode"

	split "github.com/foliodev/folio/assistant/sentence"
)

type tokKind uint8

const (
	tokWord tokKind = iota + 1
	tokPunct
	tokSpace
)

// token is one word, punctuation mark or run of spaces, in code points.
type token struct {
	start, end int
	text       string
	lower      string // normWord(text), for matching
	pos        string // part of speech from the segmenter (Chinese only)
	kind       tokKind
}

type atomKind uint8

// Kinds of movable protected spans. A rule may move one whole (a passive
// agent that is a name) but never change or split it.
const (
	atomNumber atomKind = iota + 1
	atomDate
	atomName
	atomCode
	atomLink
	atomEquation
)

type span struct {
	start, end int
	kind       atomKind
}

type sentence struct {
	start, end  int
	lang        lang
	words       []int // indices into analysis.toks of the non-space tokens
	firstPerson bool  // a first-person fact: its facts are hard (markFacts)
}

// analysis is what the rules look at: one segment's text split into
// sentences and tokens, with its protected spans.
//
// hard marks text no edit may touch (quotes, the facts of first-person
// sentences); atom marks
// movable protected spans (index+1 into atoms, 0 for none).
type analysis struct {
	text  []rune
	toks  []token
	sents []sentence
	hard  []hardKind
	atom  []int32
	atoms []span
	mask  []uint8 // the caller's mask (see callerMarks), nil for none
	cls   []int32 // the caller's formatting classes, nil for none

	factsOf   [][]string // facts of each sentence, filled by facts
	factsDone []bool

	// scratch holds the buffers keepsInvariant reuses: the candidate text
	// (out), the sentences of the text it replaces (in), and an analysis
	// to split out with.
	scratch *analysis
	out     []rune
	in      []sentence
}

// free reports whether the caller lets edits change code point i.
func (a *analysis) free(i int) bool { return a.mask == nil || a.mask[i] == maskFree }

type hardKind uint8

const (
	hardQuote hardKind = iota + 1
	hardFirstPerson
)

// analyse splits text into sentences and tokens and finds its protected
// spans. force, when not zero, is the language of every sentence.
func (e *engine) analyse(text []rune, force lang) *analysis {
	a := &analysis{
		text: text,
		toks: make([]token, 0, len(text)/2+8),
		hard: make([]hardKind, len(text)),
		atom: make([]int32, len(text)),
	}
	a.findRegions()
	a.splitSentences()
	for i := range a.sents {
		s := &a.sents[i]
		s.lang = force
		if s.lang == 0 {
			s.lang = detectLang(text[s.start:s.end])
		}
		first := len(a.toks)
		a.toks = e.tokenizeCached(s.lang, text, s.start, s.end, a.toks)
		for j := first; j < len(a.toks); j++ {
			if a.toks[j].kind != tokSpace {
				s.words = append(s.words, j)
			}
		}
	}
	for i := range a.sents {
		s := &a.sents[i]
		if s.lang == langZH {
			e.atomsZH(a, s)
		} else {
			e.atomsEN(a, s)
		}
	}
	for i := range a.sents {
		s := &a.sents[i]
		if e.firstPersonFact(a, s) {
			s.firstPerson = true
			e.markFacts(a, s)
		}
	}
	return a
}

// markFacts protects what a first-person sentence claims: the first-person
// words (who), and the fact words of keep.*.tsv — negations, hedges and
// quantities ("not", "never", "about", "almost"; 没有, 从未, 大约, 基本上),
// experience markers ("once", 曾) — which, with the numbers, dates, names
// and quotes protected everywhere, are what happened, when, where and how
// much. The grammar around them stays free: "we made a decision to" may
// become "we decided to".
func (e *engine) markFacts(a *analysis, s *sentence) {
	lists := e.d.enLists
	if s.lang == langZH {
		lists = e.d.zhLists
	}
	for _, ti := range s.words {
		t := &a.toks[ti]
		if t.kind != tokWord || a.atom[t.start] != 0 {
			continue
		}
		key := t.lower
		if s.lang == langZH {
			key = t.text
		}
		if hasKey(lists["first-person"], key) || hasKey(lists["fact"], key) || s.lang == langEN && strings.HasSuffix(key, "n't") {
			for k := t.start; k < t.end; k++ {
				if a.hard[k] == 0 {
					a.hard[k] = hardFirstPerson
				}
			}
		}
	}
}

// addAtom marks [start, end) as a protected span of kind k, merging it with
// any span it overlaps.
func (a *analysis) addAtom(start, end int, k atomKind) {
	if start >= end {
		return
	}
	for i := start; i < end; i++ {
		if id := a.atom[i]; id != 0 {
			o := a.atoms[id-1]
			if o.start < start {
				start = o.start
			}
			if o.end > end {
				end = o.end
			}
			k = o.kind
		}
	}
	// Extend over spans touched at the edges that now overlap.
	for i := start; i < end; i++ {
		if id := a.atom[i]; id != 0 && a.atoms[id-1].end > end {
			end = a.atoms[id-1].end
		}
	}
	a.atoms = append(a.atoms, span{start, end, k})
	id := int32(len(a.atoms))
	for i := start; i < end; i++ {
		a.atom[i] = id
	}
}

func (a *analysis) atomAt(i int) (span, bool) {
	if i < 0 || i >= len(a.atom) || a.atom[i] == 0 {
		return span{}, false
	}
	return a.atoms[a.atom[i]-1], true
}

// closeOf is the closing mark of each opening quote, code or equation mark.
var closeOf = map[rune]rune{'“': '”', '「': '」', '『': '』', '《': '》', '"': '"', '`': '`', '$': '$'}

// findRegions marks quotes (hard), code, links and equations (atoms).
func (a *analysis) findRegions() {
	t := a.text
	n := len(t)
	for i := 0; i < n; i++ {
		r := t[i]
		switch {
		case r == '\uFFFC':
			a.addAtom(i, i+1, atomEquation)
		case r == '`' || r == '$':
			j := indexRune(t, i+1, n, closeOf[r], 400)
			if j < 0 || j == i+1 {
				continue
			}
			k := atomCode
			if r == '$' {
				k = atomEquation
			}
			a.addAtom(i, j+1, k)
			i = j
		case closeOf[r] != 0:
			j := indexRune(t, i+1, n, closeOf[r], -1)
			end := n
			if j >= 0 {
				end = j + 1
			}
			for k := i; k < end; k++ {
				a.hard[k] = hardQuote
			}
			i = end - 1
		case r == '@' && i > 0 && i+1 < n && isMailRune(t[i-1]) && isWordRune(t[i+1]):
			// An e-mail address: the local part before, the domain after.
			s := i
			for s > 0 && isMailRune(t[s-1]) && a.atom[s-1] == 0 && a.hard[s-1] == 0 {
				s--
			}
			j := i + 1
			for j < n && (isWordRune(t[j]) && !isHan(t[j]) || t[j] == '.' || t[j] == '-') {
				j++
			}
			for j > i+1 && t[j-1] == '.' {
				j--
			}
			a.addAtom(s, j, atomLink)
			i = j - 1
		case (r == 'h' || r == 'H' || r == 'w' || r == 'W') && (i == 0 || !isWordRune(t[i-1])):
			if !hasPrefixFold(t[i:], "http://") && !hasPrefixFold(t[i:], "https://") && !hasPrefixFold(t[i:], "www.") {
				continue
			}
			j := i
			for j < n && !unicode.IsSpace(t[j]) && !isHan(t[j]) && !isCJKPunct(t[j]) && t[j] != '"' && t[j] != '\uFFFC' {
				j++
			}
			for j > i && strings.ContainsRune(".,;:!?)]}'", t[j-1]) {
				j--
			}
			a.addAtom(i, j, atomLink)
			i = j - 1
		}
	}
}

func indexRune(t []rune, from, to int, r rune, limit int) int {
	for j := from; j < to; j++ {
		if limit >= 0 && j-from > limit {
			return -1
		}
		if t[j] == r {
			return j
		}
		if limit >= 0 && t[j] == '\n' {
			return -1
		}
	}
	return -1
}

// splitSentences cuts the text where split.Ends (assistant/sentence) says sentences end,
// never inside a quote, code span, link or equation (the regions
// findRegions marked).
func (a *analysis) splitSentences() {
	start := 0
	for _, end := range split.Ends(a.text, a.opaque) {
		a.sents = append(a.sents, sentence{start: start, end: end})
		start = end
	}
}

// opaque reports whether code point i is inside a region no sentence end
// may fall in.
func (a *analysis) opaque(i int) bool { return a.hard[i] != 0 || a.atom[i] != 0 }

// detectLang says whether a sentence is Chinese: any Han characters, and at
// least a third as many as Latin letters.
func detectLang(s []rune) lang {
	han, latin := 0, 0
	for _, r := range s {
		switch {
		case isHan(r):
			han++
		case r < 0x250 && unicode.IsLetter(r):
			latin++
		}
	}
	if han > 0 && han*3 >= latin {
		return langZH
	}
	return langEN
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

func isCJKPunct(r rune) bool {
	return (r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFF0F) || (r >= 0xFF1A && r <= 0xFF20) || r == '，' || r == '、'
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// hasPrefixFold reports whether t starts with the ASCII prefix p, in any
// case.
func hasPrefixFold(t []rune, p string) bool {
	if len(t) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if unicode.ToLower(t[i]) != rune(p[i]) {
			return false
		}
	}
	return true
}

// isMailRune: a character of an e-mail address's local part.
func isMailRune(r rune) bool {
	return r < 0x80 && (isWordRune(r) || strings.ContainsRune("._%+-", r))
}

func isHanWord(t *token) bool {
	if t.kind != tokWord {
		return false
	}
	for _, r := range t.text {
		if !isHan(r) {
			return false
		}
	}
	return true
}

// isInitial: one upper-case letter ("J" of "J. R. Smith").
func isInitial(s string) bool {
	r := []rune(s)
	return len(r) == 1 && unicode.IsUpper(r[0])
}

func hasDigit(s string) bool {
	for _, r := range s {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// atomsEN finds numbers, dates and names in an English sentence.
func (e *engine) atomsEN(a *analysis, s *sentence) {
	lists := e.d.enLists
	w := s.words
	for k, ti := range w {
		t := &a.toks[ti]
		if t.kind != tokWord {
			continue
		}
		switch {
		case unicode.IsDigit([]rune(t.text)[0]) || hasKey(lists["number"], t.lower):
			start, end := t.start, t.end
			if k > 0 && strings.ContainsAny(a.toks[w[k-1]].text, "$€£¥") && a.toks[w[k-1]].end == start {
				start = a.toks[w[k-1]].start
			}
			if k+1 < len(w) && a.toks[w[k+1]].text == "%" && a.toks[w[k+1]].start == end {
				end = a.toks[w[k+1]].end
			}
			a.addAtom(start, end, atomNumber)
		case hasKey(lists["time"], t.lower), hasKey(lists["date"], t.lower) && isCapitalised(t.text):
			a.addAtom(t.start, t.end, atomDate)
		}
	}
	// Dotted abbreviations (U.S., e.g., a.m.): single letters with a full
	// stop after each are one span, kept whole.
	for k := 0; k+1 < len(w); k++ {
		t := &a.toks[w[k]]
		if t.kind != tokWord || len([]rune(t.text)) != 1 || !unicode.IsLetter([]rune(t.text)[0]) || k > 0 && a.toks[w[k-1]].end == t.start {
			continue
		}
		j := k
		for j+1 < len(w) && a.toks[w[j+1]].text == "." && a.toks[w[j+1]].start == a.toks[w[j]].end {
			j++ // the full stop
			if j+1 < len(w) && a.toks[w[j+1]].start == a.toks[w[j]].end && len([]rune(a.toks[w[j+1]].text)) == 1 && unicode.IsLetter([]rune(a.toks[w[j+1]].text)[0]) {
				j++
				continue
			}
			break
		}
		if j-k >= 3 {
			a.addAtom(t.start, a.toks[w[j]].end, atomName)
			k = j
		}
	}
	// Names: runs of capitalised words; a single one only inside the
	// sentence (a capital at the start says nothing) or when all capitals.
	for k := 0; k < len(w); {
		t := &a.toks[w[k]]
		if t.kind != tokWord || !isCapitalised(t.text) || t.text == "I" {
			k++
			continue
		}
		j := k + 1
		for j < len(w) {
			u := &a.toks[w[j]]
			prev := &a.toks[w[j-1]]
			if u.text == "." && u.start == prev.end && j+1 < len(w) && (hasKey(lists["title"], prev.lower) || isInitial(prev.text)) {
				// "Dr. Chen", "J. R. Smith": a title or an initial, its full
				// stop and the capitalised word after them are one name.
				if v := &a.toks[w[j+1]]; v.kind == tokWord && isCapitalised(v.text) && v.start-u.end == 1 {
					j += 2
					continue
				}
			}
			if u.kind != tokWord || !isCapitalised(u.text) || u.text == "I" || u.start-prev.end != 1 {
				break
			}
			j++
		}
		first := k == 0 || (k == 1 && a.toks[w[0]].kind == tokPunct)
		allCaps := len([]rune(t.text)) > 1 && strings.ToUpper(t.text) == t.text && !hasDigit(t.text)
		if j-k >= 2 || !first || allCaps {
			a.addAtom(t.start, a.toks[w[j-1]].end, atomName)
		}
		k = j
	}
}

// firstPersonFact reports whether a sentence states a fact about the author:
// a first-person word and a number, date, name or an experience marker (or,
// in English, a past-tense verb right after "I" or "we").
func (e *engine) firstPersonFact(a *analysis, s *sentence) bool {
	lists := e.d.enLists
	if s.lang == langZH {
		lists = e.d.zhLists
	}
	person, fact := false, false
	for k, ti := range s.words {
		t := &a.toks[ti]
		if s.lang == langEN {
			switch {
			case t.text == "I", t.lower != "i" && t.lower != "us" && hasKey(lists["first-person"], t.lower), t.text == "us":
				person = true
				if k+1 < len(s.words) && (t.text == "I" || t.lower == "we") {
					next := a.toks[s.words[k+1]].lower
					if ref, ok := e.d.formOf[next]; ok && ref.form == formPast || looksPast(next) {
						fact = true
					}
				}
			case hasKey(lists["experience"], t.lower):
				fact = true
			}
		} else {
			switch {
			case hasKey(lists["first-person"], t.text):
				person = true
			case hasKey(lists["experience"], t.text):
				fact = true
			}
		}
		if at, ok := a.atomAt(t.start); ok && (at.kind == atomNumber || at.kind == atomDate || at.kind == atomName) {
			fact = true
		}
	}
	return person && fact
}

// looksPast: a regular past tense (worked, decided), not a verb that merely
// ends in -ed (need, proceed).
func looksPast(w string) bool {
	return len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed")
}
