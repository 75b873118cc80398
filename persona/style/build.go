package style

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/foliodev/folio/persona/source"
)

// Limits of a profile's lists.
const (
	maxEvidence     = 3  // evidence kept per claim
	maxArticleEv    = 5  // article-level evidence kept per claim
	maxPatterns     = 20 // characteristic n-grams
	maxOpenings     = 10 // sentence openings
	maxFWFeatures   = 10 // function words listed as features
	deltaWords      = 50 // most frequent function words used by Delta
	minSourcesFirm  = 5  // fewer sources is an uncertainty
	minCharsFirm    = 3000
	minCalibrations = 3 // sources needed to calibrate Delta
)

// Build measures the sources and returns their style profile. It is
// deterministic: the same sources in the same order give the same
// profile. Sources without prose are skipped; none left is ErrNoSources.
func Build(docs []source.Document) (Profile, error) {
	return BuildContext(context.Background(), docs)
}

// BuildContext is Build that gives up with ctx's error when ctx ends,
// checked between documents (measuring one is linear in its size).
func BuildContext(ctx context.Context, docs []source.Document) (Profile, error) {
	var ms []*measured
	for _, d := range docs {
		if err := ctx.Err(); err != nil {
			return Profile{}, err
		}
		m := measure(d)
		if m.chars > 0 {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return Profile{}, ErrNoSources
	}
	p := Profile{Format: Format, Learner: LearnerVersion}
	for _, m := range ms {
		p.Sources = append(p.Sources, m.doc.Pin)
	}
	b := &builder{ms: ms}
	b.lang = b.primaryLanguage()
	p.Dimensions = []Dimension{
		{Name: DimLanguage, Features: b.language()},
		{Name: DimSyntax, Features: b.syntax()},
		{Name: DimParagraph, Features: b.paragraph()},
		{Name: DimStructure, Features: b.structure()},
		{Name: DimNarrative, Features: b.narrativeFeatures()},
		{Name: DimFormat, Features: b.format()},
	}
	p.FunctionWords = functionWordStats(ms)
	p.Rules = b.rules(&p)
	p.Patterns = b.patterns()
	p.Uncertainties = b.uncertainties(&p)
	p.Summary = summary(&p, b)
	if err := p.Validate(); err != nil {
		return Profile{}, fmt.Errorf("style: built an invalid profile: %w", err)
	}
	return p, nil
}

type builder struct {
	ms   []*measured
	lang string // zh, en or mixed
}

func (b *builder) ev(m *measured, l loc) source.Evidence {
	return source.NewEvidence(m.doc.Pin, m.doc.Blocks[l.block], l.span)
}

// articles is article-level evidence: the pinned versions themselves
// (used for claims about absence or about whole sources).
func (b *builder) articles(ms []*measured) []source.Evidence {
	var out []source.Evidence
	for _, m := range ms {
		if len(out) == maxArticleEv {
			break
		}
		out = append(out, source.Evidence{Doc: m.doc.Pin.Doc, Version: m.doc.Pin.Version, Label: m.doc.Pin.Label,
			Fingerprint: m.doc.Pin.Fingerprint.String()[:16]})
	}
	return out
}

// spread takes evidence round-robin from each source's locations, so a
// claim cites several sources before several places of one.
func (b *builder) spread(locs func(m *measured) []loc) []source.Evidence {
	var out []source.Evidence
	for round := 0; len(out) < maxEvidence; round++ {
		any := false
		for _, m := range b.ms {
			ls := locs(m)
			if round < len(ls) {
				any = true
				out = append(out, b.ev(m, ls[round]))
				if len(out) == maxEvidence {
					break
				}
			}
		}
		if !any {
			break
		}
	}
	if len(out) == 0 {
		return b.articles(b.ms)
	}
	return out
}

func (b *builder) perSource(f func(m *measured) float64) []float64 {
	out := make([]float64, len(b.ms))
	for i, m := range b.ms {
		out[i] = round(f(m))
	}
	return out
}

func (b *builder) totalChars() int {
	n := 0
	for _, m := range b.ms {
		n += m.chars
	}
	return n
}

func (b *builder) primaryLanguage() string {
	cjk, latin := 0, 0
	for _, m := range b.ms {
		cjk += m.cjk
		latin += m.latin
	}
	return languageOf(cjk, latin)
}

// languageOf classifies by the share of CJK letters: at least 0.7 is zh
// (one CJK character carries about as much as a Latin word of five
// letters, hence the share is of letters, weighted), at most 0.3 en.
func languageOf(cjk, latin int) string {
	if cjk+latin == 0 {
		return "mixed"
	}
	share := float64(cjk*5) / float64(cjk*5+latin)
	switch {
	case share >= 0.7:
		return "zh"
	case share <= 0.3:
		return "en"
	}
	return "mixed"
}

func (b *builder) language() []Feature {
	cjk, latin := 0, 0
	for _, m := range b.ms {
		cjk += m.cjk
		latin += m.latin
	}
	firstSentence := func(m *measured) []loc {
		if len(m.sentences) == 0 {
			return nil
		}
		return []loc{m.sentences[0].loc}
	}
	fs := []Feature{
		{Name: "primary", Label: b.lang, Value: round(float64(cjk) / float64(max(1, cjk+latin))), Unit: "share of CJK letters",
			PerSource: b.perSource(func(m *measured) float64 { return float64(m.cjk) / float64(max(1, m.cjk+m.latin)) }),
			Evidence:  b.spread(firstSentence)},
		{Name: "characters", Value: float64(b.totalChars()), Unit: "non-space characters of prose",
			PerSource: b.perSource(func(m *measured) float64 { return float64(m.chars) }), Evidence: b.articles(b.ms)},
	}
	// The most frequent function words, as rates per 1,000 units.
	total := counts{fw: map[string]int{}}
	for _, m := range b.ms {
		total.units += m.fw.units
		for k, v := range m.fw.fw {
			total.fw[k] += v
		}
	}
	keys := make([]string, 0, len(total.fw))
	for k := range total.fw {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if total.fw[keys[i]] != total.fw[keys[j]] {
			return total.fw[keys[i]] > total.fw[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys[:min(len(keys), maxFWFeatures)] {
		fs = append(fs, Feature{Name: "function_word:" + k, Value: per1000(total.fw[k], total.units), Unit: "per 1,000 words",
			PerSource: b.perSource(func(m *measured) float64 { return per1000(m.fw.fw[k], m.fw.units) }),
			Evidence: b.spread(func(m *measured) []loc {
				if l, ok := m.fwAt[k]; ok {
					return []loc{l}
				}
				return nil
			})})
	}
	return fs
}

// nearest returns the locations of each source's sentence whose length is
// closest to target.
func nearest[T any](items []T, length func(T) int, at func(T) loc, target float64) []loc {
	best, bestD := -1, math.MaxFloat64
	for i, it := range items {
		if d := math.Abs(float64(length(it)) - target); d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		return nil
	}
	return []loc{at(items[best])}
}

func (b *builder) syntax() []Feature {
	var lens []float64
	nq, ne, ns := 0, 0, 0
	for _, m := range b.ms {
		for _, s := range m.sentences {
			lens = append(lens, float64(s.length))
			if s.question {
				nq++
			}
			if s.exclaim {
				ne++
			}
		}
		ns += len(m.sentences)
	}
	pct := percentiles(lens)
	sentLen := func(s sentence) int { return s.length }
	sentAt := func(s sentence) loc { return s.loc }
	share := func(n, of int) float64 { return round(float64(n) * 100 / float64(max(1, of))) }
	return []Feature{
		{Name: "sentence_length", Value: pct[2], Unit: "characters (median)", Percentiles: pct,
			PerSource: b.perSource(func(m *measured) float64 {
				xs := make([]float64, len(m.sentences))
				for i, s := range m.sentences {
					xs[i] = float64(s.length)
				}
				return median(xs)
			}),
			Evidence: b.spread(func(m *measured) []loc { return nearest(m.sentences, sentLen, sentAt, pct[2]) })},
		{Name: "sentences", Value: float64(ns), Unit: "sentences",
			PerSource: b.perSource(func(m *measured) float64 { return float64(len(m.sentences)) }), Evidence: b.articles(b.ms)},
		{Name: "question_rate", Value: share(nq, ns), Unit: "per 100 sentences",
			PerSource: b.perSource(func(m *measured) float64 {
				return share(count(m.sentences, func(s sentence) bool { return s.question }), len(m.sentences))
			}),
			Evidence: b.spread(func(m *measured) []loc { return locsOf(m.sentences, func(s sentence) bool { return s.question }) })},
		{Name: "exclamation_rate", Value: share(ne, ns), Unit: "per 100 sentences",
			PerSource: b.perSource(func(m *measured) float64 {
				return share(count(m.sentences, func(s sentence) bool { return s.exclaim }), len(m.sentences))
			}),
			Evidence: b.spread(func(m *measured) []loc { return locsOf(m.sentences, func(s sentence) bool { return s.exclaim }) })},
	}
}

func count[T any](xs []T, f func(T) bool) int {
	n := 0
	for _, x := range xs {
		if f(x) {
			n++
		}
	}
	return n
}

func locsOf(ss []sentence, f func(sentence) bool) []loc {
	var out []loc
	for _, s := range ss {
		if f(s) {
			out = append(out, s.loc)
			if len(out) == maxEvidence {
				break
			}
		}
	}
	return out
}

func (b *builder) paragraph() []Feature {
	var lens, sents []float64
	for _, m := range b.ms {
		for _, p := range m.paragraphs {
			lens = append(lens, float64(p.length))
			sents = append(sents, float64(p.sentences))
		}
	}
	pl, ps := percentiles(lens), percentiles(sents)
	whole := func(m *measured, p paragraph) loc {
		return loc{p.block, source.Span{Start: 0, End: len([]rune(m.doc.Blocks[p.block].Text))}}
	}
	near := func(target float64, val func(paragraph) int) func(m *measured) []loc {
		return func(m *measured) []loc {
			return nearest(m.paragraphs, val, func(p paragraph) loc { return whole(m, p) }, target)
		}
	}
	return []Feature{
		{Name: "paragraph_length", Value: pl[2], Unit: "characters (median)", Percentiles: pl,
			PerSource: b.perSource(func(m *measured) float64 {
				xs := make([]float64, len(m.paragraphs))
				for i, p := range m.paragraphs {
					xs[i] = float64(p.length)
				}
				return median(xs)
			}),
			Evidence: b.spread(near(pl[2], func(p paragraph) int { return p.length }))},
		{Name: "sentences_per_paragraph", Value: ps[2], Unit: "sentences (median)", Percentiles: ps,
			PerSource: b.perSource(func(m *measured) float64 {
				xs := make([]float64, len(m.paragraphs))
				for i, p := range m.paragraphs {
					xs[i] = float64(p.sentences)
				}
				return median(xs)
			}),
			Evidence: b.spread(near(ps[2], func(p paragraph) int { return p.sentences }))},
	}
}

func (b *builder) blockRate(name string, blocks func(m *measured) []int) Feature {
	n := 0
	for _, m := range b.ms {
		n += len(blocks(m))
	}
	return Feature{Name: name, Value: per1000(n, b.totalChars()), Unit: "per 1,000 characters",
		PerSource: b.perSource(func(m *measured) float64 { return per1000(len(blocks(m)), m.chars) }),
		Evidence: b.spread(func(m *measured) []loc {
			var out []loc
			for _, bi := range blocks(m) {
				out = append(out, loc{bi, source.Span{Start: 0, End: len([]rune(m.doc.Blocks[bi].Text))}})
				if len(out) == maxEvidence {
					break
				}
			}
			return out
		})}
}

func (b *builder) structure() []Feature {
	return []Feature{
		b.blockRate("heading_rate", func(m *measured) []int { return m.headings }),
		b.blockRate("list_item_rate", func(m *measured) []int { return m.items }),
		b.blockRate("quote_rate", func(m *measured) []int { return m.quotes }),
		b.blockRate("code_rate", func(m *measured) []int { return m.code }),
	}
}

func (b *builder) narrativeFeatures() []Feature {
	fp, pl, tm := 0, 0, 0
	for _, m := range b.ms {
		fp += m.firstPerson
		pl += m.plural
		tm += m.timeMarkers
	}
	return []Feature{
		{Name: "first_person_rate", Value: per1000(fp, b.totalChars()), Unit: "per 1,000 characters",
			PerSource: b.perSource(func(m *measured) float64 { return per1000(m.firstPerson, m.chars) }),
			Evidence:  b.spread(func(m *measured) []loc { return m.firstPersonAt })},
		{Name: "first_person_plural_share", Value: round(float64(pl) / float64(max(1, fp))), Unit: "share of first-person references",
			PerSource: b.perSource(func(m *measured) float64 { return float64(m.plural) / float64(max(1, m.firstPerson)) }),
			Evidence:  b.spread(func(m *measured) []loc { return m.firstPersonAt })},
		{Name: "time_marker_rate", Value: per1000(tm, b.totalChars()), Unit: "per 1,000 characters",
			PerSource: b.perSource(func(m *measured) float64 { return per1000(m.timeMarkers, m.chars) }),
			Evidence:  b.spread(func(m *measured) []loc { return m.timeAt })},
	}
}

func (b *builder) format() []Feature {
	total := map[string]int{}
	full, half := 0, 0
	cjkFull, cjkAll, bound, spaced := 0, 0, 0, 0
	for _, m := range b.ms {
		for k, v := range m.punct {
			total[k] += v
			if strings.HasPrefix(k, "full:") {
				full += v
			} else {
				half += v
			}
		}
		cjkFull += m.cjkPunctFull
		cjkAll += m.cjkPunct
		bound += m.boundaries
		spaced += m.spaced
	}
	chars := b.totalChars()
	allPunct := func(m *measured) []loc {
		var out []loc
		for _, k := range sortedKeys(m.punctAt) {
			out = append(out, m.punctAt[k]...)
		}
		return out
	}
	prefixed := func(prefix string) func(m *measured) []loc {
		return func(m *measured) []loc {
			var out []loc
			for _, k := range sortedKeys(m.punctAt) {
				if strings.HasPrefix(k, prefix) {
					out = append(out, m.punctAt[k][0])
				}
			}
			return out
		}
	}
	sumPrefix := func(m *measured, prefix string) int {
		n := 0
		for k, v := range m.punct {
			if strings.HasPrefix(k, prefix) {
				n += v
			}
		}
		return n
	}
	fs := []Feature{
		{Name: "fullwidth_punctuation", Value: per1000(full, chars), Unit: "per 1,000 characters",
			PerSource: b.perSource(func(m *measured) float64 { return per1000(sumPrefix(m, "full:"), m.chars) }),
			Evidence:  b.spread(prefixed("full:"))},
		{Name: "halfwidth_punctuation", Value: per1000(half, chars), Unit: "per 1,000 characters",
			PerSource: b.perSource(func(m *measured) float64 { return per1000(sumPrefix(m, "half:"), m.chars) }),
			Evidence:  b.spread(prefixed("half:"))},
		{Name: "fullwidth_share_in_chinese", Value: round(float64(cjkFull) / float64(max(1, cjkAll))), Unit: "share of marks after Chinese text",
			PerSource: b.perSource(func(m *measured) float64 { return float64(m.cjkPunctFull) / float64(max(1, m.cjkPunct)) }),
			Evidence:  b.spread(allPunct)},
		{Name: "cjk_latin_spacing", Value: round(float64(spaced) / float64(max(1, bound))), Unit: "share of Chinese-Latin boundaries with a space",
			PerSource: b.perSource(func(m *measured) float64 { return float64(m.spaced) / float64(max(1, m.boundaries)) }),
			Evidence: b.spread(func(m *measured) []loc {
				if m.spaced*2 >= m.boundaries {
					return m.spacedAt
				}
				return m.unspacedAt
			})},
	}
	for _, k := range sortedKeys(total) {
		key := k
		mark := k[strings.IndexByte(k, ':')+1:]
		width := "full"
		if strings.HasPrefix(k, "half:") {
			width = "half"
		}
		fs = append(fs, Feature{Name: "punct_" + width + ":" + mark, Value: per1000(total[key], chars), Unit: "per 1,000 characters",
			PerSource: b.perSource(func(m *measured) float64 { return per1000(m.punct[key], m.chars) }),
			Evidence:  b.spread(func(m *measured) []loc { return m.punctAt[key] })})
	}
	return fs
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
