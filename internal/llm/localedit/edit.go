package localedit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-ego/gse"
)

// Limits of one request: the work and memory of Edit grow linearly with the
// text, and these bound them.
const (
	// MaxBytes is the most text (all segments together) one request edits.
	MaxBytes = 1 << 20
	// MaxSegments is the most segments one request holds.
	MaxSegments = 10_000
	// maxPasses bounds the fixed-point loop; the rules converge in two or
	// three passes on real text.
	maxPasses = 6
)

var (
	ErrTooLarge    = errors.New("localedit: text too large")
	ErrInvalidText = errors.New("localedit: text is not valid UTF-8")
	ErrUnknownRule = errors.New("localedit: unknown rule")
	ErrBadLang     = errors.New("localedit: unknown language")
	ErrBadSpan     = errors.New("localedit: span outside its segment")
)

// Lang is the language to edit as.
type Lang string

// Languages. Auto detects Chinese or English per sentence.
const (
	Auto    Lang = ""
	Chinese Lang = "zh"
	English Lang = "en"
)

// Request is one editing request.
type Request struct {
	// Segments are plain texts edited independently: typically one per
	// text block, rich-text runs concatenated, each inline equation as one
	// U+FFFC (kept exactly, like every protected span).
	Segments []string
	// Lang forces the language of every sentence; Auto detects it.
	Lang Lang
	// Rules are the rules enabled; empty means all six. Keep is always on.
	Rules []RuleID
	// Keep, when not nil, has one entry per segment: spans no edit may
	// touch, besides the protected spans the engine finds itself. A caller
	// editing rich text protects its link, code and equation runs this way.
	// An edit refused for touching one counts as touching protected text
	// (CodeProtected).
	Keep [][]Span
	// Within, when not nil, has one entry per segment: the only span edits
	// may fall in (nil: the whole segment), such as a selection. The text
	// around it is context: it is read (sentences, first-person facts) but
	// never changed, and candidates there are not reported.
	Within []*Span
	// Breaks, when not nil, has one entry per segment: the code-point
	// offsets where the text's formatting changes (between rich-text runs
	// with different marks). An edit's changed text — what is left once
	// the text its before and after share at the start and at the end is
	// set aside — may start or end at a break but not span one, so each
	// part of the new text has one formatting. An edit refused for that
	// counts as touching protected text.
	Breaks [][]int
}

// Span is the code points [From, To) of a segment.
type Span struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Change is one edit: the text Before at code points [From, To) of the input
// segment became After. Changes of a segment are sorted and do not overlap;
// applying them gives the output segment.
type Change struct {
	Segment int      `json:"segment"`
	From    int      `json:"from"`
	To      int      `json:"to"`
	Before  string   `json:"before"`
	After   string   `json:"after"`
	Rules   []RuleID `json:"rules"` // the rules that made it, in the preset's order
}

// Outcome says whether anything changed.
type Outcome string

// Outcomes.
const (
	Edited   Outcome = "edited"
	NoChange Outcome = "no_change"
)

// Codes of a NoChange result: why nothing is proposed.
const (
	CodeEmpty        = "empty"         // no text to edit
	CodeNothingFound = "nothing_found" // no rule applies
	CodeProtected    = "protected"     // the only candidates touch protected text
	CodeCannotHonour = "cannot_honour" // see CanHonour
)

