package index

import (
	"context"
	"math"
	"sort"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/foliodev/folio/internal/errs"
)

// Bounds of a query.
const (
	// Candidates is how many text matches are re-ranked.
	Candidates = 100
	// MaxQueryBytes bounds the query text.
	MaxQueryBytes = 8 << 10
	// DefaultMaxItems and DefaultMaxChars are the budgets when a query
	// sets none; MaxItemsLimit is the largest item budget accepted.
	DefaultMaxItems = 8
	DefaultMaxChars = 1200
	MaxItemsLimit   = 100
)

// Weights of the re-ranking (see Query).
const (
	weightText       = 0.6
	weightConfidence = 0.3
	weightEvidence   = 0.1
	evidenceSaturate = 5 // evidence count at which its term is full
)

// Query asks for a persona's memory items.
type Query struct {
	User, Persona, Snapshot string
	// Text is what to look for: the request's instruction, target text
	// and neighbouring context.
	Text string
	// Statuses allowed; empty means supported only.
	Statuses []string
	// ExcludeDoc drops the items whose only evidence is this document
	// (the article being written: its own facts are already in the
	// input, and citing them as memory would be circular).
	ExcludeDoc string
	// MaxItems and MaxChars are the budgets (0: the defaults): items are
	// taken in ranked order while both hold; an item that would exceed
	// the character budget is skipped.
	MaxItems, MaxChars int
}

// Hit is one retrieved item.
type Hit struct {
	Key        string  `json:"key"`
	Score      float64 `json:"score"`     // the re-ranked score
	TextScore  float64 `json:"textScore"` // bleve's score
	Confidence float64 `json:"confidence"`
	Evidence   int     `json:"evidence"`
	Chars      int     `json:"chars"`
}

// Result is a query's answer.
type Result struct {
	Hits []Hit `json:"hits"`
	// Matched is how many items matched the query (all of them, not only
	// the top Candidates); OverBudget how many re-ranked candidates the
	// budgets left out.
	Matched    uint64 `json:"matched"`
	OverBudget int    `json:"overBudget"`
}

// filter is an exact term of the filter. Its boost is 0: it selects
// documents and adds nothing to their score, so a rare status or persona
// never outranks a better text match.
func filter(field, value string) query.Query {
	q := bleve.NewTermQuery(value)
	q.SetField(field)
	q.SetBoost(0)
	return q
}

func term(field, value string) query.Query {
	q := bleve.NewTermQuery(value)
	q.SetField(field)
	return q
}

// Search runs q: one conjunction of exact user, persona, snapshot and
// status terms with the text match (the filter is part of the query, so
// the index never scores another persona's items), minus the items whose
// only evidence is q.ExcludeDoc; the top Candidates by text score are
// re-ranked by
//
//	0.6 × text score / best text score + 0.3 × confidence + 0.1 × min(1, log(1+evidence)/log(1+5))
//
// (ties by key) and cut to the budgets.
func (x *Index) Search(ctx context.Context, q Query) (Result, error) {
	if q.User == "" || q.Persona == "" || q.Snapshot == "" {
		return Result{}, errs.E(errs.Invalid, "index: a memory query needs user, persona and snapshot")
	}
	if len(q.Text) > MaxQueryBytes {
		return Result{}, errs.E(errs.TooLarge, "index: query text is %d bytes, at most %d", len(q.Text), MaxQueryBytes)
	}
	if q.MaxItems < 0 || q.MaxItems > MaxItemsLimit || q.MaxChars < 0 {
		return Result{}, errs.E(errs.Invalid, "index: item budget must be 0..%d and the character budget not negative", MaxItemsLimit)
	}
	if q.MaxItems == 0 {
		q.MaxItems = DefaultMaxItems
	}
	if q.MaxChars == 0 {
		q.MaxChars = DefaultMaxChars
	}
	statuses := q.Statuses
	if len(statuses) == 0 {
		statuses = []string{"supported"}
	}
	var status query.Query
	if len(statuses) == 1 {
		status = filter(fieldStatus, statuses[0])
	} else {
		ds := make([]query.Query, len(statuses))
		for i, s := range statuses {
			ds[i] = filter(fieldStatus, s)
		}
		status = bleve.NewDisjunctionQuery(ds...)
	}
	text := bleve.NewMatchQuery(q.Text)
	text.SetField(fieldText)
	text.Analyzer = analyzerCJK
	var root query.Query = bleve.NewConjunctionQuery(filter(fieldUser, q.User), filter(fieldPersona, q.Persona),
		filter(fieldSnapshot, q.Snapshot), status, text)
	if q.ExcludeDoc != "" {
		bq := bleve.NewBooleanQuery()
		bq.AddMust(root)
		bq.AddMustNot(term(fieldSoleDoc, q.ExcludeDoc))
		root = bq
	}
	req := bleve.NewSearchRequestOptions(root, Candidates, 0, false)
	req.Fields = []string{fieldConf, fieldEvidence, fieldChars, fieldKey}
	req.SortBy([]string{"-_score", "_id"})
	x.mu.RLock()
	idx := x.idx
	x.mu.RUnlock()
	if idx == nil {
		return Result{}, ErrUnavailable
	}
	res, err := idx.SearchInContext(ctx, req)
	if err != nil {
		return Result{}, err
	}
	return rerank(res.Hits, res.Total, q), nil
}

func num(h *search.DocumentMatch, f string) float64 {
	v, _ := h.Fields[f].(float64)
	return v
}

func rerank(hits search.DocumentMatchCollection, total uint64, q Query) Result {
	best := 0.0
	for _, h := range hits {
		best = math.Max(best, h.Score)
	}
	out := Result{Matched: total}
	cands := make([]Hit, 0, len(hits))
	for _, h := range hits {
		key, _ := h.Fields[fieldKey].(string)
		c := Hit{Key: key, TextScore: h.Score, Confidence: num(h, fieldConf), Evidence: int(num(h, fieldEvidence)), Chars: int(num(h, fieldChars))}
		ts := 0.0
		if best > 0 {
			ts = h.Score / best
		}
		ev := math.Min(1, math.Log1p(float64(c.Evidence))/math.Log1p(evidenceSaturate))
		c.Score = math.Round((weightText*ts+weightConfidence*c.Confidence+weightEvidence*ev)*1e6) / 1e6
		cands = append(cands, c)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Score != cands[j].Score {
			return cands[i].Score > cands[j].Score
		}
		return cands[i].Key < cands[j].Key
	})
	chars := 0
	for _, c := range cands {
		if len(out.Hits) == q.MaxItems || chars+c.Chars > q.MaxChars {
			out.OverBudget++
			continue
		}
		chars += c.Chars
		out.Hits = append(out.Hits, c)
	}
	return out
}
