package server

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo/publish"
)

// The request and response bodies of publishing (docs/api.md).

// PublishRequest is the body of POST /v1/docs/{id}/publish (may be empty).
type PublishRequest struct {
	// Visibility changes the document's visibility ("" keeps it).
	Visibility string `json:"visibility,omitempty"`
	// Password sets the password of visibility password.
	Password string `json:"password,omitempty"`
	// Message is the message of the publish checkpoint, when one is sealed.
	Message string `json:"message,omitempty"`
}

// VisibilityRequest is the body of PUT /v1/docs/{id}/visibility.
type VisibilityRequest struct {
	Visibility string `json:"visibility"`
	Password   string `json:"password,omitempty"`
}

// PublicationResponse answers GET /v1/docs/{id}/publication.
type PublicationResponse struct {
	Visibility  publish.Visibility   `json:"visibility"`
	Publication *publish.Publication `json:"publication,omitempty"` // nil: not published
}

// TermRequest is the body of POST /v1/categories and POST /v1/tags.
type TermRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Publishing returns the server's publishing store.
func (s *Server) Publishing() *publish.Store { return s.pub }

// publishingRoutes registers publishing, the public read API, the
// attributes assistant and the reading assistant.
func (s *Server) publishingRoutes(mux *routeMux) {
	mux.HandleFunc("POST /v1/docs/{id}/publish", s.authed(anyUser, s.doc(s.publishDoc)))
	mux.HandleFunc("POST /v1/docs/{id}/unpublish", s.authed(anyUser, s.doc(s.unpublishDoc)))
	mux.HandleFunc("GET /v1/docs/{id}/publication", s.authed(anyUser, s.doc(s.publication)))
	mux.HandleFunc("PUT /v1/docs/{id}/visibility", s.authed(anyUser, s.doc(s.setVisibility)))
	mux.HandleFunc("POST /v1/docs/{id}/attrs/suggest", s.authed(anyUser, s.doc(s.suggestAttrs)))

	mux.HandleFunc("GET /v1/categories", s.authed(anyUser, s.pageTerms(s.pub.CategoriesPage)))
	mux.HandleFunc("POST /v1/categories", s.authed(adminOnly, s.addTerm(s.pub.AddCategory)))
	mux.HandleFunc("PUT /v1/categories/{name}", s.authed(adminOnly, s.describeTerm(s.pub.DescribeCategory)))
	mux.HandleFunc("DELETE /v1/categories/{name}", s.authed(adminOnly, s.deleteTerm(s.pub.DeleteCategory)))
	mux.HandleFunc("GET /v1/tags", s.authed(anyUser, s.pageTerms(s.pub.TagsPage)))
	mux.HandleFunc("POST /v1/tags", s.authed(adminOnly, s.addTerm(s.pub.AddTag)))
	mux.HandleFunc("PUT /v1/tags/{name}", s.authed(adminOnly, s.describeTerm(s.pub.DescribeTag)))
	mux.HandleFunc("DELETE /v1/tags/{name}", s.authed(adminOnly, s.deleteTerm(s.pub.DeleteTag)))

	s.publicRoutes(mux)
	s.assetRoutes(mux)
	s.siteRoutes(mux)
}

// maySee is the slug conflict's test: may p see document doc?
func (s *Server) maySee(r *http.Request, p auth.Principal) func(string) bool {
	return func(doc string) bool { return s.CanAccess(r.Context(), p, doc) }
}

func (s *Server) publishDoc(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	var req PublishRequest
	if r.ContentLength != 0 {
		if err := decode(r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	res, err := s.pub.Publish(r.Context(), publish.Params{Doc: doc, Actor: p.User, Message: req.Message,
		Visibility: req.Visibility, Password: req.Password, MaySee: s.maySee(r, p)})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if res.Sealed != nil {
		s.m.checkpoints.WithLabelValues("publish").Inc()
	}
	s.rendered.forgetDoc(doc)
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) unpublishDoc(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	pub, err := s.pub.Unpublish(r.Context(), doc, p.User)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.rendered.forgetDoc(doc)
	writeJSON(w, http.StatusOK, pub)
}

func (s *Server) publication(w http.ResponseWriter, r *http.Request, _ auth.Principal, doc string) {
	vis, pub, err := s.pub.Status(r.Context(), doc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, PublicationResponse{Visibility: vis, Publication: pub})
}

func (s *Server) setVisibility(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	var req VisibilityRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.pub.SetVisibility(r.Context(), doc, p.User, req.Visibility, req.Password)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.rendered.forgetDoc(doc)
	writeJSON(w, http.StatusOK, v)
}

// pageTerms answers GET /v1/categories and /v1/tags: a page of terms
// (?limit=N&after=NAME) as a JSON array, counting only the articles the
// caller may see; a Link header (rel="next") names the next page.
func (s *Server) pageTerms(page func(ctx context.Context, q publish.TermQuery) (publish.TermPage, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		q := publish.TermQuery{After: r.URL.Query().Get("after"), MaySee: s.maySee(r, p)}
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				s.fail(w, r, errs.E(errs.Invalid, "limit %q: want a number from 1 to %d", v, publish.MaxTermPage))
				return
			}
			q.Limit = n
		}
		pg, err := page(r.Context(), q)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if pg.Next != "" {
			next := url.Values{"after": {pg.Next}}
			if q.Limit > 0 {
				next.Set("limit", strconv.Itoa(q.Limit))
			}
			w.Header().Set("Link", "<"+r.URL.Path+"?"+next.Encode()+`>; rel="next"`)
		}
		writeJSON(w, http.StatusOK, pg.Terms)
	}
}

func (s *Server) addTerm(add func(ctx context.Context, name, desc string) (publish.Term, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req TermRequest
		if err := decode(r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
		t, err := add(r.Context(), req.Name, req.Description)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusCreated, t)
	}
}

// DescribeRequest is the body of PUT /v1/categories/{name} and PUT
// /v1/tags/{name}.
type DescribeRequest struct {
	Description string `json:"description"`
}

func (s *Server) describeTerm(set func(ctx context.Context, name, desc string) (publish.Term, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req DescribeRequest
		if err := decode(r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
		t, err := set(r.Context(), r.PathValue("name"), req.Description)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, t)
	}
}

func (s *Server) deleteTerm(del func(ctx context.Context, name string) (publish.Term, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, err := del(r.Context(), r.PathValue("name"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, t)
	}
}

// errDisabled is the answer of an assistant this daemon does not run.
func errDisabled(code, what string) error {
	return errs.C(errs.Disabled, code, "the %s is not available on this daemon", what)
}
