package style

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/persona/source"
)

// loc is a span of one block of one source.
type loc struct {
	block int // index into the source's Blocks
	span  source.Span
}

type sentence struct {
	loc
	length   int // non-space code points
	question bool
	exclaim  bool
}

type paragraph struct {
	block     int
	length    int
	sentences int
}

// measured is one source's measurements.
type measured struct {
	doc                     source.Document
	chars                   int // non-space code points of prose
	cjk, latin              int // letters by script
	sentences               []sentence
	paragraphs              []paragraph
	headings, items, quotes []int // block indexes
	code                    []int
	punct                   map[string]int
	punctAt                 map[string][]loc // first occurrences
	firstPerson, plural     int
	firstPersonAt           []loc
	timeMarkers             int
	timeAt                  []loc
	cjkPunctFull, cjkPunct  int // punctuation inside CJK sentences
	boundaries, spaced      int // CJK-Latin boundaries and those with a space
	spacedAt, unspacedAt    []loc
	fw                      counts
	fwAt                    map[string]loc
	grams                   map[string]*gramCount
	openings                map[string]*gramCount
}

type gramCount struct {
	n     int
	first loc
}

// Punctuation marks measured, full-width and half-width separately.
var (
	fullWidth = []string{"，", "。", "！", "？", "；", "：", "、", "“", "”", "‘", "’", "（", "）", "《", "》", "【", "】", "「", "」", "『", "』", "…", "—", "～", "·"}
	halfWidth = []string{",", ".", "!", "?", ";", ":", "\"", "'", "(", ")", "[", "]", "-", "~"}
	fullSet   = toSet(fullWidth)
	halfSet   = toSet(halfWidth)
)

var (
	firstPersonZH = []string{"我们", "咱们", "我"}
	firstPersonEN = map[string]bool{"i": true, "me": true, "my": true, "mine": true, "myself": true,
		"we": true, "us": true, "our": true, "ours": true, "ourselves": true}
	pluralEN   = map[string]bool{"we": true, "us": true, "our": true, "ours": true, "ourselves": true}
	timeZH     = []string{"后来", "那时", "当时", "那年", "去年", "今年", "明年", "以前", "之前", "之后", "曾经", "从前", "最近", "如今"}
	timeEN     = map[string]bool{"then": true, "later": true, "ago": true, "yesterday": true, "once": true, "recently": true, "since": true, "until": true}
	maxAt      = 3 // occurrences kept per measure for evidence
	gramMinLen = 2
	gramMaxLen = 4
)

func measure(d source.Document) *measured {
	m := &measured{doc: d, punct: map[string]int{}, punctAt: map[string][]loc{}, fwAt: map[string]loc{},
		grams: map[string]*gramCount{}, openings: map[string]*gramCount{}}
	for bi, b := range d.Blocks {
		switch b.Type {
		case flowdoc.Code:
			m.code = append(m.code, bi)
			continue
		case flowdoc.Heading:
			m.headings = append(m.headings, bi)
		case flowdoc.List:
			m.items = append(m.items, bi)
		case flowdoc.Quote:
			m.quotes = append(m.quotes, bi)
		}
		text := b.Text
		if strings.TrimSpace(text) == "" {
			continue
		}
		rs := []rune(text)
		m.chars += nonSpace(rs)
		for _, r := range rs {
			switch {
			case source.IsCJK(r):
				m.cjk++
			case unicode.IsLetter(r):
				m.latin++
			}
		}
		m.punctuation(bi, rs)
		m.spacing(bi, rs)
		before := m.fw.units
		countFunctionWords(text, &m.fw)
		_ = before
		m.functionWordSpans(bi, rs)
		sents := source.Sentences(text)
		for _, s := range sents {
			st := sentence{loc: loc{bi, s}, length: nonSpace(rs[s.Start:s.End])}
			last := lastNonCloser(rs[s.Start:s.End])
			st.question = last == '?' || last == '？'
			st.exclaim = last == '!' || last == '！'
			if b.Type != flowdoc.Heading {
				m.sentences = append(m.sentences, st)
			}
			m.narrative(bi, rs, s)
			m.opening(bi, rs, s)
		}
		if b.Type == flowdoc.Paragraph {
			m.paragraphs = append(m.paragraphs, paragraph{block: bi, length: nonSpace(rs), sentences: len(sents)})
		}
		m.ngrams(bi, rs)
	}
	return m
}

