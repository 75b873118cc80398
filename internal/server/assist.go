package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
)

// The writing assistant's endpoints (docs/api.md, "Writing assistant").
// The service (package assistant) enforces every rule of a request itself;
// what it leaves to the transports is who may reach what: an author
// reaches the runs, suggestions and sessions of their own documents only,
// and another user's — or one on a document they no longer own — is
// answered exactly like a missing one. Admins reach every document; a
// read-only (backup) token reads.

// AssistRequest is the body of POST /v1/docs/{id}/assist.
type AssistRequest struct {
	Scope       assistant.Scope `json:"scope"`
	Instruction string          `json:"instruction"`
	// At most one of Persona, WritingPreset and EditingPreset (the service
	// answers personalization_conflict otherwise).
	Persona       string `json:"persona,omitempty"`
	WritingPreset string `json:"writingPreset,omitempty"`
	EditingPreset string `json:"editingPreset,omitempty"`
	// Session continues that session; "" the article's current one.
	Session string `json:"session,omitempty"`
	// IdempotencyKey makes a retried request answer its first run.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// RunEventView is one event of a run's stream: its cursor, type, time
// (Unix ms) and payload.
type RunEventView struct {
	Seq  uint64             `json:"seq"`
	Type string             `json:"type"`
	Time int64              `json:"time"`
	Data assistant.RunEvent `json:"data"`
}

// RunEventsPage answers GET /v1/runs/{run}/events: events after the
// cursor, at most limit, and the run's state when they were read. More
// says that events after the last one were already there.
type RunEventsPage struct {
	Run    string             `json:"run"`
	State  assistant.RunState `json:"state"`
	Events []RunEventView     `json:"events"`
	More   bool               `json:"more"`
}

// SessionRequest is the body of POST /v1/docs/{id}/sessions.
type SessionRequest struct {
	Title string `json:"title,omitempty"`
}

// RejectRequest is the body of POST /v1/suggestions/{id}/reject.
type RejectRequest struct {
	Reason string `json:"reason,omitempty"`
}

// CopyPresetRequest is the body of POST /v1/admin/presets/{id}/copy.
type CopyPresetRequest struct {
	Name string `json:"name,omitempty"`
}

// ReorderRequest is the body of POST /v1/admin/presets/order.
type ReorderRequest struct {
	Type assistant.PresetType `json:"type"`
	IDs  []string             `json:"ids"`
}

// Bounds of the assistant's listings and streams.
const (
	defaultEventPage = 100
	maxEventPage     = 500
	maxReorderIDs    = 500
	// DefaultMaxStream is how long one run event stream (SSE) stays open;
	// a client resumes with Last-Event-ID.
	DefaultMaxStream = 5 * time.Minute
	// streamHeartbeat is how often an idle event stream sends a comment,
	// so that proxies and clients see it alive.
	streamHeartbeat = 15 * time.Second
)

func (s *Server) assistRoutes(mux *routeMux) {
	mux.HandleFunc("POST /v1/docs/{id}/assist", s.authed(proposes, s.doc(s.assist)))
	mux.HandleFunc("GET /v1/docs/{id}/sessions", s.authed(anyUser, s.doc(s.listSessions)))
	mux.HandleFunc("POST /v1/docs/{id}/sessions", s.authed(anyUser, s.doc(s.startSession)))
	mux.HandleFunc("POST /v1/docs/{id}/sessions/{session}/switch", s.authed(anyUser, s.doc(s.switchSession)))
	mux.HandleFunc("GET /v1/docs/{id}/suggestions", s.authed(anyUser, s.doc(s.listSuggestions)))
	mux.HandleFunc("POST /v1/docs/{id}/suggestions", s.authed(proposes, s.doc(s.proposeSuggestion)))
	mux.HandleFunc("GET /v1/docs/{id}/versions/{label}/explain", s.authed(anyUser, s.doc(s.explainVersion)))

	mux.HandleFunc("GET /v1/runs/{run}", s.authed(anyUser, s.run(s.getRun)))
	mux.HandleFunc("POST /v1/runs/{run}/cancel", s.authed(anyUser, s.run(s.cancelRun)))
	mux.HandleFunc("GET /v1/runs/{run}/events", s.authed(anyUser, s.run(s.runEvents)))
	mux.HandleFunc("GET /v1/runs/{run}/stream", s.authed(anyUser, s.run(s.runStream)))

	mux.HandleFunc("GET /v1/sessions/{session}", s.authed(anyUser, s.session(s.getSession)))
	mux.HandleFunc("GET /v1/sessions/{session}/messages", s.authed(anyUser, s.session(s.listMessages)))
	mux.HandleFunc("PUT /v1/sessions/{session}/personalization", s.authed(anyUser, s.session(s.setSessionChoice)))
	mux.HandleFunc("GET /v1/sessions/{session}/messages/{seq}", s.authed(anyUser, s.session(s.messageSource)))

	mux.HandleFunc("GET /v1/suggestions/{sugg}", s.authed(anyUser, s.suggestion(s.getSuggestion)))
	mux.HandleFunc("GET /v1/suggestions/{sugg}/preview", s.authed(anyUser, s.suggestion(s.previewSuggestion)))
	mux.HandleFunc("POST /v1/suggestions/{sugg}/accept", s.authed(anyUser, s.suggestion(s.acceptSuggestion)))
	mux.HandleFunc("POST /v1/suggestions/{sugg}/reject", s.authed(anyUser, s.suggestion(s.rejectSuggestion)))

	mux.HandleFunc("GET /v1/presets", s.authed(anyUser, s.listPresets))
	mux.HandleFunc("POST /v1/admin/presets", s.authed(adminOnly, s.createPreset))
	mux.HandleFunc("POST /v1/admin/presets/order", s.authed(adminOnly, s.reorderPresets))
	mux.HandleFunc("GET /v1/admin/presets/{preset}", s.authed(adminOnly, s.presetDetail))
	mux.HandleFunc("GET /v1/admin/presets/{preset}/versions/{n}", s.authed(adminOnly, s.presetVersion))
	mux.HandleFunc("POST /v1/admin/presets/{preset}/versions", s.authed(adminOnly, s.editPreset))
	mux.HandleFunc("POST /v1/admin/presets/{preset}/copy", s.authed(adminOnly, s.copyPreset))
	mux.HandleFunc("POST /v1/admin/presets/{preset}/archive", s.authed(adminOnly, s.archivePreset))
	mux.HandleFunc("POST /v1/admin/presets/{preset}/restore", s.authed(adminOnly, s.restorePreset))
}

// actorOf is the service's view of the caller. An agent token's caller
// is an agent (its proposals record it and are limited per token).
func actorOf(p auth.Principal) assistant.Actor {
	a := assistant.Actor{UserID: p.UserID, User: p.User, Admin: p.Admin}
	if p.Agent() {
		a.Agent = &assistant.AgentSource{Token: p.TokenID, User: p.User}
	}
	return a
}

// AgentHeader names the client of an agent over HTTP: "name/version"
// (e.g. "my-agent/1.2"), recorded on its suggestions. MCP clients name
// themselves in the handshake instead.
const AgentHeader = "X-Folio-Agent"

// actorFor is actorOf with the client an agent names in AgentHeader.
func actorFor(r *http.Request, p auth.Principal) assistant.Actor {
	a := actorOf(p)
	if a.Agent != nil {
		name, version, _ := strings.Cut(r.Header.Get(AgentHeader), "/")
		a.Agent.Client, a.Agent.ClientVersion = clipText(name, 100), clipText(version, 50)
	}
	return a
}

// clipText keeps at most n bytes of printable ASCII of s.
func clipText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// ProposeRequest is the body of POST /v1/docs/{id}/suggestions: an
// agent's (or an author's) own operations against the version it read,
// stored as a pending suggestion when they pass the checks a model's
// answer passes (assistant.Service.Propose).
type ProposeRequest struct {
	Scope       assistant.Scope `json:"scope"`
	Base        string          `json:"base"`
	Fingerprint string          `json:"fingerprint,omitempty"`
	Ops         json.RawMessage `json:"ops"`
	Summary     string          `json:"summary,omitempty"`
}

func (s *Server) proposeSuggestion(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	var req ProposeRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	sg, err := svc.Propose(r.Context(), actorFor(r, p), assistant.ProposeRequest{Doc: doc, Scope: req.Scope, Base: req.Base,
		Fingerprint: req.Fingerprint, Ops: req.Ops, Summary: req.Summary})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, sg)
}

