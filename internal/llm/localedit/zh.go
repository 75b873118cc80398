package localedit

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-ego/gse"
)

// zhDict is the segmentation dictionary: the entries of gse's simplified
// Chinese dictionary (itself from jieba) with a frequency of at least 5,
// as "word frequency part-of-speech" lines. See dict/README.md.
//
// It is kept in files of under 1 MB each (the repository's rule for
// reviewable files), split at line boundaries; zhDictText joins them in
// name order.
//
//go:embed dict/zh-*.txt
var zhDictFS embed.FS

func zhDictText() (string, error) {
	parts, err := fs.Glob(zhDictFS, "dict/zh-*.txt")
	if err != nil {
		return "", err
	}
	sort.Strings(parts)
	var b strings.Builder
	for _, p := range parts {
		data, err := zhDictFS.ReadFile(p)
		if err != nil {
			return "", err
		}
		b.Write(data)
	}
	return b.String(), nil
}

// zhSegmenter loads the dictionary once, on first use (about half a second
// and 40 MB of heap), adding the literal words of the Chinese rules so that
// they segment as words. The segmenter is read-only afterwards and safe for
// concurrent use.
//
// It deliberately avoids sync.OnceValues: instantiating a generic with
// *gse.Segmenter marks the type as used in an interface, which makes the
// linker keep all its exported methods, LoadDictEmbed among them, and with
// it the 38 MB of dictionaries gse embeds (see dict/README.md).
func zhSegmenter() (*gse.Segmenter, error) {
	zhOnce.Do(func() { zhSeg, zhErr = newZHSegmenter() })
	return zhSeg, zhErr
}

var (
	zhOnce sync.Once
	zhSeg  *gse.Segmenter // valid after zhOnce, when zhErr is nil
	zhErr  error
)

func newZHSegmenter() (*gse.Segmenter, error) {
	d, err := loadData()
	if err != nil {
		return nil, err
	}
	zhDict, err := zhDictText()
	if err != nil {
		return nil, fmt.Errorf("localedit: read the Chinese dictionary: %w", err)
	}
	var b strings.Builder
	b.Grow(len(zhDict) + 32*len(d.zhWords))
	b.WriteString(zhDict)
	for _, w := range d.zhWords {
		// Entries already in the dictionary keep their frequency and part
		// of speech (the first entry of a word wins).
		fmt.Fprintf(&b, "\n%s 500 l", w)
	}
	seg := &gse.Segmenter{SkipLog: true, NotLoadHMM: true}
	if err := seg.LoadDictStr(b.String()); err != nil {
		return nil, fmt.Errorf("localedit: load the Chinese dictionary: %w", err)
	}
	return seg, nil
}

// tokenizeCached tokenizes the sentence text[from:to] as lg (tokenizeZH,
// tokenizeEN), keeping the tokens of each sentence for the rest of the
// Edit call: the fixed-point loop analyses the text again after every rule
// that changed it, and most of its sentences are the same as before.
func (e *engine) tokenizeCached(lg lang, text []rune, from, to int, out []token) []token {
	key := tokKey{lg, string(text[from:to])}
	toks, ok := e.tokCache[key]
	if !ok {
		first := len(out)
		if lg == langZH {
			out = e.tokenizeZH(text, from, to, out)
		} else {
			out = tokenizeEN(text, from, to, out)
		}
		toks = make([]token, len(out)-first)
		for i, t := range out[first:] {
			t.start -= from
			t.end -= from
			toks[i] = t
		}
		if e.tokCache == nil {
			e.tokCache = map[tokKey][]token{}
		}
		e.tokCache[key] = toks
		return out
	}
	for _, t := range toks {
		t.start += from
		t.end += from
		out = append(out, t)
	}
	return out
}

// tokKey names a sentence's tokens in engine.tokCache.
type tokKey struct {
	lg   lang
	text string
}

// tokenizeZH segments text[from:to] into words with their part of speech.
func (e *engine) tokenizeZH(text []rune, from, to int, out []token) []token {
	s := string(text[from:to])
	pos := from
	off := 0 // byte offset in s matching pos
	for _, sg := range e.seg.Segment([]byte(s)) {
		if sg.Start() != off {
			// The segmenter covers its input without gaps; if it ever did
			// not, fall back to one token per rune for the rest.
			break
		}
		w := s[sg.Start():sg.End()]
		n := utf8.RuneCountInString(w)
		out = append(out, token{start: pos, end: pos + n, text: w, lower: normWord(w), pos: sg.Token().Pos(), kind: kindOf(w)})
		pos += n
		off = sg.End()
	}
	for ; pos < to; pos++ {
		w := string(text[pos])
		out = append(out, token{start: pos, end: pos + 1, text: w, lower: normWord(w), pos: "x", kind: kindOf(w)})
	}
	return out
}

