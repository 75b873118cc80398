package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/content"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/learning"
	"github.com/foliodev/folio/persona/memory"
	"github.com/foliodev/folio/persona/style"
)

// The persona endpoints (docs/api.md, "Personas"). A persona is its
// user's: another user's persona is answered exactly like a missing one
// (the service keys personas by the caller's user id). Admins have no
// reach into other users' personas either: a persona is an author's
// voice, not a document.

// PersonaRequest is the body of POST /v1/personas.
type PersonaRequest struct {
	Name    string   `json:"name"`
	Sources []string `json:"sources"`
}

// PersonaActivateRequest is the body of POST /v1/personas/{id}/activate.
type PersonaActivateRequest struct {
	Version int `json:"version"`
}

// PersonaSourcesRequest is the body of PUT /v1/personas/{id}/sources.
type PersonaSourcesRequest struct {
	Sources []string `json:"sources"`
}

// PersonaSource is one chosen source as it is now and as the active
// version pinned it.
type PersonaSource struct {
	Doc string `json:"doc"`
	// Published, Label and Visibility are the document's publication
	// now; Error is the code that keeps it from being read (not_found).
	Published  bool   `json:"published"`
	Label      string `json:"label,omitempty"`
	Visibility string `json:"visibility,omitempty"`
	Error      string `json:"error,omitempty"`
	// Pinned is the label the active version pinned, "" when it pinned
	// none of this document; Memory whether that pin fed memory.
	Pinned string `json:"pinned,omitempty"`
	Memory bool   `json:"memory,omitempty"`
	// Refused is what a generation started now would answer for this
	// source (source_unpublished, private_source_blocked), with the
	// deployment switch that would allow it when one would; NoMemory says
	// why a generation would leave it out of memory ([privacy]
	// private_memory off for a private or password source).
	Refused  *SourceProblem `json:"refused,omitempty"`
	NoMemory *SourceProblem `json:"noMemory,omitempty"`
}

// SourceProblem is why a persona source would be refused or left out of
// memory, and the switch (a docs/config.md key) that would change it.
type SourceProblem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Switch  string `json:"switch,omitempty"`
}

// PersonaLearning answers GET /v1/personas/{id}/learning: the version's
// learning snapshot (its rules with their counts and confidence), absent
// when the version was generated with learning off.
type PersonaLearning struct {
	Version  persona.Version    `json:"version"`
	Snapshot *learning.Snapshot `json:"snapshot,omitempty"`
}

// PersonaStyle answers GET /v1/personas/{id}/style.
type PersonaStyle struct {
	Version persona.Version `json:"version"`
	Profile style.Profile   `json:"profile"`
}

// PersonaMemory answers GET /v1/personas/{id}/memory: the items of the
// version's memory snapshot, or with a query those retrieval returns
// for it (in rank order, with their scores).
type PersonaMemory struct {
	Version  string        `json:"version"`
	Snapshot string        `json:"snapshot,omitempty"`
	Query    string        `json:"query,omitempty"`
	Total    int           `json:"total"`
	Matched  uint64        `json:"matched,omitempty"`
	Items    []memory.Item `json:"items"`
	Hits     []index.Hit   `json:"hits,omitempty"`
}

// Bounds of the persona endpoints.
const (
	defaultMemoryList = 200
	maxMemoryList     = 1000
	maxMemoryQuery    = 2000
	// maxJobWait bounds one GET of a generation job with ?wait.
	maxJobWait = 60 * time.Second
)

func (s *Server) personaRoutes(mux *routeMux) {
	mux.HandleFunc("GET /v1/personas", s.authed(anyUser, s.personaCall(s.listPersonas)))
	mux.HandleFunc("POST /v1/personas", s.authed(anyUser, s.personaCall(s.createPersona)))
	mux.HandleFunc("GET /v1/personas/{id}", s.authed(anyUser, s.personaCall(s.getPersona)))
	mux.HandleFunc("GET /v1/personas/{id}/sources", s.authed(anyUser, s.personaCall(s.personaSources)))
	mux.HandleFunc("PUT /v1/personas/{id}/sources", s.authed(anyUser, s.personaCall(s.setPersonaSources)))
	mux.HandleFunc("GET /v1/personas/{id}/versions", s.authed(anyUser, s.personaCall(s.personaVersions)))
	mux.HandleFunc("POST /v1/personas/{id}/activate", s.authed(anyUser, s.personaCall(s.activatePersona)))
	mux.HandleFunc("GET /v1/personas/{id}/activations", s.authed(anyUser, s.personaCall(s.personaActivations)))
	mux.HandleFunc("POST /v1/personas/{id}/generate", s.authed(anyUser, s.personaCall(s.generatePersona)))
	mux.HandleFunc("GET /v1/personas/{id}/jobs/{job}", s.authed(anyUser, s.personaCall(s.personaJob)))
	mux.HandleFunc("GET /v1/personas/{id}/style", s.authed(anyUser, s.personaCall(s.personaStyle)))
	mux.HandleFunc("GET /v1/personas/{id}/learning", s.authed(anyUser, s.personaCall(s.personaLearning)))
	mux.HandleFunc("GET /v1/personas/{id}/memory", s.authed(anyUser, s.personaCall(s.personaMemory)))
	mux.HandleFunc("GET /v1/admin/index", s.authed(adminOnly, s.indexStatus))
	mux.HandleFunc("POST /v1/admin/index/rebuild", s.authed(adminOnly, s.indexRebuild))
}