// errNoAssistant answers every assistant endpoint of a daemon built
// without the service.
var errNoAssistant = errs.C(errs.Disabled, assistant.CodeDisabled, "this daemon runs no writing assistant")

// svc returns the assistant service, or answers that there is none.
func (s *Server) svc(w http.ResponseWriter, r *http.Request) *assistant.Service {
	if s.cfg.Assistant == nil {
		s.fail(w, r, errNoAssistant)
		return nil
	}
	return s.cfg.Assistant
}

// reaches reports whether p may reach document doc (see owns); false for
// a document that does not exist.
func (s *Server) reaches(p auth.Principal, doc string) bool {
	owner, err := s.content.DocOwner(doc)
	return err == nil && owns(p, owner)
}

// missing is the answer for a run, suggestion or session that does not
// exist or that the caller may not reach: the same words either way, and
// the same as the service's for a missing one.
func missing(what, id string) error { return errs.E(errs.NotFound, "%s %q not found", what, id) }

// hidden turns a not-found error of the service about what id into
// missing(what, id), so that "missing" has one form whoever answers it.
func hidden(err error, what, id string) error {
	if errs.KindOf(err) == errs.NotFound {
		return missing(what, id)
	}
	return err
}

// run resolves {run} for the caller: the service answers another user's
// run as missing (admins see all), and a run on a document the caller
// no longer reaches is missing too.
func (s *Server) run(h func(http.ResponseWriter, *http.Request, *assistant.Service, assistant.Actor, assistant.Run)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		svc := s.svc(w, r)
		if svc == nil {
			return
		}
		p, id := principal(r), r.PathValue("run")
		a := actorOf(p)
		run, err := svc.Run(r.Context(), a, id)
		if err == nil && !s.reaches(p, run.Doc) {
			err = missing("run", id)
		}
		if err != nil {
			s.fail(w, r, hidden(err, "run", id))
			return
		}
		h(w, r, svc, a, run)
	}
}

