package style

import (
	"fmt"
	"sort"
	"strings"

	"github.com/foliodev/folio/persona/source"
)

// thresholds of the length rules, by primary language (characters).
type lengthThresholds struct{ shortSent, longSent, shortPara, longPara float64 }

var thresholds = map[string]lengthThresholds{
	"zh":    {shortSent: 20, longSent: 45, shortPara: 60, longPara: 180},
	"mixed": {shortSent: 25, longSent: 60, shortPara: 80, longPara: 240},
	"en":    {shortSent: 70, longSent: 140, shortPara: 250, longPara: 600},
}

// minRuleWeight is the share of sources in which a rule must hold.
const minRuleWeight = 0.5

// candidate is one rule the learner knows how to check per source.
type candidate struct {
	id, dim, statement string
	features           []string
	holds              func(m *measured) bool
	applies            func(b *builder) bool
}

func (b *builder) candidates() []candidate {
	t := thresholds[b.lang]
	always := func(*builder) bool { return true }
	hasChinese := func(b *builder) bool { return b.lang != "en" }
	hasBoundaries := func(b *builder) bool {
		n := 0
		for _, m := range b.ms {
			n += m.boundaries
		}
		return n >= 5
	}
	medianSentence := func(m *measured) float64 {
		xs := make([]float64, len(m.sentences))
		for i, s := range m.sentences {
			xs[i] = float64(s.length)
		}
		return median(xs)
	}
	medianParagraph := func(m *measured) float64 {
		xs := make([]float64, len(m.paragraphs))
		for i, p := range m.paragraphs {
			xs[i] = float64(p.length)
		}
		return median(xs)
	}
	rate := func(n, chars int) float64 { return per1000(n, chars) }
	return []candidate{
		{id: "language.chinese", dim: DimLanguage, statement: "Writes in Chinese.", features: []string{"primary"}, applies: always,
			holds: func(m *measured) bool { return languageOf(m.cjk, m.latin) == "zh" }},
		{id: "language.english", dim: DimLanguage, statement: "Writes in English.", features: []string{"primary"}, applies: always,
			holds: func(m *measured) bool { return languageOf(m.cjk, m.latin) == "en" }},
		{id: "language.mixed", dim: DimLanguage, statement: "Mixes Chinese and English in the same text.", features: []string{"primary"}, applies: always,
			holds: func(m *measured) bool { return languageOf(m.cjk, m.latin) == "mixed" }},
		{id: "syntax.short_sentences", dim: DimSyntax, statement: fmt.Sprintf("Keeps sentences short (median at most %.0f characters).", t.shortSent),
			features: []string{"sentence_length"}, applies: always,
			holds: func(m *measured) bool {
				return len(m.sentences) > 0 && medianSentence(m) <= t.shortSent
			}},
		{id: "syntax.long_sentences", dim: DimSyntax, statement: fmt.Sprintf("Writes long sentences (median at least %.0f characters).", t.longSent),
			features: []string{"sentence_length"}, applies: always,
			holds: func(m *measured) bool { return medianSentence(m) >= t.longSent }},
		{id: "syntax.questions", dim: DimSyntax, statement: "Asks the reader questions (at least 5 in 100 sentences).",
			features: []string{"question_rate"}, applies: always,
			holds: func(m *measured) bool {
				return len(m.sentences) > 0 && count(m.sentences, func(s sentence) bool { return s.question })*100 >= 5*len(m.sentences)
			}},
		{id: "paragraph.short", dim: DimParagraph, statement: fmt.Sprintf("Keeps paragraphs short (median at most %.0f characters).", t.shortPara),
			features: []string{"paragraph_length"}, applies: always,
			holds: func(m *measured) bool {
				return len(m.paragraphs) > 0 && medianParagraph(m) <= t.shortPara
			}},
		{id: "paragraph.long", dim: DimParagraph, statement: fmt.Sprintf("Writes long paragraphs (median at least %.0f characters).", t.longPara),
			features: []string{"paragraph_length"}, applies: always,
			holds: func(m *measured) bool { return medianParagraph(m) >= t.longPara }},
		{id: "structure.headings", dim: DimStructure, statement: "Structures articles with headings (at least 2 per article).",
			features: []string{"heading_rate"}, applies: always,
			holds: func(m *measured) bool { return len(m.headings) >= 2 }},
		{id: "structure.no_headings", dim: DimStructure, statement: "Writes articles without headings.",
			features: []string{"heading_rate"}, applies: always,
			holds: func(m *measured) bool { return len(m.headings) == 0 }},
		{id: "structure.lists", dim: DimStructure, statement: "Uses lists (at least 3 items per article).",
			features: []string{"list_item_rate"}, applies: always,
			holds: func(m *measured) bool { return len(m.items) >= 3 }},
		{id: "structure.quotes", dim: DimStructure, statement: "Quotes other texts in quote blocks.",
			features: []string{"quote_rate"}, applies: always,
			holds: func(m *measured) bool { return len(m.quotes) >= 1 }},
		{id: "structure.code", dim: DimStructure, statement: "Includes code blocks.",
			features: []string{"code_rate"}, applies: always,
			holds: func(m *measured) bool { return len(m.code) >= 1 }},
		{id: "narrative.first_person", dim: DimNarrative, statement: "Writes in the first person (at least 3 references per 1,000 characters).",
			features: []string{"first_person_rate"}, applies: always,
			holds: func(m *measured) bool { return rate(m.firstPerson, m.chars) >= 3 }},
		{id: "narrative.impersonal", dim: DimNarrative, statement: "Writes impersonally (first person rarely, under 0.5 per 1,000 characters).",
			features: []string{"first_person_rate"}, applies: always,
			holds: func(m *measured) bool { return rate(m.firstPerson, m.chars) < 0.5 }},
		{id: "narrative.timeline", dim: DimNarrative, statement: "Tells things in time order (time markers at least 2 per 1,000 characters).",
			features: []string{"time_marker_rate"}, applies: always,
			holds: func(m *measured) bool { return rate(m.timeMarkers, m.chars) >= 2 }},
		{id: "format.fullwidth", dim: DimFormat, statement: "Uses full-width punctuation in Chinese text.",
			features: []string{"fullwidth_share_in_chinese"}, applies: hasChinese,
			holds: func(m *measured) bool {
				return m.cjkPunct > 0 && float64(m.cjkPunctFull) >= 0.9*float64(m.cjkPunct)
			}},
		{id: "format.cjk_latin_space", dim: DimFormat, statement: "Puts a space between Chinese and Latin letters or digits.",
			features: []string{"cjk_latin_spacing"}, applies: hasBoundaries,
			holds: func(m *measured) bool {
				return m.boundaries > 0 && float64(m.spaced) >= 0.8*float64(m.boundaries)
			}},
		{id: "format.cjk_latin_no_space", dim: DimFormat, statement: "Writes Chinese and Latin letters or digits without a space between them.",
			features: []string{"cjk_latin_spacing"}, applies: hasBoundaries,
			holds: func(m *measured) bool {
				return m.boundaries > 0 && float64(m.spaced) <= 0.2*float64(m.boundaries)
			}},
		{id: "format.few_exclamations", dim: DimFormat, statement: "Rarely uses exclamation marks (under 0.2 per 1,000 characters).",
			features: []string{"exclamation_rate"}, applies: always,
			holds: func(m *measured) bool {
				return rate(m.punct["full:！"]+m.punct["half:!"], m.chars) < 0.2
			}},
		{id: "format.exclamations", dim: DimFormat, statement: "Uses exclamation marks (at least 2 per 1,000 characters).",
			features: []string{"exclamation_rate"}, applies: always,
			holds: func(m *measured) bool {
				return rate(m.punct["full:！"]+m.punct["half:!"], m.chars) >= 2
			}},
		{id: "format.dashes", dim: DimFormat, statement: "Uses dashes (——) to break or extend sentences.",
			features: []string{"punct_full:—"}, applies: hasChinese,
			holds: func(m *measured) bool { return rate(m.punct["full:—"], m.chars) >= 0.5 }},
	}
}

