package search

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/persona/index"
)

// Bounds of a query.
const (
	MaxQueryBytes = 1 << 10 // the query text
	DefaultLimit  = 20      // hits when a query sets none
	MaxLimit      = 200     // the largest limit accepted
)

// Field names of an indexed document.
const (
	fieldOwner = "owner"
	fieldTitle = "title"
	fieldBody  = "body"
	fieldTags  = "tags"
	fieldShown = "shown" // the stored draft title, returned with a hit
)

// Hit is one document a query found.
type Hit struct {
	ID    string  `json:"id"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
}

// Source is what the index projects: the repository (*repo.Repo) or
// the daemon's content service.
type Source interface {
	// ListDocs describes the documents of owner ("": all of them),
	// deleted ones excluded.
	ListDocs(ctx context.Context, owner string) ([]repo.DocInfo, error)
	// Show materializes a version, or the draft (repo.DraftName).
	Show(ctx context.Context, doc, label string) (repo.Snapshot, error)
}

// stamp is what a document's index entry was made from: when any of it
// moves, Sync re-indexes the document.
type stamp struct {
	owner, head string
	draftSeq    uint64
}

func stampOf(d repo.DocInfo) stamp { return stamp{d.Owner, d.Head, d.DraftSeq} }

// Index is the document search index. It is safe for concurrent use.
type Index struct {
	syncMu sync.Mutex // serializes Rebuild and Sync
	mu     sync.RWMutex
	idx    bleve.Index
	seen   map[string]stamp // guarded by syncMu
}

func newMapping() (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	if err := index.AddCJKAnalyzer(im); err != nil {
		return nil, err
	}
	kw := bleve.NewKeywordFieldMapping()
	kw.Store, kw.IncludeInAll, kw.IncludeTermVectors = false, false, false
	text := bleve.NewTextFieldMapping()
	text.Analyzer = index.AnalyzerCJK
	text.Store, text.IncludeInAll, text.IncludeTermVectors = false, false, false
	stored := bleve.NewKeywordFieldMapping()
	stored.Index, stored.IncludeInAll = false, false
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldOwner, kw)
	for _, f := range []string{fieldTitle, fieldBody, fieldTags} {
		dm.AddFieldMappingsAt(f, text)
	}
	dm.AddFieldMappingsAt(fieldShown, stored)
	im.DefaultMapping = dm
	im.DefaultAnalyzer = index.AnalyzerCJK
	return im, nil
}

// Build makes an index from every document of r.
func Build(ctx context.Context, r Source) (*Index, error) {
	x := &Index{}
	if err := x.Rebuild(ctx, r); err != nil {
		return nil, err
	}
	return x, nil
}

// Rebuild replaces the index with one made from every document of r;
// queries answer from the old index until the new one is complete.
func (x *Index) Rebuild(ctx context.Context, r Source) error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	m, err := newMapping()
	if err != nil {
		return err
	}
	idx, err := bleve.NewMemOnly(m)
	if err != nil {
		return err
	}
	seen := map[string]stamp{}
	if err := fill(ctx, r, idx, seen, nil); err != nil {
		idx.Close()
		return err
	}
	x.mu.Lock()
	old := x.idx
	x.idx, x.seen = idx, seen
	x.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// Sync reconciles the index with r: it re-indexes the documents whose
// owner, head or draft moved since they were indexed and drops the ones
// that are gone or deleted. It reads every document's header, and the
// bodies of the changed ones only.
func (x *Index) Sync(ctx context.Context, r Source) error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	x.mu.RLock()
	idx := x.idx
	x.mu.RUnlock()
	if idx == nil {
		return errs.E(errs.Unavailable, "search: the index is closed")
	}
	return fill(ctx, r, idx, x.seen, x.seen)
}

// fill indexes into idx the documents of r whose stamp differs from
// prev (all of them when prev is nil), records the stamps in seen, and
// deletes from idx the documents of prev that r no longer lists.
func fill(ctx context.Context, r Source, idx bleve.Index, seen, prev map[string]stamp) error {
	docs, err := r.ListDocs(ctx, "")
	if err != nil {
		return err
	}
	listed := make(map[string]bool, len(docs))
	b := idx.NewBatch()
	for _, d := range docs {
		listed[d.ID] = true
		st := stampOf(d)
		if old, ok := prev[d.ID]; ok && old == st {
			continue
		}
		f, err := fieldsOf(ctx, r, d)
		if errors.Is(err, repo.ErrNotFound) {
			continue // deleted since it was listed: the next Sync drops it
		}
		if err != nil {
			return err
		}
		if err := b.Index(d.ID, f); err != nil {
			return err
		}
		seen[d.ID] = st
		if b.Size() >= 500 {
			if err := idx.Batch(b); err != nil {
				return err
			}
			b.Reset()
		}
	}
	for id := range prev {
		if !listed[id] {
			b.Delete(id)
			delete(seen, id)
		}
	}
	return idx.Batch(b)
}

// fieldsOf is the indexed form of d: the draft's and the head's title,
// text and tags.
func fieldsOf(ctx context.Context, r Source, d repo.DocInfo) (map[string]any, error) {
	draft, err := r.Show(ctx, d.ID, repo.DraftName)
	if err != nil {
		return nil, err
	}
	head, err := r.Show(ctx, d.ID, d.Head)
	if err != nil {
		return nil, err
	}
	join := func(a, b string) string {
		if a == b {
			return a
		}
		return a + "\n" + b
	}
	tags := strings.Join(draft.Attrs.Tags, "\n") + "\n" + strings.Join(head.Attrs.Tags, "\n")
	return map[string]any{
		fieldOwner: d.Owner,
		fieldTitle: join(draft.Attrs.Title, head.Attrs.Title),
		fieldBody:  join(draft.Body.Text(), head.Body.Text()),
		fieldTags:  tags,
		fieldShown: draft.Attrs.Title,
	}, nil
}

// Search returns owner's documents that match text, best first (ties by
// id), at most limit of them (0: DefaultLimit). Every word of text must
// occur in the title, the body or the tags.
func (x *Index) Search(ctx context.Context, owner, text string, limit int) ([]Hit, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return nil, errs.E(errs.Invalid, "search: the query is empty; give the words to look for")
	case len(text) > MaxQueryBytes:
		return nil, errs.E(errs.Invalid, "search: the query is %d bytes, over the limit of %d; shorten it", len(text), MaxQueryBytes)
	case !utf8.ValidString(text):
		return nil, errs.E(errs.Invalid, "search: the query is not valid UTF-8")
	case limit < 0 || limit > MaxLimit:
		return nil, errs.E(errs.Invalid, "search: limit %d is out of range; give 1 to %d", limit, MaxLimit)
	case owner == "":
		return nil, errs.E(errs.Invalid, "search: no owner; a search covers one user's documents")
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	// Each word must match somewhere; a word matches the title, body or
	// tags (its CJK bigrams and unigrams all in one field).
	var words []query.Query
	for _, w := range strings.Fields(text) {
		var any []query.Query
		for _, f := range []string{fieldTitle, fieldBody, fieldTags} {
			mq := query.NewMatchQuery(w)
			mq.SetField(f)
			mq.Analyzer = index.AnalyzerCJK
			mq.SetOperator(query.MatchQueryOperatorAnd)
			if f == fieldTitle {
				mq.SetBoost(3)
			} else if f == fieldTags {
				mq.SetBoost(2)
			}
			any = append(any, mq)
		}
		words = append(words, query.NewDisjunctionQuery(any))
	}
	own := query.NewTermQuery(owner)
	own.SetField(fieldOwner)
	q := query.NewConjunctionQuery(append([]query.Query{own}, words...))
	req := bleve.NewSearchRequestOptions(q, limit, 0, false)
	req.Fields = []string{fieldShown}
	x.mu.RLock()
	res, err := x.idx.SearchInContext(ctx, req)
	x.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	out := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		title, _ := h.Fields[fieldShown].(string)
		out = append(out, Hit{ID: h.ID, Title: title, Score: h.Score})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Close releases the index.
func (x *Index) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return nil
	}
	err := x.idx.Close()
	x.idx = nil
	return err
}