// Result is the outcome of Edit.
type Result struct {
	Outcome Outcome `json:"outcome"`
	// Code and Reason say why nothing changed (NoChange only).
	Code   string `json:"code,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Segments are the output texts, one per input segment.
	Segments []string `json:"segments"`
	// Edits are the changes, by segment, then by position.
	Edits []Change `json:"edits"`
	// Facts are the first-person facts kept in the sentences the edits
	// changed (the numbers, dates, names and fact words of "we made a
	// decision in 2023" → "we decided in 2023"), by segment, then by
	// position; none when no edit is in a first-person sentence.
	Facts []Fact `json:"facts,omitempty"`
}

// Fact is a first-person fact an edit's sentence kept: the text Text at code
// points [From, To) of the input segment, unchanged in the output.
type Fact struct {
	Segment int    `json:"segment"`
	From    int    `json:"from"`
	To      int    `json:"to"`
	Text    string `json:"text"`
}

// Edit applies the enabled rules to every segment. The same request always
// gives the same result, and editing a result again proposes nothing. It
// returns ErrTooLarge, ErrInvalidText, ErrUnknownRule or ErrBadLang for a
// request it refuses, and an error when its rule data cannot be loaded.
func Edit(req Request) (Result, error) { return edit(req, nil) }

// edit is Edit with a hook that sets up the engine once its rule data is
// loaded (the tests run one row, or count what each row does).
func edit(req Request, tune func(*engine)) (Result, error) {
	if len(req.Segments) > MaxSegments {
		return Result{}, fmt.Errorf("%w: %d segments, at most %d", ErrTooLarge, len(req.Segments), MaxSegments)
	}
	size := 0
	han := false
	for i, s := range req.Segments {
		size += len(s)
		if !utf8.ValidString(s) {
			return Result{}, fmt.Errorf("%w: segment %d", ErrInvalidText, i)
		}
		if !han && strings.ContainsFunc(s, isHan) {
			han = true
		}
	}
	if size > MaxBytes {
		return Result{}, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, size, MaxBytes)
	}
	marks, err := callerMarks(req)
	if err != nil {
		return Result{}, err
	}
	e := &engine{rules: map[RuleID]bool{}}
	switch req.Lang {
	case Auto:
	case Chinese:
		e.force = langZH
	case English:
		e.force = langEN
		han = false
	default:
		return Result{}, fmt.Errorf("%w: %q (use zh, en or empty)", ErrBadLang, req.Lang)
	}
	if len(req.Rules) == 0 {
		for _, r := range Rules {
			e.rules[r.ID] = true
		}
	}
	for _, id := range req.Rules {
		if _, ok := LookupRule(id); !ok {
			return Result{}, fmt.Errorf("%w: %q", ErrUnknownRule, id)
		}
		e.rules[id] = true
	}
	if e.d, err = loadData(); err != nil {
		return Result{}, err
	}
	if tune != nil {
		tune(e)
	}
	if han || e.force == langZH {
		if e.seg, err = zhSegmenter(); err != nil {
			return Result{}, err
		}
	}
	res := Result{Segments: make([]string, len(req.Segments)), Edits: []Change{}}
	blank := true
	for i, s := range req.Segments {
		if strings.TrimSpace(editable(s, req, i)) != "" {
			blank = false
		}
		out, changes, facts := e.segment(s, marks[i])
		res.Segments[i] = out
		for _, c := range changes {
			c.Segment = i
			res.Edits = append(res.Edits, c)
		}
		for _, f := range facts {
			f.Segment = i
			res.Facts = append(res.Facts, f)
		}
	}
	switch {
	case len(res.Edits) > 0:
		res.Outcome = Edited
	case blank:
		res.Outcome, res.Code, res.Reason = NoChange, CodeEmpty, "no change proposed: there is no text to edit"
	case e.blocked > 0:
		res.Outcome, res.Code = NoChange, CodeProtected
		res.Reason = "no change proposed: the only candidate edits touch protected text (quotes, names, numbers, dates, code, links, equations or first-person facts), which the rules never change"
		if e.blockedFormat > 0 {
			res.Reason = "no change proposed: the only candidate edits touch protected text (quotes, names, numbers, dates, code, links, equations or first-person facts) or would join differently formatted text, which the rules never do"
		}
	default:
		res.Outcome, res.Code = NoChange, CodeNothingFound
		res.Reason = "no change proposed: " + e.nothingFound()
	}
	return res, nil
}

// Values of a segment's mask: what a caller said about each code point.
const (
	maskFree    uint8 = iota // editable
	maskKeep                 // Request.Keep: protected
	maskOutside              // outside Request.Within: context only
)

// callerMark is what a caller said about a segment's code points.
type callerMark struct {
	mask []uint8 // maskFree, maskKeep or maskOutside each; nil for none
	cls  []int32 // formatting class each (Request.Breaks); nil for none
}

// callerMarks checks the request's Keep, Within and Breaks and turns them
// into one callerMark per segment.
func callerMarks(req Request) ([]callerMark, error) {
	marks := make([]callerMark, len(req.Segments))
	if req.Keep == nil && req.Within == nil && req.Breaks == nil {
		return marks, nil
	}
	for _, f := range []struct {
		name string
		set  bool
		n    int
	}{{"keep", req.Keep != nil, len(req.Keep)}, {"within", req.Within != nil, len(req.Within)}, {"breaks", req.Breaks != nil, len(req.Breaks)}} {
		if f.set && f.n != len(req.Segments) {
			return nil, fmt.Errorf("%w: %d %s entries for %d segments", ErrBadSpan, f.n, f.name, len(req.Segments))
		}
	}
	for i, s := range req.Segments {
		var keep []Span
		var within *Span
		var breaks []int
		if req.Keep != nil {
			keep = req.Keep[i]
		}
		if req.Within != nil {
			within = req.Within[i]
		}
		if req.Breaks != nil {
			breaks = req.Breaks[i]
		}
		n := utf8.RuneCountInString(s)
		check := func(sp Span) error {
			if sp.From < 0 || sp.To < sp.From || sp.To > n {
				return fmt.Errorf("%w: [%d, %d) of segment %d, which has %d code points", ErrBadSpan, sp.From, sp.To, i, n)
			}
			return nil
		}
		if len(keep) > 0 || within != nil {
			m := make([]uint8, n)
			if within != nil {
				if err := check(*within); err != nil {
					return nil, err
				}
				for k := range m {
					if k < within.From || k >= within.To {
						m[k] = maskOutside
					}
				}
			}
			for _, sp := range keep {
				if err := check(sp); err != nil {
					return nil, err
				}
				for k := sp.From; k < sp.To; k++ {
					if m[k] == maskFree {
						m[k] = maskKeep
					}
				}
			}
			marks[i].mask = m
		}
		if len(breaks) > 0 {
			at := make([]bool, n)
			for _, b := range breaks {
				if b <= 0 || b >= n {
					return nil, fmt.Errorf("%w: break %d of segment %d, which has %d code points", ErrBadSpan, b, i, n)
				}
				at[b] = true
			}
			c := make([]int32, n)
			for k := 1; k < n; k++ {
				c[k] = c[k-1]
				if at[k] {
					c[k]++
				}
			}
			marks[i].cls = c
		}
	}
	return marks, nil
}

// editable is the text of segment i that edits may change.
func editable(s string, req Request, i int) string {
	if req.Within == nil || req.Within[i] == nil {
		return s
	}
	r := []rune(s)
	w := req.Within[i]
	if w.From < 0 || w.To > len(r) || w.From > w.To {
		return s
	}
	return string(r[w.From:w.To])
}

func (e *engine) nothingFound() string {
	var names []string
	for _, r := range Rules {
		if e.rules[r.ID] && r.ID != Keep {
			names = append(names, string(r.ID))
		}
	}
	if len(names) == 0 {
		return "no editing rule is enabled"
	}
	return "no enabled rule (" + strings.Join(names, ", ") + ") finds anything to change in this text"
}

// engine is one Edit call's state.
type engine struct {
	d       *data
	seg     *gse.Segmenter // nil when no text is Chinese
	rules   map[RuleID]bool
	force   lang
	blocked int // candidate edits refused for touching protected text
	// blockedFormat counts those of them refused for spanning a break.
	blockedFormat int
	// only, when not nil, is the one pattern row the engine runs (the
	// rule examples' test).
	only *row
	// fired counts the changes each row made (the corpus measurement), when
	// not nil.
	fired map[*row]int
	// tokCache holds the tokens of the sentences seen so far
	// (tokenizeCached), offsets relative to the sentence.
	tokCache map[tokKey][]token
}

// proposal is a candidate edit in the current text's code points.
type proposal struct {
	from, to int
	repl     string
}

// segment edits one text to a fixed point: every enabled rule runs in
// applyOrder, on the text the previous one left, until a whole pass changes
// nothing. Changes are tracked against the original text. cm is what the
// caller said about the original text's code points.
func (e *engine) segment(text string, cm callerMark) (string, []Change, []Fact) {
	orig := []rune(text)
	pcs := []piece{{from: 0, to: len(orig), text: orig}}
	cur := orig
	var a *analysis  // of cur; nil once cur changed
	var a0 *analysis // of orig
	for pass := 0; pass < maxPasses; pass++ {
		changed := false
		for _, id := range applyOrder {
			if !e.rules[id] {
				continue
			}
			if a == nil {
				a = e.analyse(cur, e.force)
				a.mask, a.cls = maskOfPieces(pcs, cm.mask), classOfPieces(pcs, orig, cm.cls)
				if a0 == nil {
					a0 = a
				}
			}
			props := e.find(a, id)
			if len(props) == 0 {
				continue
			}
			a = nil
			applied := false
			for i := len(props) - 1; i >= 0; i-- {
				p := props[i]
				next := applyPiece(pcs, orig, p.from, p.to, []rune(p.repl), ruleBit(id))
				if !keepsBreaks(next, orig, cm.cls) {
					// Each edit kept the formatting breaks, but merged with
					// an earlier one that it touches, the change would span
					// one.
					e.blocked++
					e.blockedFormat++
					continue
				}
				pcs, applied = next, true
			}
			if !applied {
				continue
			}
			cur = joinPieces(pcs)
			changed = true
		}
		if !changed {
			break
		}
	}
	var out []Change
	for _, p := range pcs {
		if !p.edited {
			continue
		}
		c := Change{From: p.from, To: p.to, Before: string(orig[p.from:p.to]), After: string(p.text)}
		for i, r := range Rules {
			if p.rules&(1<<i) != 0 {
				c.Rules = append(c.Rules, r.ID)
			}
		}
		out = append(out, c)
	}
	var facts []Fact
	if a0 != nil && len(out) > 0 {
		facts = e.keptFacts(a0, out)
	}
	return string(cur), out, facts
}

// keptFacts lists the facts of the first-person sentences of a that one of
// changes edited: their numbers, dates and names and their fact words (the
// first-person words themselves go without saying).
func (e *engine) keptFacts(a *analysis, changes []Change) []Fact {
	var out []Fact
	for _, s := range a.sents {
		if !s.firstPerson || !slices.ContainsFunc(changes, func(c Change) bool { return c.From < s.end && c.To > s.start }) {
			continue
		}
		lists := e.d.enLists
		if s.lang == langZH {
			lists = e.d.zhLists
		}
		for k := s.start; k < s.end; {
			from, to := k, k+1
			switch at, ok := a.atomAt(k); {
			case ok && (at.kind == atomNumber || at.kind == atomDate || at.kind == atomName):
				from, to = at.start, at.end
			case ok:
				k = at.end
				continue
			case a.hard[k] == hardFirstPerson:
				for to < s.end && a.hard[to] == hardFirstPerson && a.atom[to] == 0 {
					to++
				}
				if w := normWord(string(a.text[from:to])); hasKey(lists["first-person"], w) {
					k = to
					continue
				}
			default:
				k++
				continue
			}
			out = append(out, Fact{From: from, To: to, Text: string(a.text[from:to])})
			k = to
		}
	}
	return out
}

// maskOfPieces carries the original text's mask over to the current text:
// unedited pieces keep theirs; edited text is free (an accepted edit never
// touches a kept or outside code point, so it replaced free text).
func maskOfPieces(pcs []piece, orig []uint8) []uint8 {
	if orig == nil {
		return nil
	}
	var out []uint8
	for _, p := range pcs {
		if p.edited {
			out = append(out, make([]uint8, len(p.text))...)
		} else {
			out = append(out, orig[p.from:p.to]...)
		}
	}
	return out
}

// classOfPieces carries the original text's formatting classes over to
// the current text: unedited pieces keep theirs; in an edited piece the
// text its before and after share at the start and at the end keeps the
// classes it had, and the new text between takes the class of the first
// code point it replaced (for an insertion, of the one before it, else
// after it).
func classOfPieces(pcs []piece, orig []rune, cls []int32) []int32 {
	if cls == nil {
		return nil
	}
	var out []int32
	for _, p := range pcs {
		if !p.edited {
			out = append(out, cls[p.from:p.to]...)
			continue
		}
		pre, suf := shared(orig[p.from:p.to], p.text)
		out = append(out, cls[p.from:p.from+pre]...)
		from, to := p.from+pre, p.to-suf
		var c int32
		switch {
		case from < to:
			c = cls[from]
		case from > 0:
			c = cls[from-1]
		case from < len(cls):
			c = cls[from]
		}
		for range len(p.text) - pre - suf {
			out = append(out, c)
		}
		out = append(out, cls[to:p.to]...)
	}
	return out
}

// keepsBreaks reports whether every change of pcs keeps the caller's
// formatting breaks (Request.Breaks) of the original text: its changed
// text, once what its before and after share at the start and at the end
// is set aside, lies within one formatting class.
func keepsBreaks(pcs []piece, orig []rune, cls []int32) bool {
	if cls == nil {
		return true
	}
	for _, p := range pcs {
		if !p.edited {
			continue
		}
		pre, suf := shared(orig[p.from:p.to], p.text)
		for i := p.from + pre + 1; i < p.to-suf; i++ {
			if cls[i] != cls[i-1] {
				return false
			}
		}
	}
	return true
}

// shared returns how many code points a and b share at the start and then,
// of what is left, at the end.
func shared(a, b []rune) (pre, suf int) {
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}

func ruleBit(id RuleID) uint8 {
	for i, r := range Rules {
		if r.ID == id {
			return 1 << i
		}
	}
	return 0
}

// find returns the accepted proposals of rule id on a, sorted and disjoint.
func (e *engine) find(a *analysis, id RuleID) []proposal {
	var out []proposal
	last := 0
	add := func(from, to int, repl string) bool {
		if from < last || !e.accept(a, from, to, repl) {
			return false
		}
		out = append(out, proposal{from, to, repl})
		last = to
		return true
	}
	for si := range a.sents {
		s := &a.sents[si]
		if id == ActiveVoice {
			if e.only != nil {
				continue
			}
			f := func(from, to int, repl string) { add(from, to, repl) }
			if s.lang == langZH {
				e.passiveZH(a, s, f)
			} else {
				e.passiveEN(a, s, f)
			}
			continue
		}
		ix := e.d.index[id][s.lang]
		if ix == nil {
			continue
		}
		m := matcher{a: a, d: e.d, idx: s.words}
		var buf []*row
		for i := 0; i < len(s.words); {
			next := i + 1
			buf = ix.candidates(s.lang, a.toks[s.words[i]].lower, buf)
			for _, r := range buf {
				if e.only != nil && r != e.only {
					continue
				}
				end, ok := m.matchAt(r, i)
				if !ok || (r.start && !clauseStart(a, s, i)) || (r.verbOnly && !e.verbContext(a, s, i, r, &m)) {
					continue
				}
				from, to, repl, ok := e.shape(a, s, i, end, e.replacement(a, s, r, &m))
				if ok && add(from, to, repl) {
					if e.fired != nil {
						e.fired[r]++
					}
					next = end
					break
				}
			}
			i = next
		}
	}
	return out
}

// replacement builds r's replacement from the captures in m.
func (e *engine) replacement(a *analysis, s *sentence, r *row, m *matcher) string {
	var b strings.Builder
	form := formBase
	for i, el := range r.elems {
		if el.kind == elVerb {
			form = m.caps[i].form
		}
	}
	for _, p := range r.repl {
		switch {
		case p.ref > 0:
			c := m.caps[p.ref-1]
			if c.to > c.from {
				b.WriteString(string(a.text[a.toks[s.words[c.from]].start:a.toks[s.words[c.to-1]].end]))
			}
		case p.verb != "":
			words := strings.Fields(p.verb)
			b.WriteString(e.d.inflect(words[0], form))
		default:
			b.WriteString(p.lit)
		}
	}
	return b.String()
}

// shape turns a match of words [i, end) into an edit: in English, a removal
// takes one space with it and a change at the start of a sentence keeps its
// capital (or hands it to the next word). A removal that would leave a
// sentence without words is refused, and so is one that cannot take a space
// or hand on its capital because the caller keeps that text (Request.Keep,
// Request.Within).
func (e *engine) shape(a *analysis, s *sentence, i, end int, repl string) (from, to int, out string, ok bool) {
	first, lastTok := &a.toks[s.words[i]], &a.toks[s.words[end-1]]
	from, to = first.start, lastTok.end
	if repl == "" {
		words := 0
		for _, ti := range s.words {
			if t := &a.toks[ti]; t.kind == tokWord && (t.start < from || t.start >= to) {
				words++
			}
		}
		if words == 0 {
			return 0, 0, "", false
		}
	}
	if s.lang == langZH {
		return from, to, repl, true
	}
	atStart := sentenceStart(a, s, i) && isCapitalised(first.text)
	if repl != "" {
		if atStart {
			repl = capitalise(repl)
		}
		return from, to, repl, true
	}
	t := a.text
	switch {
	case to < len(t) && unicode.IsSpace(t[to]) && a.free(to):
		for to < len(t) && unicode.IsSpace(t[to]) && t[to] != '\n' && a.free(to) {
			to++
		}
	case from > 0 && unicode.IsSpace(t[from-1]) && a.free(from-1):
		for from > 0 && unicode.IsSpace(t[from-1]) && t[from-1] != '\n' && a.free(from-1) {
			from--
		}
	case from > 0 && to < len(t) && unicode.IsSpace(t[from-1]) && unicode.IsSpace(t[to]):
		// Both spaces are outside the caller's window or kept: removing the
		// words alone would leave two spaces.
		return 0, 0, "", false
	}
	if atStart && to < len(t) && to < s.end && unicode.IsLower(t[to]) && a.hard[to] == 0 && a.atom[to] == 0 {
		if !a.free(to) {
			return 0, 0, "", false // the next word cannot take the capital
		}
		repl = string(unicode.ToUpper(t[to]))
		to++
	}
	return from, to, repl, true
}

// sentenceStart reports whether word i opens its sentence (after any opening
// punctuation).
func sentenceStart(a *analysis, s *sentence, i int) bool {
	for k := 0; k < i; k++ {
		if a.toks[s.words[k]].kind == tokWord {
			return false
		}
	}
	return true
}

// clauseStart reports whether word i opens a clause: the sentence's start or
// right after a comma, semicolon or colon.
func clauseStart(a *analysis, s *sentence, i int) bool {
	if sentenceStart(a, s, i) {
		return true
	}
	prev := a.toks[s.words[i-1]].text
	return strings.ContainsAny(prev, ",;:，；：、")
}

// verbContextWords announce a verb: a base form after them is a verb.
var verbContextWords = map[string]bool{
	"to": true, "can": true, "could": true, "will": true, "would": true, "shall": true, "should": true,
	"must": true, "may": true, "might": true, "we": true, "they": true, "you": true, "i": true,
	"let's": true, "and": true, "or": true, "not": true, "also": true, "better": true, "fully": true,
	"don't": true, "didn't": true, "cannot": true, "can't": true, "won't": true, "please": true,
}

// verbContext is the "verb" flag's check: a {verb} element that matched its
// base form must follow a word that announces a verb.
func (e *engine) verbContext(a *analysis, s *sentence, i int, r *row, m *matcher) bool {
	for k, el := range r.elems {
		if el.kind == elVerb && m.caps[k].form == formBase {
			w := m.caps[k].from
			return w > 0 && verbContextWords[a.toks[s.words[w-1]].lower]
		}
	}
	return true
}

// accept checks a proposal against the protected spans: it may not touch
// text outside the caller's window or kept by the caller, nor
// hard-protected text (quotes, first-person facts); its changed text may
// not span a formatting break; it may not cut into an atom, and every atom
// it covers must reappear whole in its replacement.
func (e *engine) accept(a *analysis, from, to int, repl string) bool {
	if from >= to || string(a.text[from:to]) == repl {
		return false
	}
	if a.mask != nil {
		kept := false
		for i := from; i < to; i++ {
			switch a.mask[i] {
			case maskOutside:
				return false // context only: not a candidate at all
			case maskKeep:
				kept = true
			}
		}
		if kept {
			e.blocked++
			return false
		}
	}
	if a.cls != nil {
		pre, suf := shared(a.text[from:to], []rune(repl))
		for i := from + pre + 1; i < to-suf; i++ {
			if a.cls[i] != a.cls[i-1] {
				e.blocked++
				e.blockedFormat++
				return false
			}
		}
	}
	for i := from; i < to; i++ {
		if a.hard[i] != 0 {
			e.blocked++
			return false
		}
	}
	if at, ok := a.atomAt(from); ok && at.start < from {
		e.blocked++
		return false
	}
	if at, ok := a.atomAt(to - 1); ok && at.end > to {
		e.blocked++
		return false
	}
	seen := int32(0)
	for i := from; i < to; i++ {
		id := a.atom[i]
		if id == 0 || id == seen {
			continue
		}
		seen = id
		at := a.atoms[id-1]
		if !strings.Contains(repl, string(a.text[at.start:at.end])) {
			e.blocked++
			return false
		}
	}
	if !a.keepsInvariant(from, to, repl) {
		e.blocked++
		return false
	}
	return true
}

// piece is a run of the output: original text (edited false, text equal to
// the original [from, to)) or the replacement of the original [from, to).
type piece struct {
	from, to int
	text     []rune
	edited   bool
	rules    uint8
}

// applyPiece replaces the current text's code points [a, b) with repl. An
// edit that overlaps earlier edits absorbs them, so every change stays
// described against the original text.
func applyPiece(pcs []piece, orig []rune, a, b int, repl []rune, rule uint8) []piece {
	var before, after []piece
	var prefix, suffix []rune
	mFrom, mTo := -1, -1
	rules := rule
	pos := 0
	for _, p := range pcs {
		ps, pe := pos, pos+len(p.text)
		pos = pe
		overlaps := ps < b && pe > a
		if ps == pe {
			overlaps = a < ps && ps < b // an empty (deleting) piece strictly inside
		}
		if !overlaps {
			if pe <= a && (ps < pe || ps <= a) {
				before = append(before, p)
			} else {
				after = append(after, p)
			}
			continue
		}
		lo, hi := max(a, ps), min(b, pe)
		if !p.edited {
			if ps < a {
				before = append(before, piece{from: p.from, to: p.from + (a - ps), text: p.text[:a-ps]})
			}
			of, ot := p.from+(lo-ps), p.from+(hi-ps)
			if mFrom < 0 {
				mFrom = of
			}
			mTo = ot
			if pe > b {
				after = append(after, piece{from: p.from + (b - ps), to: p.to, text: p.text[b-ps:]})
			}
			continue
		}
		if ps < a {
			prefix = p.text[:a-ps]
		}
		if pe > b {
			suffix = p.text[b-ps:]
		}
		if mFrom < 0 {
			mFrom = p.from
		}
		mTo = p.to
		rules |= p.rules
	}
	text := make([]rune, 0, len(prefix)+len(repl)+len(suffix))
	text = append(append(append(text, prefix...), repl...), suffix...)
	m := piece{from: mFrom, to: mTo, text: text, edited: true, rules: rules}
	if string(text) == string(orig[mFrom:mTo]) {
		m = piece{from: mFrom, to: mTo, text: orig[mFrom:mTo]}
	}
	out := append(before, m)
	return append(out, after...)
}

func joinPieces(pcs []piece) []rune {
	n := 0
	for _, p := range pcs {
		n += len(p.text)
	}
	out := make([]rune, 0, n)
	for _, p := range pcs {
		out = append(out, p.text...)
	}
	return out
}