// rules evaluates the candidates: a rule is kept when it holds in at
// least half of the sources; its weight is that share. Its evidence is
// its features' evidence from the sources where it holds, else the
// sources themselves.
func (b *builder) rules(p *Profile) []Rule {
	var out []Rule
	for _, c := range b.candidates() {
		if !c.applies(b) {
			continue
		}
		var holding []*measured
		for _, m := range b.ms {
			if c.holds(m) {
				holding = append(holding, m)
			}
		}
		w := round(float64(len(holding)) / float64(len(b.ms)))
		if w < minRuleWeight {
			continue
		}
		in := map[source.VersionID]bool{}
		for _, m := range holding {
			in[m.doc.Pin.Version] = true
		}
		var ev []source.Evidence
		for _, name := range c.features {
			if f := p.Feature(c.dim, name); f != nil {
				for _, e := range f.Evidence {
					if in[e.Version] && len(ev) < maxEvidence {
						ev = append(ev, e)
					}
				}
			} else {
				for _, d := range p.Dimensions {
					if f := p.Feature(d.Name, name); f != nil {
						for _, e := range f.Evidence {
							if in[e.Version] && len(ev) < maxEvidence {
								ev = append(ev, e)
							}
						}
					}
				}
			}
		}
		if len(ev) == 0 {
			ev = b.articles(holding)
		}
		out = append(out, Rule{ID: c.id, Dimension: c.dim, Statement: c.statement, Weight: w, Features: c.features, Evidence: ev})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Weight > out[j].Weight })
	return out
}