// suggestion resolves {sugg}: a suggestion is its document's, so whoever
// reaches the document reaches it; anyone else is told it is missing.
func (s *Server) suggestion(h func(http.ResponseWriter, *http.Request, *assistant.Service, assistant.Actor, assistant.Suggestion)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		svc := s.svc(w, r)
		if svc == nil {
			return
		}
		p, id := principal(r), r.PathValue("sugg")
		a := actorOf(p)
		sg, err := svc.Suggestion(r.Context(), a, id)
		if err == nil && !s.reaches(p, sg.Doc) {
			err = missing("suggestion", id)
		}
		if err != nil {
			s.fail(w, r, hidden(err, "suggestion", id))
			return
		}
		h(w, r, svc, a, sg)
	}
}

// session resolves {session}: only its creator's, and only while they
// reach its document.
func (s *Server) session(h func(http.ResponseWriter, *http.Request, *assistant.Service, assistant.Actor, assistant.Session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		svc := s.svc(w, r)
		if svc == nil {
			return
		}
		p, id := principal(r), r.PathValue("session")
		a := actorOf(p)
		ss, err := svc.Session(r.Context(), a, id)
		if err == nil && !s.reaches(p, ss.Doc) {
			err = missing("session", id)
		}
		if err != nil {
			s.fail(w, r, hidden(err, "session", id))
			return
		}
		h(w, r, svc, a, ss)
	}
}

func (s *Server) assist(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	var req AssistRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	q, err := svc.Assist(r.Context(), actorFor(r, p), assistant.AssistRequest{Doc: doc, Session: req.Session, Scope: req.Scope,
		Instruction: req.Instruction, Persona: req.Persona, WritingPreset: req.WritingPreset, EditingPreset: req.EditingPreset,
		IdempotencyKey: req.IdempotencyKey})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusAccepted
	if !q.Created {
		status = http.StatusOK // the key's first run, as it stands
	}
	writeJSON(w, status, q)
}