// errNoPersonas answers the persona endpoints of a daemon built without
// them.
var errNoPersonas = errs.C(errs.Disabled, persona.CodeDisabled, "this daemon runs no personas")

// personaCall resolves the persona service for a handler.
func (s *Server) personaCall(h func(http.ResponseWriter, *http.Request, *persona.Service, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Personas == nil {
			s.fail(w, r, errNoPersonas)
			return
		}
		h(w, r, s.cfg.Personas, principal(r).UserID)
	}
}

func (s *Server) listPersonas(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	ps, err := svc.List(r.Context(), user)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.personaViews(ps))
}

func (s *Server) createPersona(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	var in PersonaRequest
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := svc.Create(r.Context(), user, in.Name, in.Sources)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, p)
}

func (s *Server) getPersona(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	p, err := svc.Get(r.Context(), user, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) personaSources(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	out, err := PersonaSources(r.Context(), svc, s.cfg.PersonaSources, user, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) setPersonaSources(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	var in PersonaSourcesRequest
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := svc.SetSources(r.Context(), user, r.PathValue("id"), in.Sources)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) personaVersions(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	vs, err := svc.Versions(r.Context(), user, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, vs)
}

func (s *Server) activatePersona(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	var in PersonaActivateRequest
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := svc.Activate(r.Context(), user, r.PathValue("id"), in.Version)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) personaActivations(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	as, err := svc.Activations(r.Context(), user, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, as)
}

func (s *Server) generatePersona(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	j, err := svc.StartGenerate(r.Context(), user, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, j)
}

// personaJob answers a generation job; with ?wait=SECONDS (at most 60)
// it waits that long for the job to end first.
func (s *Server) personaJob(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	ctx := r.Context()
	j, err := svc.Job(ctx, user, r.PathValue("job"))
	if err == nil && j.Persona != r.PathValue("id") {
		err = errs.E(errs.NotFound, "persona: no generation job %q", r.PathValue("job"))
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if v := r.URL.Query().Get("wait"); v != "" && !j.State.Terminal() {
		sec, perr := strconv.Atoi(v)
		if perr != nil || sec < 0 {
			s.fail(w, r, errs.E(errs.Invalid, "wait=%q: want a number of seconds", v))
			return
		}
		d := min(time.Duration(sec)*time.Second, maxJobWait)
		wctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		// On timeout WaitJob returns the job as last read: it is answered
		// as it is, still running.
		waited, err := svc.WaitJob(wctx, user, j.Task)
		if err != nil && wctx.Err() == nil {
			s.fail(w, r, err)
			return
		}
		if waited.Task != "" {
			j = waited
		}
	}
	writeJSON(w, http.StatusOK, j)
}

func versionParam(r *http.Request) (int, error) {
	v := r.URL.Query().Get("version")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errs.E(errs.Invalid, "version=%q: want a version number", v)
	}
	return n, nil
}

func (s *Server) personaStyle(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	seq, err := versionParam(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, v, err := svc.Style(r.Context(), user, r.PathValue("id"), seq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, PersonaStyle{Version: v, Profile: p})
}

func (s *Server) personaLearning(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	seq, err := versionParam(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	l, ok, err := svc.Learning(r.Context(), user, r.PathValue("id"), seq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := svc.Version(r.Context(), user, r.PathValue("id"), seq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := PersonaLearning{Version: v}
	if ok {
		out.Snapshot = &l
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) personaMemory(w http.ResponseWriter, r *http.Request, svc *persona.Service, user string) {
	seq, err := versionParam(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil {
			s.fail(w, r, errs.E(errs.Invalid, "limit=%q: want a number", v))
			return
		}
	}
	out, err := PersonaMemoryOf(r.Context(), svc, user, r.PathValue("id"), seq, r.URL.Query().Get("query"), limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) indexStatus(w http.ResponseWriter, r *http.Request) {
	if s.cfg.MemoryIndex == nil {
		s.fail(w, r, errNoIndex)
		return
	}
	st, err := s.cfg.MemoryIndex.Status(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) indexRebuild(w http.ResponseWriter, r *http.Request) {
	// The document search index is rebuilt too (search.go).
	if err := s.rebuildSearch(r.Context()); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.cfg.MemoryIndex == nil {
		s.fail(w, r, errNoIndex)
		return
	}
	if err := s.cfg.MemoryIndex.Rebuild(r.Context(), "requested"); err != nil {
		s.fail(w, r, err)
		return
	}
	st, err := s.cfg.MemoryIndex.Status(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

var errNoIndex = errs.C(errs.Disabled, persona.CodeDisabled, "this daemon has no memory index open ([persona] enabled and memory are off)")

// PersonaSources describes the chosen sources of user's persona id now
// and as its active version pinned them; the daemon and direct mode
// share it.
func PersonaSources(ctx context.Context, svc *persona.Service, src *content.Sources, user, id string) ([]PersonaSource, error) {
	p, err := svc.Get(ctx, user, id)
	if err != nil {
		return nil, err
	}
	pinned := map[string]persona.SourcePin{}
	if p.Active > 0 {
		v, err := svc.Version(ctx, user, id, 0)
		if err != nil {
			return nil, err
		}
		for _, sp := range v.Sources {
			pinned[sp.Pin.Doc] = sp
		}
	}
	out := make([]PersonaSource, 0, len(p.Sources))
	for _, doc := range p.Sources {
		ps := PersonaSource{Doc: doc}
		if sp, ok := pinned[doc]; ok {
			ps.Pinned, ps.Memory = sp.Pin.Label, sp.Memory
		}
		if src != nil {
			st, err := src.Current(ctx, user, doc)
			switch {
			case errs.KindOf(err) == errs.NotFound:
				ps.Error = "not_found"
			case err != nil:
				return nil, err
			default:
				ps.Published, ps.Visibility = st.Published, st.Visibility
				if st.Published {
					ps.Label = st.Pin.Label
				}
				ps.Refused, ps.NoMemory = sourceProblems(svc, doc, st.Published, st.Visibility)
			}
		}
		out = append(out, ps)
	}
	return out, nil
}

// sourceProblems says what a generation started now would do with a
// source: the same checks, in the same words, as persona.Generate.
func sourceProblems(svc *persona.Service, doc string, published bool, visibility string) (refused, noMemory *SourceProblem) {
	if !published {
		return &SourceProblem{Code: persona.CodeSourceUnpublished,
			Message: "persona: source " + doc + " is not published; publish it or remove it from the persona"}, nil
	}
	if visibility != persona.VisibilityPrivate && visibility != persona.VisibilityPassword {
		return nil, nil
	}
	if !svc.PrivateAllowed() {
		return &SourceProblem{Code: persona.CodePrivateSource, Switch: "[privacy] send_private_to_provider",
			Message: "persona: source " + doc + " is " + visibility + " and the writing provider is external; using it needs [privacy] send_private_to_provider = true"}, nil
	}
	if sw := svc.Switches(); sw.Memory && !sw.PrivateMemory {
		return nil, &SourceProblem{Code: "private_memory_off", Switch: "[privacy] private_memory",
			Message: "memory leaves out " + doc + " (" + visibility + "): [privacy] private_memory is off"}
	}
	return nil, nil
}

// PersonaMemoryOf lists the memory of version seq (0: active) of user's
// persona id: up to limit items in key order, or with query the items
// retrieval gives a run for that text. The daemon and direct mode share
// it.
func PersonaMemoryOf(ctx context.Context, svc *persona.Service, user, id string, seq int, query string, limit int) (PersonaMemory, error) {
	if limit == 0 {
		limit = defaultMemoryList
	}
	if limit < 1 || limit > maxMemoryList {
		return PersonaMemory{}, errs.E(errs.Invalid, "limit %d: want 1..%d", limit, maxMemoryList)
	}
	if n := len([]rune(query)); n > maxMemoryQuery {
		return PersonaMemory{}, errs.E(errs.TooLarge, "query of %d characters, at most %d", n, maxMemoryQuery)
	}
	head, items, err := svc.MemoryItems(ctx, user, id, seq, limit)
	if err != nil {
		return PersonaMemory{}, err
	}
	v, err := svc.Version(ctx, user, id, seq)
	if err != nil {
		return PersonaMemory{}, err
	}
	out := PersonaMemory{Version: v.ID, Snapshot: v.Memory, Total: head.Items, Items: items}
	if query != "" {
		res, err := svc.Retrieve(ctx, persona.RetrieveRequest{User: user, Persona: id, Version: v.Seq, Text: query, MaxItems: min(limit, 100)})
		if err != nil {
			return PersonaMemory{}, err
		}
		out.Query, out.Matched, out.Items, out.Hits = query, res.Matched, res.Items, res.Hits
	}
	if out.Items == nil {
		out.Items = []memory.Item{}
	}
	return out, nil
}
