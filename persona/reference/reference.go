package reference

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/persona/source"
)

// Limits.
const (
	// DefaultLimit is how many references a persona request gets.
	DefaultLimit = 3
	// MaxTextRunes is how much of a candidate's text is read.
	MaxTextRunes = 4000
	// MaxQueryRunes bounds each part of the request read for keywords.
	MaxQueryRunes = 4000
)

// Weights of the score.
const (
	weightCategory = 3.0
	weightTag      = 2.0
)

// Weights of the request's parts as keyword sources.
var partWeights = struct{ title, summary, instruction, target, context, tags float64 }{3, 2, 2, 1.5, 1, 2}

// Candidate is another published article.
type Candidate struct {
	Doc      string     `json:"doc"`
	Pin      source.Pin `json:"pin"`
	Title    string     `json:"title"`
	Summary  string     `json:"summary"`
	Category string     `json:"category"`
	Tags     []string   `json:"tags"`
	// Text is the article's plain text (only the first MaxTextRunes are
	// read).
	Text string `json:"text"`
}

// Request is what the persona request says about the article being
// written.
type Request struct {
	Doc         string // the current article: never its own reference
	Title       string
	Summary     string
	Category    string
	Tags        []string
	Instruction string
	Target      string // the text in scope
	Context     string // neighbouring blocks
}

// Ranked is a chosen reference and why.
type Ranked struct {
	Candidate
	Score   float64  `json:"score"`
	Reasons []string `json:"reasons"`
}

// Rank returns up to limit candidates (DefaultLimit when limit <= 0),
// best first: score = 3 for the same category + 2 per shared tag + the
// keyword score, Σ over keywords shared by request and candidate of
// (request weight × idf) / √(Σ request weight²), where keywords are
// Latin words (lowercase, at least 3 letters) and CJK character bigrams,
// request weights add up the parts they occur in (title 3, summary 2,
// instruction 2, tags 2, target 1.5, context 1) and idf = ln(1 + N/df)
// over the N candidates. A candidate with score 0 is never chosen; the
// current document and duplicates are skipped; ties go to the document
// id, so the answer is the same for the same input.
func Rank(req Request, cands []Candidate, limit int) []Ranked {
	if limit <= 0 {
		limit = DefaultLimit
	}
	q := map[string]float64{}
	addKeywords(q, req.Title, partWeights.title)
	addKeywords(q, req.Summary, partWeights.summary)
	addKeywords(q, req.Instruction, partWeights.instruction)
	addKeywords(q, req.Target, partWeights.target)
	addKeywords(q, req.Context, partWeights.context)
	for _, t := range req.Tags {
		addKeywords(q, t, partWeights.tags)
	}
	norm := 0.0
	for _, w := range q {
		norm += w * w
	}
	norm = math.Sqrt(norm)
	type cand struct {
		c  Candidate
		kw map[string]bool
	}
	var cs []cand
	df := map[string]int{}
	seen := map[string]bool{req.Doc: true}
	for _, c := range cands {
		if seen[c.Doc] {
			continue
		}
		seen[c.Doc] = true
		kw := map[string]float64{}
		addKeywords(kw, c.Title, 1)
		addKeywords(kw, c.Summary, 1)
		addKeywords(kw, prefix(c.Text, MaxTextRunes), 1)
		for _, t := range c.Tags {
			addKeywords(kw, t, 1)
		}
		set := make(map[string]bool, len(kw))
		for k := range kw {
			set[k] = true
			df[k]++
		}
		cs = append(cs, cand{c, set})
	}
	reqTags := map[string]bool{}
	for _, t := range req.Tags {
		reqTags[fold(t)] = true
	}
	var out []Ranked
	for _, c := range cs {
		r := Ranked{Candidate: c.c}
		if req.Category != "" && fold(req.Category) == fold(c.c.Category) {
			r.Score += weightCategory
			r.Reasons = append(r.Reasons, "category "+c.c.Category)
		}
		for _, t := range c.c.Tags {
			if reqTags[fold(t)] {
				r.Score += weightTag
				r.Reasons = append(r.Reasons, "tag "+t)
			}
		}
		if norm > 0 {
			kwScore := 0.0
			var shared []string
			for k, w := range q {
				if c.kw[k] {
					kwScore += w * math.Log(1+float64(len(cs))/float64(df[k]))
					shared = append(shared, k)
				}
			}
			if kwScore > 0 {
				sort.Slice(shared, func(i, j int) bool {
					if q[shared[i]] != q[shared[j]] {
						return q[shared[i]] > q[shared[j]]
					}
					return shared[i] < shared[j]
				})
				r.Score += kwScore / norm
				r.Reasons = append(r.Reasons, "keywords "+strings.Join(shared[:min(5, len(shared))], ", "))
			}
		}
		if r.Score > 0 {
			r.Score = math.Round(r.Score*1e6) / 1e6
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Doc < out[j].Doc
	})
	return out[:min(limit, len(out))]
}

func fold(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func prefix(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

var stop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "this": true, "that": true, "from": true,
	"are": true, "was": true, "were": true, "you": true, "your": true, "our": true, "not": true, "but": true, "have": true,
	"has": true, "had": true, "its": true, "into": true, "about": true, "make": true, "more": true, "please": true}

// stopBigrams are CJK bigrams too common to mean anything.
var stopBigrams = map[string]bool{"我们": true, "一个": true, "这个": true, "那个": true, "没有": true, "可以": true,
	"就是": true, "不是": true, "什么": true, "自己": true, "他们": true, "这样": true, "因为": true, "所以": true, "但是": true,
	"如果": true, "已经": true, "还是": true, "帮我": true, "一下": true, "一些": true}

// addKeywords adds text's keywords to m with weight w.
func addKeywords(m map[string]float64, text string, w float64) {
	rs := []rune(prefix(text, MaxQueryRunes))
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case source.IsCJK(r):
			j := i
			for j < len(rs) && source.IsCJK(rs[j]) {
				j++
			}
			for k := i; k+1 < j; k++ {
				bg := string(rs[k : k+2])
				if !stopBigrams[bg] {
					m[bg] += w
				}
			}
			i = j
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) && !source.IsCJK(rs[j]) {
				j++
			}
			word := strings.ToLower(string(rs[i:j]))
			if utf8.RuneCountInString(word) >= 3 && !stop[word] {
				m[word] += w
			}
			i = j
		default:
			i++
		}
	}
}