func (s *Server) getRun(w http.ResponseWriter, _ *http.Request, _ *assistant.Service, _ assistant.Actor, run assistant.Run) {
	writeJSON(w, http.StatusOK, run)
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, run assistant.Run) {
	out, err := svc.CancelRun(r.Context(), a, run.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// RunEventViews decodes stored run events into their typed form.
func RunEventViews(evs []stream.Event) ([]RunEventView, error) {
	out := make([]RunEventView, 0, len(evs))
	for _, ev := range evs {
		v := RunEventView{Seq: ev.Seq, Type: ev.Type, Time: ev.Time}
		if len(ev.Data) > 0 {
			if err := kv.Unmarshal(ev.Data, &v.Data); err != nil {
				return nil, errs.E(errs.Corrupt, "event %d of %s: %v", ev.Seq, ev.Stream, err)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// cursorOf reads a run stream's cursor: Last-Event-ID (an EventSource
// resuming) wins over ?after.
func cursorOf(r *http.Request) (uint64, error) {
	if v := strings.TrimSpace(r.Header.Get("Last-Event-ID")); v != "" {
		n, err := strconv.ParseUint(v, 10, 63)
		if err != nil {
			return 0, errs.E(errs.Invalid, "Last-Event-ID %q is not an event id (a non-negative integer)", v)
		}
		return n, nil
	}
	return uintParam(r, "after")
}

// readRunEvents reads up to limit typed events of run id after cursor.
func readRunEvents(ctx context.Context, svc *assistant.Service, id string, after uint64, limit int) ([]RunEventView, error) {
	evs, err := svc.RunEvents(ctx, id, after, limit)
	if errors.Is(err, stream.ErrTrimmed) {
		return nil, errs.E(errs.NotFound, "the events of run %s after %d are no longer kept; read the run itself (folio run show %s)", id, after, id)
	}
	if err != nil {
		return nil, err
	}
	return RunEventViews(evs)
}

// ReadRunEvents reads the page of run's events after the cursor: at most
// limit (0: 100; at most 500), with the run's state as read. The caller
// has checked that the run is the caller's to read (GET
// /v1/runs/{run}/events, and the CLI's direct mode).
func ReadRunEvents(ctx context.Context, svc *assistant.Service, run assistant.Run, after uint64, limit int) (RunEventsPage, error) {
	if limit <= 0 {
		limit = defaultEventPage
	}
	limit = min(limit, maxEventPage)
	// One more than asked tells whether there is more.
	evs, err := readRunEvents(ctx, svc, run.ID, after, limit+1)
	if err != nil {
		return RunEventsPage{}, err
	}
	page := RunEventsPage{Run: run.ID, State: run.State, Events: evs}
	if len(evs) > limit {
		page.Events, page.More = evs[:limit], true
	}
	return page, nil
}

func (s *Server) runEvents(w http.ResponseWriter, r *http.Request, svc *assistant.Service, _ assistant.Actor, run assistant.Run) {
	after, err := cursorOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, err := uintParam(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := ReadRunEvents(r.Context(), svc, run, after, int(min(limit, maxEventPage)))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// FollowRun calls fn with every event of run id after the cursor, in
// order, until the run's final event has been passed (it returns nil),
// fn fails, or ctx ends (it returns ctx's error). Events are read from the
// store a page at a time as st announces them (WaitEvents), so a slow fn
// holds no more than a page. When beat is not nil it is called after
// every 15 s without an event. The caller has checked that a may read
// the run.
func FollowRun(ctx context.Context, svc *assistant.Service, st Streams, a assistant.Actor, id string, after uint64, fn func(RunEventView) error, beat func() error) error {
	ticker := time.NewTicker(streamHeartbeat)
	defer ticker.Stop()
	name := "run:" + id
	for {
		// The state is read before the events: a final state's event was
		// committed with it, so the read after it sees that event.
		wait := st.WaitEvents(name)
		run, err := svc.Run(ctx, a, id)
		if err != nil {
			return err
		}
		evs, err := readRunEvents(ctx, svc, id, after, defaultEventPage)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
			after = ev.Seq
		}
		if len(evs) > 0 {
			continue
		}
		if run.State.Terminal() {
			return nil
		}
		for waiting := true; waiting; {
			select {
			case <-wait:
				waiting = false
			case <-ticker.C:
				if beat != nil {
					if err := beat(); err != nil {
						return err
					}
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// runStream answers GET /v1/runs/{run}/stream: the run's events as
// Server-Sent Events from the cursor (Last-Event-ID or ?after), each with
// its seq as id, its type as event and a RunEventView as data (see
// FollowRun). The stream ends after the run's final event, after
// MaxStream (resume with Last-Event-ID), or when the daemon shuts down;
// while the run is quiet a comment every 15 s keeps it alive.
func (s *Server) runStream(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, run assistant.Run) {
	after, err := cursorOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// A cursor older than what is kept is answered as an error before
	// the stream starts.
	if _, err := readRunEvents(r.Context(), svc, run.ID, after, 1); err != nil {
		s.fail(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.MaxStream)
	defer cancel()
	go func() {
		select {
		case <-s.stop: // the daemon is shutting down: clients resume elsewhere
			cancel()
		case <-ctx.Done():
		}
	}()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}
	_ = FollowRun(ctx, svc, s.content, a, run.ID, after, func(ev RunEventView) error {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, data); err != nil {
			return err
		}
		return rc.Flush()
	}, func() error {
		if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
			return err
		}
		return rc.Flush()
	})
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	ss, err := svc.Sessions(r.Context(), actorOf(p), doc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ss == nil {
		ss = []assistant.Session{}
	}
	writeJSON(w, http.StatusOK, ss)
}

func (s *Server) startSession(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	var req SessionRequest
	if r.ContentLength != 0 { // an empty body starts an untitled session
		if err := decode(r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	ss, err := svc.StartSession(r.Context(), actorOf(p), doc, req.Title)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, ss)
}

func (s *Server) switchSession(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	id := r.PathValue("session")
	ss, err := svc.SwitchSession(r.Context(), actorOf(p), doc, id)
	if err != nil {
		s.fail(w, r, hidden(err, "session", id))
		return
	}
	writeJSON(w, http.StatusOK, ss)
}

func (s *Server) getSession(w http.ResponseWriter, _ *http.Request, _ *assistant.Service, _ assistant.Actor, ss assistant.Session) {
	writeJSON(w, http.StatusOK, ss)
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, ss assistant.Session) {
	after, err := uintParam(r, "after")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, err := uintParam(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ms, err := svc.Messages(r.Context(), a, ss.ID, after, int(min(limit, 1000)))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ms == nil {
		ms = []assistant.MessagePreview{}
	}
	writeJSON(w, http.StatusOK, ms)
}

func (s *Server) messageSource(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, ss assistant.Session) {
	v := r.PathValue("seq")
	seq, err := strconv.ParseUint(v, 10, 63)
	if err != nil || seq == 0 {
		s.fail(w, r, errs.E(errs.Invalid, "message %q: a message is numbered from 1", v))
		return
	}
	src, err := svc.MessageSource(r.Context(), a, ss.ID, seq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, src)
}

// ParseSuggestionStatus checks a status filter: "" or one of the statuses.
func ParseSuggestionStatus(v string) (assistant.SuggestionStatus, error) {
	switch st := assistant.SuggestionStatus(v); st {
	case "", assistant.StatusPending, assistant.StatusAccepted, assistant.StatusRejected, assistant.StatusConflicted:
		return st, nil
	}
	return "", errs.E(errs.Invalid, "status %q is not one of pending, accepted, rejected, conflicted", v)
}

func (s *Server) listSuggestions(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	st, err := ParseSuggestionStatus(r.URL.Query().Get("status"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit, err := uintParam(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sgs, err := svc.Suggestions(r.Context(), actorOf(p), doc, st, int(min(limit, 1000)))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if sgs == nil {
		sgs = []assistant.Suggestion{}
	}
	writeJSON(w, http.StatusOK, sgs)
}

func (s *Server) getSuggestion(w http.ResponseWriter, _ *http.Request, _ *assistant.Service, _ assistant.Actor, sg assistant.Suggestion) {
	writeJSON(w, http.StatusOK, sg)
}

func (s *Server) previewSuggestion(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, sg assistant.Suggestion) {
	pv, err := svc.Preview(r.Context(), a, sg.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pv)
}

func (s *Server) acceptSuggestion(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, sg assistant.Suggestion) {
	var o assistant.AcceptOptions
	if r.ContentLength != 0 { // an empty body confirms nothing
		if err := decode(r, &o); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	acc, err := svc.AcceptLoaded(r.Context(), a, sg, o) // sg was read for the access check
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !acc.Repeat { // a new version
		s.m.checkpoints.WithLabelValues("accept_suggestion").Inc()
	}
	writeJSON(w, http.StatusOK, acc)
}

func (s *Server) rejectSuggestion(w http.ResponseWriter, r *http.Request, svc *assistant.Service, a assistant.Actor, sg assistant.Suggestion) {
	var req RejectRequest
	if r.ContentLength != 0 {
		if err := decode(r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	out, err := svc.Reject(r.Context(), a, sg.ID, req.Reason)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) explainVersion(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	e, err := svc.Explain(r.Context(), actorOf(p), doc, r.PathValue("label"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// ParsePresetType checks a preset type filter: "" or writing or editing.
func ParsePresetType(v string) (assistant.PresetType, error) {
	switch t := assistant.PresetType(v); t {
	case "", assistant.WritingPreset, assistant.EditingPreset:
		return t, nil
	}
	return "", errs.E(errs.Invalid, "preset type %q is not writing or editing", v)
}

// boolParam reads a boolean query parameter (false when absent).
func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errs.E(errs.Invalid, "query parameter %s=%q is not true or false", name, v)
	}
	return b, nil
}

// listPresets is the selector: id, name, description, type, order and
// version metadata, never a prompt.
func (s *Server) listPresets(w http.ResponseWriter, r *http.Request) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	t, err := ParsePresetType(r.URL.Query().Get("type"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	archived, err := boolParam(r, "archived")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ps, err := svc.Presets(r.Context(), t, archived)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out, err := presetViews(svc, ps)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createPreset(w http.ResponseWriter, r *http.Request) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	var in assistant.PresetInput
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := svc.CreatePreset(r.Context(), actorOf(principal(r)), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, p)
}

func (s *Server) presetDetail(w http.ResponseWriter, r *http.Request) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	d, err := svc.PresetAdmin(r.Context(), actorOf(principal(r)), r.PathValue("preset"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) presetVersion(w http.ResponseWriter, r *http.Request) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	v := r.PathValue("n")
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		s.fail(w, r, errs.E(errs.Invalid, "preset version %q: versions are numbered from 1", v))
		return
	}
	pv, err := svc.PresetVersionAdmin(r.Context(), actorOf(principal(r)), r.PathValue("preset"), n)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pv)
}

func (s *Server) editPreset(w http.ResponseWriter, r *http.Request) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	var in assistant.PresetInput
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := svc.EditPreset(r.Context(), actorOf(principal(r)), r.PathValue("preset"), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) copyPreset(w http.ResponseWriter, r *http.Request) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	var req CopyPresetRequest
	if r.ContentLength != 0 {
		if err := decode(r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	p, err := svc.CopyPreset(r.Context(), actorOf(principal(r)), r.PathValue("preset"), req.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, p)
}

func (s *Server) reorderPresets(w http.ResponseWriter, r *http.Request) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	var req ReorderRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(req.IDs) > maxReorderIDs {
		s.fail(w, r, errs.E(errs.TooLarge, "a reorder names at most %d presets", maxReorderIDs))
		return
	}
	ps, err := svc.ReorderPresets(r.Context(), actorOf(principal(r)), req.Type, req.IDs)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ps)
}

func (s *Server) archivePreset(w http.ResponseWriter, r *http.Request) {
	s.setPresetArchived(w, r, true)
}

func (s *Server) restorePreset(w http.ResponseWriter, r *http.Request) {
	s.setPresetArchived(w, r, false)
}

func (s *Server) setPresetArchived(w http.ResponseWriter, r *http.Request, archived bool) {
	svc := s.svc(w, r)
	if svc == nil {
		return
	}
	op := svc.RestorePreset
	if archived {
		op = svc.ArchivePreset
	}
	p, err := op(r.Context(), actorOf(principal(r)), r.PathValue("preset"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}
