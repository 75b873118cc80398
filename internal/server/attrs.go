package server

import (
	"context"
	"github.com/foliodev/folio/syncproto"
	"net/http"

	"github.com/foliodev/folio/assistant/attrs"
	"github.com/foliodev/folio/internal/auth"
)

// suggestAttrs answers POST /v1/docs/{id}/attrs/suggest: the attributes
// assistant's suggestion for the document's draft. Nothing is saved; the
// author adopts a suggestion by saving the attributes (POST .../draft).
func (s *Server) suggestAttrs(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	sug, err := s.SuggestAttrs(r, p, doc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sug)
}

// SuggestAttrs runs the attributes assistant on document doc's draft for
// p (who may access doc); the WebSocket transport calls it too.
func (s *Server) SuggestAttrs(r *http.Request, p auth.Principal, doc string) (attrs.Suggestion, error) {
	return SuggestAttrs(r.Context(), s.cfg.Attrs, s.content, s.pub, p.User, doc)
}

// syncAttrs adapts the attributes assistant to the sync server.
type syncAttrs struct{ s *Server }

func (a syncAttrs) SuggestAttrs(ctx context.Context, p syncproto.Principal, doc string) (syncproto.AttrsSuggestion, error) {
	sug, err := SuggestAttrs(ctx, a.s.cfg.Attrs, a.s.content, a.s.pub, p.User, doc)
	if err != nil {
		return syncproto.AttrsSuggestion{}, err
	}
	return syncproto.AttrsSuggestion{Doc: doc, Title: sug.Title, Summary: sug.Summary, Slug: sug.Slug, Category: sug.Category,
		Tags: sug.Tags, Provider: sug.Provider, Model: sug.Model}, nil
}