// patterns are the characteristic n-grams (found in at least 2 sources,
// maximal: a gram inside a longer one with the same sources and almost
// as many occurrences is dropped) and frequent sentence openings.
func (b *builder) patterns() []Pattern {
	out := b.topGrams("ngram", func(m *measured) map[string]*gramCount { return m.grams }, maxPatterns, 2)
	return append(out, b.topGrams("opening", func(m *measured) map[string]*gramCount { return m.openings }, maxOpenings, 3)...)
}

func (b *builder) topGrams(kind string, of func(m *measured) map[string]*gramCount, limit, minCount int) []Pattern {
	type agg struct {
		key     string
		n, df   int
		sources []*measured
	}
	all := map[string]*agg{}
	for _, m := range b.ms {
		for k, g := range of(m) {
			a := all[k]
			if a == nil {
				a = &agg{key: k}
				all[k] = a
			}
			a.n += g.n
			a.df++
			a.sources = append(a.sources, m)
		}
	}
	var cands []*agg
	for _, a := range all {
		if a.df >= 2 && a.n >= minCount {
			cands = append(cands, a)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		ci, cj := cands[i], cands[j]
		if ci.df != cj.df {
			return ci.df > cj.df
		}
		if ci.n != cj.n {
			return ci.n > cj.n
		}
		if len(ci.key) != len(cj.key) {
			return len(ci.key) > len(cj.key)
		}
		return ci.key < cj.key
	})
	var out []Pattern
	var kept []*agg
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		sub := false
		for _, k := range kept {
			if strings.Contains(k.key, c.key) && k.df == c.df && k.n*5 >= c.n*4 {
				sub = true
				break
			}
		}
		if sub {
			continue
		}
		kept = append(kept, c)
		var ev []source.Evidence
		for _, m := range c.sources {
			if len(ev) == maxEvidence {
				break
			}
			ev = append(ev, b.ev(m, of(m)[c.key].first))
		}
		out = append(out, Pattern{Kind: kind, Text: c.key, Count: c.n, Sources: c.df, Evidence: ev})
	}
	return out
}

func (b *builder) uncertainties(p *Profile) []Uncertainty {
	var out []Uncertainty
	all := b.articles(b.ms)
	if len(b.ms) < minSourcesFirm {
		out = append(out, Uncertainty{Topic: "sources", Evidence: all,
			Reason: fmt.Sprintf("only %d source(s); rules and rates may change with more (at least %d are firmer)", len(b.ms), minSourcesFirm)})
	}
	if c := b.totalChars(); c < minCharsFirm {
		out = append(out, Uncertainty{Topic: "length", Evidence: all,
			Reason: fmt.Sprintf("the sources hold %d characters of prose; under %d, rates are noisy", c, minCharsFirm)})
	}
	if b.lang == "mixed" {
		out = append(out, Uncertainty{Topic: DimLanguage, Evidence: p.Feature(DimLanguage, "primary").Evidence,
			Reason: "the sources mix Chinese and English; length thresholds are those of mixed text"})
	}
	if len(b.ms) < minCalibrations {
		out = append(out, Uncertainty{Topic: "closeness", Evidence: all,
			Reason: fmt.Sprintf("closeness scores are not calibrated: that needs at least %d sources", minCalibrations)})
	}
	for _, f := range []struct{ dim, name string }{{DimSyntax, "sentence_length"}, {DimParagraph, "paragraph_length"}, {DimNarrative, "first_person_rate"}} {
		ft := p.Feature(f.dim, f.name)
		if ft == nil || len(ft.PerSource) < 2 {
			continue
		}
		if cv := variation(ft.PerSource); cv > 0.5 {
			lo, hi := extremes(ft.PerSource)
			ev := []source.Evidence{b.articles([]*measured{b.ms[lo]})[0], b.articles([]*measured{b.ms[hi]})[0]}
			out = append(out, Uncertainty{Topic: f.dim + "." + f.name, Evidence: ev,
				Reason: fmt.Sprintf("varies a lot between sources (from %.4g to %.4g, coefficient of variation %.2f)", ft.PerSource[lo], ft.PerSource[hi], cv)})
		}
	}
	return out
}

func variation(xs []float64) float64 {
	mean, sd := meanStd(xs)
	if mean == 0 {
		return 0
	}
	return round(sd / mean)
}

func extremes(xs []float64) (lo, hi int) {
	for i, x := range xs {
		if x < xs[lo] {
			lo = i
		}
		if x > xs[hi] {
			hi = i
		}
	}
	return lo, hi
}

// summary joins the strongest rules into one paragraph.
func summary(p *Profile, b *builder) string {
	var parts []string
	for _, r := range p.Rules {
		if len(parts) == 5 {
			break
		}
		parts = append(parts, strings.TrimSuffix(r.Statement, "."))
	}
	head := fmt.Sprintf("Measured over %d source(s), %d characters of prose.", len(p.Sources), b.totalChars())
	if len(parts) == 0 {
		return head + " No rule holds in most sources."
	}
	return head + " " + strings.Join(parts, "; ") + "."
}
