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

// PublicSearchResponse is GET /v1/public/search's answer: the published
// public articles that match q, best first.
type PublicSearchResponse struct {
	Query string             `json:"query"`
	Hits  []search.PublicHit `json:"hits"`
}

// searchIndex is the daemon's document search index: Config.Search, or
// else one the server opens in memory over Content at the first query.
// Either is fed by the repository's outbox (search.Index), so a query
// reads no document list.
type searchIndex struct {
	mu     sync.Mutex
	idx    *search.Index
	opened bool // idx was opened here, and is closed at Shutdown
}

// index returns the open search index, opening one in memory the first
// time when the configuration gave none.
func (s *Server) searchIndex(ctx context.Context) (*search.Index, error) {
	x := &s.search
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx != nil {
		return x.idx, nil
	}
	if s.cfg.Search != nil {
		x.idx = s.cfg.Search
		return x.idx, nil
	}
	idx, err := search.Open(ctx, s.content, search.Options{
		Public: search.Published(s.pub, s.content), Manual: true, Logger: s.log})
	if err != nil {
		return nil, err
	}
	x.idx, x.opened = idx, true
	return idx, nil
}

// closeSearch closes the index the server opened itself.
func (s *Server) closeSearch(ctx context.Context) error {
	x := &s.search
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.opened {
		return nil
	}
	err := x.idx.Close(ctx)
	x.idx, x.opened = nil, false
	return err
}

func (s *Server) searchDocs(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	q := r.URL.Query().Get("q")
	limit, err := uintParam(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hits, err := s.queryDocs(r.Context(), p, q, int(limit))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, SearchResponse{Query: q, Hits: hits})
}

func (s *Server) queryDocs(ctx context.Context, p auth.Principal, q string, limit int) ([]search.Hit, error) {
	idx, err := s.searchIndex(ctx)
	if err != nil {
		return nil, err
	}
	owner := p.UserID
	if owner == "" {
		// Only a user owns documents; a caller without one owns none. The
		// query is still checked, so bad input fails the same way.
		owner = "\x00none"
	}
	hits, err := idx.Search(ctx, owner, q, limit)
	if hits == nil && err == nil {
		hits = []search.Hit{}
	}
	return hits, err
}

// publicSearch answers a visitor's query over the published public
// articles. The public index holds nothing else, so the answer (hits,
// order, snippets, errors) is the same whatever hidden articles exist.
func (s *Server) publicSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	limit, err := uintParam(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	idx, err := s.searchIndex(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hits, err := idx.SearchPublic(r.Context(), q, int(limit))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if hits == nil {
		hits = []search.PublicHit{}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, PublicSearchResponse{Query: q, Hits: hits})
}

// rebuildSearch rebuilds the daemon's search index from the repository
// (POST /v1/admin/index/rebuild, `folio index rebuild`).
func (s *Server) rebuildSearch(ctx context.Context) error {
	idx, err := s.searchIndex(ctx)
	if err != nil {
		return err
	}
	return idx.Rebuild(ctx)
}
