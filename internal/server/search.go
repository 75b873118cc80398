package server

import (
	"context"
	"net/http"
	"sync"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo/search"
)

// SearchResponse is GET /v1/search's answer: the caller's documents that
// match q, best first.
type SearchResponse struct {
	Query string       `json:"query"`
	Hits  []search.Hit `json:"hits"`
}

// searchIndex is the daemon's document search index, built from the
// content service on the first query and reconciled with it before each
// one (search.Index.Sync), so a change from any transport is found.
type searchIndex struct {
	mu  sync.Mutex
	idx *search.Index
}

func (s *Server) searchDocs(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := r.URL.Query().Get("q")
	limit, err := uintParam(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hits, err := s.search.query(r, s.content, p, q, int(limit))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, SearchResponse{Query: q, Hits: hits})
}

func (x *searchIndex) query(r *http.Request, src search.Source, p auth.Principal, q string, limit int) ([]search.Hit, error) {
	ctx := r.Context()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		idx, err := search.Build(ctx, src)
		if err != nil {
			return nil, err
		}
		x.idx = idx
	} else if err := x.idx.Sync(ctx, src); err != nil {
		return nil, err
	}
	owner := p.UserID
	if owner == "" {
		// Only a user owns documents; a caller without one owns none. The
		// query is still checked, so bad input fails the same way.
		owner = "\x00none"
	}
	hits, err := x.idx.Search(ctx, owner, q, limit)
	if hits == nil && err == nil {
		hits = []search.Hit{}
	}
	return hits, err
}

// rebuild replaces the daemon's search index with one built from src
// (POST /v1/admin/index/rebuild, `folio index rebuild`).
func (x *searchIndex) rebuild(ctx context.Context, src search.Source) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		idx, err := search.Build(ctx, src)
		x.idx = idx
		return err
	}
	return x.idx.Rebuild(ctx, src)
}