func nonSpace(rs []rune) int {
	n := 0
	for _, r := range rs {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

func lastNonCloser(rs []rune) rune {
	for i := len(rs) - 1; i >= 0; i-- {
		if !strings.ContainsRune("”’\"'」』）)]】》", rs[i]) {
			return rs[i]
		}
	}
	return 0
}

func (m *measured) at(list *[]loc, l loc) {
	if len(*list) < maxAt {
		*list = append(*list, l)
	}
}

func (m *measured) punctuation(bi int, rs []rune) {
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		mark := string(r)
		// …… and —— count once per pair, as written.
		if (r == '…' || r == '—') && i+1 < len(rs) && rs[i+1] == r {
			i++
		}
		if r == '.' && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]) {
			continue // a decimal point
		}
		if !fullSet[mark] && !halfSet[mark] {
			continue
		}
		key := "half:" + mark
		if fullSet[mark] {
			key = "full:" + mark
		}
		m.punct[key]++
		l := m.punctAt[key]
		m.at(&l, loc{bi, source.Span{Start: i, End: i + 1}})
		m.punctAt[key] = l
		if cjkNeighbour(rs, i) {
			m.cjkPunct++
			if fullSet[mark] {
				m.cjkPunctFull++
			}
		}
	}
}

// cjkNeighbour reports whether the mark at i follows CJK text (the mark
// belongs to Chinese prose).
func cjkNeighbour(rs []rune, i int) bool {
	for j := i - 1; j >= 0 && j >= i-2; j-- {
		if source.IsCJK(rs[j]) {
			return true
		}
		if !unicode.IsSpace(rs[j]) && !unicode.IsPunct(rs[j]) {
			return false
		}
	}
	return false
}

// spacing counts boundaries between CJK and Latin letters or digits and
// whether a space separates them.
func (m *measured) spacing(bi int, rs []rune) {
	kind := func(r rune) int {
		switch {
		case source.IsCJK(r):
			return 1
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			return 2
		}
		return 0
	}
	for i := 0; i+1 < len(rs); i++ {
		a := kind(rs[i])
		if a == 0 {
			continue
		}
		if b := kind(rs[i+1]); b != 0 && b != a {
			m.boundaries++
			m.at(&m.unspacedAt, loc{bi, source.Span{Start: i, End: i + 2}})
			continue
		}
		if rs[i+1] == ' ' && i+2 < len(rs) {
			if b := kind(rs[i+2]); b != 0 && b != a {
				m.boundaries++
				m.spaced++
				m.at(&m.spacedAt, loc{bi, source.Span{Start: i, End: i + 3}})
			}
		}
	}
}

func (m *measured) functionWordSpans(bi int, rs []rune) {
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case source.IsCJK(r):
			n := 1
			for k := min(zhMax, len(rs)-i); k >= 1; k-- {
				w := string(rs[i : i+k])
				if zhSet[w] {
					if _, ok := m.fwAt["zh:"+w]; !ok {
						m.fwAt["zh:"+w] = loc{bi, source.Span{Start: i, End: i + k}}
					}
					n = k
					break
				}
			}
			i += n
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) && !source.IsCJK(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '\'' || rs[j] == '’') {
				j++
			}
			w := strings.ToLower(string(rs[i:j]))
			if enSet[w] {
				if _, ok := m.fwAt["en:"+w]; !ok {
					m.fwAt["en:"+w] = loc{bi, source.Span{Start: i, End: j}}
				}
			}
			i = j
		default:
			i++
		}
	}
}

// narrative counts first-person references and time markers in one
// sentence.
func (m *measured) narrative(bi int, rs []rune, s source.Span) {
	text := string(rs[s.Start:s.End])
	fp, pl := 0, 0
	rest := text
	for rest != "" {
		hit := false
		for _, w := range firstPersonZH {
			if strings.HasPrefix(rest, w) {
				fp++
				if w != "我" {
					pl++
				}
				rest = rest[len(w):]
				hit = true
				break
			}
		}
		if !hit {
			_, n := utf8.DecodeRuneInString(rest)
			rest = rest[n:]
		}
	}
	for _, w := range latinWords(text) {
		if firstPersonEN[w] {
			fp++
			if pluralEN[w] {
				pl++
			}
		}
		if timeEN[w] {
			m.timeMarkers++
			m.at(&m.timeAt, loc{bi, s})
		}
	}
	for _, w := range timeZH {
		if c := strings.Count(text, w); c > 0 {
			m.timeMarkers += c
			m.at(&m.timeAt, loc{bi, s})
		}
	}
	if fp > 0 {
		m.firstPerson += fp
		m.plural += pl
		m.at(&m.firstPersonAt, loc{bi, s})
	}
}

