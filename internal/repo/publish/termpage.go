package publish

import (
	"bytes"
	"context"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// Listing categories and tags for authors: a page at a time, and counting
// only the articles the caller may see, so that the listing says nothing
// about other authors' private and password-protected articles. A term
// every use of which is such an article is left out; a term no article
// uses is listed (it says nothing about any article).

// Page sizes of the term listings.
const (
	DefaultTermPage = 500
	MaxTermPage     = 1000
)

// TermQuery selects a page of categories or tags.
type TermQuery struct {
	// After continues after the term of this name (case-insensitively).
	After string
	// Limit is the page size (1..MaxTermPage; 0: DefaultTermPage).
	Limit int
	// MaySee reports whether the caller may see the article of document
	// doc although it is not public (the caller's own; an admin's all).
	// nil: every article counts.
	MaySee func(doc string) bool
}

// TermPage is one page of a listing; Next, when set, is the After of the
// next page.
type TermPage struct {
	Terms []Term
	Next  string
}

// CategoriesPage returns a page of the categories for a caller (see TermQuery).
func (s *Store) CategoriesPage(ctx context.Context, q TermQuery) (TermPage, error) {
	return s.termPage(ctx, categories, q)
}

// TagsPage returns a page of the tags for a caller (see TermQuery).
func (s *Store) TagsPage(ctx context.Context, q TermQuery) (TermPage, error) {
	return s.termPage(ctx, tags, q)
}

func (s *Store) termPage(ctx context.Context, k termKind, q TermQuery) (TermPage, error) {
	switch {
	case q.Limit == 0:
		q.Limit = DefaultTermPage
	case q.Limit < 0 || q.Limit > MaxTermPage:
		return TermPage{}, errs.E(errs.Invalid, "limit %d: want 1..%d", q.Limit, MaxTermPage)
	}
	p := k.key("")
	lower := p
	if q.After != "" {
		lower = append(k.key(q.After), 0)
	}
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: lower, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return TermPage{}, err
	}
	defer it.Close()
	page := TermPage{Terms: []Term{}}
	// At most this many terms are read for one page, listed or not, so
	// that a page costs a bounded amount whatever is hidden.
	budget := 10 * q.Limit
	last := "" // the last term read
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return TermPage{}, err
		}
		if len(page.Terms) == q.Limit || budget == 0 {
			page.Next = last // there is more after it
			break
		}
		budget--
		var t Term
		if err := kv.Unmarshal(it.Value(), &t); err != nil {
			return TermPage{}, errs.E(errs.Corrupt, "decode %s %q: %w", k.what, it.Key(), err)
		}
		last = t.Name
		all, seen, err := s.countVisible(k, t.Name, q.MaySee)
		if err != nil {
			return TermPage{}, err
		}
		if all > 0 && seen == 0 {
			continue
		}
		t.Articles = seen
		page.Terms = append(page.Terms, t)
	}
	return page, it.Error()
}

// countVisible counts the published articles that use term name: all of
// them, and those a caller may see (public ones, and those maySee allows).
func (s *Store) countVisible(k termKind, name string, maySee func(string) bool) (all, seen int, err error) {
	p := k.list(name)
	it, err := s.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		all++
		if maySee == nil {
			seen++
			continue
		}
		key := it.Key()[len(p):]
		i := bytes.IndexByte(key[min(8, len(key)):], 0)
		if i < 0 {
			continue
		}
		doc := string(key[min(8, len(key))+i+1:])
		vis, _, err := s.loadVis(doc)
		if err != nil {
			return 0, 0, err
		}
		if vis.Visibility == Public || maySee(doc) {
			seen++
		}
	}
	return all, seen, it.Error()
}