func kindOf(w string) tokKind {
	space, punct := true, true
	for _, r := range w {
		if !unicode.IsSpace(r) {
			space = false
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == '\uFFFC' {
			punct = false
		}
	}
	switch {
	case space:
		return tokSpace
	case punct:
		return tokPunct
	}
	return tokWord
}

const zhNumerals = "〇零一二三四五六七八九十百千万亿两壹贰叁肆伍陆柒捌玖拾佰仟"

// zhUnits may follow a number and belong to it (2018年, 3成, 50%).
var zhUnits = map[string]bool{"年": true, "月": true, "日": true, "号": true, "时": true, "点": true, "分": true,
	"秒": true, "岁": true, "倍": true, "成": true, "%": true, "％": true, "万": true, "亿": true, "元": true}

// atomsZH finds numbers, dates and names in a Chinese sentence.
func (e *engine) atomsZH(a *analysis, s *sentence) {
	lists := e.d.zhLists
	w := s.words
	for k := 0; k < len(w); k++ {
		t := &a.toks[w[k]]
		if t.kind != tokWord {
			continue
		}
		numeral := false
		if strings.HasPrefix(t.pos, "m") || strings.Trim(t.text, zhNumerals) == "" {
			numeral = strings.ContainsFunc(t.text, func(r rune) bool { return r != '一' && strings.ContainsRune(zhNumerals, r) })
		}
		switch {
		case hasDigit(t.text) || numeral && !hasKey(lists["not-number"], t.text):
			end := t.end
			for k+1 < len(w) && zhUnits[a.toks[w[k+1]].text] && a.toks[w[k+1]].start == end {
				k++
				end = a.toks[w[k]].end
				// 3月5日: a unit may be followed by the next number.
				if k+1 < len(w) && hasDigit(a.toks[w[k+1]].text) && a.toks[w[k+1]].start == end {
					k++
					end = a.toks[w[k]].end
				}
			}
			a.addAtom(t.start, end, atomNumber)
		case t.pos == "t" || hasKey(lists["time"], t.text):
			a.addAtom(t.start, t.end, atomDate)
		case isNamePOS(t.pos):
			a.addAtom(t.start, t.end, atomName)
		case !isHanWord(t) && isCapitalised(t.text):
			a.addAtom(t.start, t.end, atomName) // a Latin name in Chinese text
		case utf8.RuneCountInString(t.text) == 1 && hasKey(lists["surname"], t.text) && surnamePOS(t.pos):
			// The segmenter did not know the name: a common surname and one
			// or two single characters after it.
			j := k
			for j+1 < len(w) && j-k < 2 {
				u := &a.toks[w[j+1]]
				if utf8.RuneCountInString(u.text) != 1 || !isHanWord(u) || !givenNamePOS(u.pos) || u.start != a.toks[w[j]].end {
					break
				}
				j++
			}
			if j > k {
				a.addAtom(t.start, a.toks[w[j]].end, atomName)
				k = j
			}
		}
	}
}

// surnamePOS: a surname character the segmenter left alone may be tagged as
// a noun, a measure word (张), an adjective (高)..., but not as a function
// word.
func surnamePOS(p string) bool {
	return p != "" && !strings.ContainsRune("pcudrvy", rune(p[0]))
}

// givenNamePOS: characters of a given name are tagged as nouns, adjectives,
// morphemes or unknown, never as function words or verbs.
func givenNamePOS(p string) bool {
	return p != "" && strings.ContainsRune("nzagbjlx", rune(p[0]))
}

// isNamePOS: person (nr, nrt, nrfg), place (ns), organisation (nt) and
// other proper nouns (nz).
func isNamePOS(p string) bool {
	return strings.HasPrefix(p, "nr") || p == "ns" || p == "nt" || p == "nz"
}

// passiveZH finds "X（副词）被 Y（所）V（了/过）" clauses with a stated agent Y
// and proposes "Y（副词）V（了/过）X" (rule 3). The clause must end right after
// the verb, X must be the whole subject and Y a noun phrase, so that nothing
// is guessed: "他被批评了" (no agent) is left alone.
func (e *engine) passiveZH(a *analysis, s *sentence, add func(from, to int, repl string)) {
	w := s.words
	tok := func(i int) *token { return &a.toks[w[i]] }
	lists := e.d.zhLists
	for b := 1; b < len(w); b++ {
		if tok(b).text != "被" {
			continue
		}
		// The clause around 被.
		cs := b
		for cs > 0 && tok(cs-1).kind == tokWord {
			cs--
		}
		ce := b + 1
		for ce < len(w) && tok(ce).kind == tokWord {
			ce++
		}
		for cs < b && tok(cs).pos == "c" {
			cs++ // a leading conjunction (但是…) stays in front
		}
		xe := b
		for xe > cs && hasKey(lists["adverb"], tok(xe-1).text) {
			xe--
		}
		if xe == cs || xe-cs > 10 {
			continue
		}
		k := ce - 1
		aspect := ""
		if k > b && hasKey(lists["aspect"], tok(k).text) {
			aspect = tok(k).text
			k--
		}
		if k <= b+1 || !strings.HasPrefix(tok(k).pos, "v") {
			continue
		}
		ye := k
		if tok(k-1).text == "所" {
			ye = k - 1
		}
		if ye <= b+1 || ye-(b+1) > 6 {
			continue
		}
		ok := true
		for i := b + 1; i < ye; i++ {
			if strings.HasPrefix(tok(i).pos, "v") || tok(i).text == "被" || tok(i).text == "把" {
				ok = false
			}
		}
		for i := cs; i < ce-1; i++ {
			if tok(i).end != tok(i+1).start {
				ok = false // spaces inside: not one clause of plain words
			}
		}
		last := tok(ye - 1)
		_, named := a.atomAt(last.start)
		if !ok || !(strings.HasPrefix(last.pos, "n") || last.pos == "r" || named) {
			continue
		}
		txt := func(i, j int) string { return string(a.text[tok(i).start:tok(j-1).end]) }
		adv := ""
		if xe < b {
			adv = txt(xe, b)
		}
		repl := txt(b+1, ye) + adv + tok(k).text + aspect + txt(cs, xe)
		end := tok(k).end
		if aspect != "" {
			end = tok(k + 1).end
		}
		add(tok(cs).start, end, repl)
		b = ce
	}
}