// latinWords returns the lowercase Latin words of text.
func latinWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || r == '\''))
	})
}

// opening records how a sentence starts: its first two CJK characters, or
// its first Latin word.
func (m *measured) opening(bi int, rs []rune, s source.Span) {
	sent := rs[s.Start:s.End]
	var key string
	var n int
	switch {
	case len(sent) >= 3 && source.IsCJK(sent[0]) && source.IsCJK(sent[1]):
		key, n = string(sent[:2]), 2
	case len(sent) > 0 && sent[0] < utf8.RuneSelf && unicode.IsLetter(sent[0]):
		j := 0
		for j < len(sent) && sent[j] < utf8.RuneSelf && unicode.IsLetter(sent[j]) {
			j++
		}
		if j == len(sent) {
			return
		}
		key, n = strings.ToLower(string(sent[:j])), j
	default:
		return
	}
	g := m.openings[key]
	if g == nil {
		g = &gramCount{first: loc{bi, source.Span{Start: s.Start, End: s.Start + n}}}
		m.openings[key] = g
	}
	g.n++
}

// ngrams counts character n-grams (2..4) inside CJK runs and word bigrams
// of Latin text. Grams with digits, punctuation or only function words
// are skipped.
func (m *measured) ngrams(bi int, rs []rune) {
	add := func(key string, a, b int) {
		g := m.grams[key]
		if g == nil {
			g = &gramCount{first: loc{bi, source.Span{Start: a, End: b}}}
			m.grams[key] = g
		}
		g.n++
	}
	for i := 0; i < len(rs); {
		if !source.IsCJK(rs[i]) {
			i++
			continue
		}
		j := i
		for j < len(rs) && source.IsCJK(rs[j]) {
			j++
		}
		for a := i; a < j; a++ {
			for n := gramMinLen; n <= gramMaxLen && a+n <= j; n++ {
				g := string(rs[a : a+n])
				if onlyFunction(rs[a : a+n]) {
					continue
				}
				add(g, a, a+n)
			}
		}
		i = j
	}
	// Latin word bigrams.
	type word struct {
		w    string
		a, b int
	}
	var ws []word
	for i := 0; i < len(rs); {
		if !(rs[i] < utf8.RuneSelf && unicode.IsLetter(rs[i])) {
			if !unicode.IsSpace(rs[i]) {
				ws = append(ws, word{}) // a break
			}
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j] < utf8.RuneSelf && (unicode.IsLetter(rs[j]) || rs[j] == '\'') {
			j++
		}
		ws = append(ws, word{strings.ToLower(string(rs[i:j])), i, j})
		i = j
	}
	for k := 0; k+1 < len(ws); k++ {
		a, b := ws[k], ws[k+1]
		if a.w == "" || b.w == "" || enSet[a.w] && enSet[b.w] {
			continue
		}
		add(a.w+" "+b.w, a.a, b.b)
	}
}

func onlyFunction(rs []rune) bool {
	for _, r := range rs {
		if !zhSet[string(r)] {
			return false
		}
	}
	return true
}

// percentiles returns p10, p25, p50, p75, p90 of xs (linear
// interpolation between closest ranks), rounded.
func percentiles(xs []float64) []float64 {
	if len(xs) == 0 {
		return []float64{0, 0, 0, 0, 0}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	out := make([]float64, 0, 5)
	for _, p := range []float64{0.10, 0.25, 0.50, 0.75, 0.90} {
		out = append(out, round(quantile(s, p)))
	}
	return out
}

func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := p * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return quantile(s, 0.5)
}

// round keeps 4 decimals, so that equal inputs give equal encodings on
// every platform.
func round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1e4) / 1e4
}

func per1000(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return round(float64(n) * 1000 / float64(of))
}
