package style

import (
	"math"
	"sort"

	"github.com/foliodev/folio/persona/source"
)

// FunctionWordStats are the author's function-word statistics: the
// reference corpus of Burrows' Delta is the persona's own sources.
//
// Classic Delta (Burrows 2002) standardizes word frequencies against a
// reference corpus of many authors and compares a text with each
// candidate author's mean. A persona has one author and the question is
// different — "how far is this text from how this author writes?" — so
// the reference is the author's own sources: Mean and Std are taken
// across the sources (frequency per 1,000 words of each source), the
// profile's z-vector is zero by construction, and a text's Delta is the
// mean absolute z-score of its frequencies: how many of the author's own
// standard deviations it lies from the author's centre, on average over
// the Words. A general reference corpus would measure "how typical of
// Chinese prose" as well, which is not what an author wants to see on a
// suggestion.
type FunctionWordStats struct {
	// Words are the most frequent function words of the sources (keys
	// "en:the", "zh:的"), at most 50, most frequent first.
	Words []string  `json:"words" msgpack:"words"`
	Mean  []float64 `json:"mean" msgpack:"mean"`
	// Std is the sample standard deviation across sources, floored (see
	// stdFloor).
	Std   []float64 `json:"std" msgpack:"std"`
	Units int       `json:"units" msgpack:"units"`
	// Calibration are the leave-one-out Deltas of the sources (each
	// source against the statistics of the others), sorted; empty with
	// fewer than 3 sources.
	Calibration []float64 `json:"calibration,omitempty" msgpack:"cal,omitempty"`
}

// stdFloor keeps one word's z-score finite and sane when the sources
// agree closely on it (or never use it): half a use per 1,000 words, or a
// tenth of the mean, whichever is larger.
func stdFloor(mean float64) float64 { return math.Max(0.5, 0.1*mean) }

// rates is one text's function-word frequencies per 1,000 units.
func rates(c counts, words []string) []float64 {
	out := make([]float64, len(words))
	for i, w := range words {
		if c.units > 0 {
			out[i] = float64(c.fw[w]) * 1000 / float64(c.units)
		}
	}
	return out
}

func meanStd(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

func functionWordStats(ms []*measured) FunctionWordStats {
	total := map[string]int{}
	units := 0
	for _, m := range ms {
		units += m.fw.units
		for k, v := range m.fw.fw {
			total[k] += v
		}
	}
	var words []string
	for _, k := range fwKeys {
		if total[k] > 0 {
			words = append(words, k)
		}
	}
	sort.SliceStable(words, func(i, j int) bool { return total[words[i]] > total[words[j]] })
	words = words[:min(len(words), deltaWords)]
	per := make([][]float64, len(ms))
	for i, m := range ms {
		per[i] = rates(m.fw, words)
	}
	st := FunctionWordStats{Words: words, Units: units}
	st.Mean, st.Std = columnStats(per, len(words), -1)
	if len(ms) >= minCalibrations {
		for i := range ms {
			mean, std := columnStats(per, len(words), i)
			st.Calibration = append(st.Calibration, round(delta(per[i], mean, std)))
		}
		sort.Float64s(st.Calibration)
	}
	return st
}

// columnStats returns the per-word mean and floored std over the rows of
// per, leaving out row skip (-1: none).
func columnStats(per [][]float64, n, skip int) (mean, std []float64) {
	mean, std = make([]float64, n), make([]float64, n)
	col := make([]float64, 0, len(per))
	for w := 0; w < n; w++ {
		col = col[:0]
		for i, r := range per {
			if i != skip {
				col = append(col, r[w])
			}
		}
		m, s := meanStd(col)
		mean[w], std[w] = round(m), round(math.Max(s, stdFloor(m)))
	}
	return mean, std
}

func delta(r, mean, std []float64) float64 {
	if len(r) == 0 {
		return 0
	}
	sum := 0.0
	for i := range r {
		sum += math.Abs(r[i]-mean[i]) / std[i]
	}
	return sum / float64(len(r))
}

// Closeness is how close a text is to a profile.
type Closeness struct {
	// Delta is Burrows' Delta against the profile (0 is the author's
	// centre; about 1 is one of the author's own standard deviations
	// away on average).
	Delta float64 `json:"delta"`
	// Percentile is the share of the author's own sources (left out one
	// at a time) that lie at least as far from the rest as this text
	// does: 1 is closer than every source, 0 farther than all. -1 when
	// the profile has no calibration (fewer than 3 sources).
	Percentile float64 `json:"percentile"`
	// Units are the words (Latin words and CJK characters) measured;
	// Reliable is false under MinUnits, where one word moves the score.
	Units    int  `json:"units"`
	Reliable bool `json:"reliable"`
}

// MinUnits is the length below which a closeness score is unreliable.
const MinUnits = 150

// Close scores text against profile p. It works on any text (an article,
// a suggestion candidate's new text) and is deterministic.
func (p *Profile) Close(text string) Closeness {
	var c counts
	countFunctionWords(text, &c)
	st := p.FunctionWords
	if len(st.Words) == 0 {
		return Closeness{Percentile: -1, Units: c.units}
	}
	d := round(delta(rates(c, st.Words), st.Mean, st.Std))
	out := Closeness{Delta: d, Percentile: -1, Units: c.units, Reliable: c.units >= MinUnits}
	if n := len(st.Calibration); n > 0 {
		i := sort.SearchFloat64s(st.Calibration, d) // first >= d
		out.Percentile = round(float64(n-i) / float64(n))
	}
	return out
}

// CloseDocument scores a whole source document.
func (p *Profile) CloseDocument(d source.Document) Closeness {
	var text []byte
	for _, b := range d.Prose() {
		text = append(text, b.Text...)
		text = append(text, '\n')
	}
	return p.Close(string(text))
}
