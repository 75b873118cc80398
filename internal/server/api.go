package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The request and response bodies of the API; docs/api.md shows each.

// CreateRequest is the body of POST /v1/docs.
type CreateRequest struct {
	// ID is chosen by the server (random, unguessable) unless an admin
	// sets it: an author's answer must not depend on other users' ids.
	ID      string             `json:"id,omitempty"`
	Owner   string             `json:"owner,omitempty"` // a user name; admins only; default: the caller
	Attrs   flowdoc.Attributes `json:"attrs"`
	Body    json.RawMessage    `json:"body,omitempty"` // a FlowDocument; default: empty
	Message string             `json:"message,omitempty"`
}

// SaveRequest is the body of POST /v1/docs/{id}/draft: a full Body or
// block-level Changes against BaseSeq; Seal seals the saved draft as a
// checkpoint with that reason in the same durable batch.
type SaveRequest struct {
	BaseSeq uint64              `json:"baseSeq"`
	Body    json.RawMessage     `json:"body,omitempty"`
	Align   bool                `json:"align,omitempty"` // give the body's blocks without an id the draft's ids (repo.SaveParams.Align)
	Changes []repo.DraftChange  `json:"changes,omitempty"`
	Attrs   *flowdoc.Attributes `json:"attrs,omitempty"`
	Seal    string              `json:"seal,omitempty"`
	Message string              `json:"message,omitempty"` // the sealed version's message
	Session string              `json:"session,omitempty"`
	Merge   bool                `json:"merge,omitempty"` // merge inside text blocks changed since baseSeq (repo.SaveParams.Merge)
}

// CheckpointRequest is the body of POST /v1/docs/{id}/checkpoint.
type CheckpointRequest struct {
	Reason  string `json:"reason,omitempty"` // default "manual"
	Message string `json:"message,omitempty"`
}

// CheckpointResponse answers a checkpoint: the new version, or the head
// when the draft had nothing unsealed (Created false).
type CheckpointResponse struct {
	Version repo.VersionInfo `json:"version"`
	Created bool             `json:"created"`
}

// RestoreRequest is the body of POST /v1/docs/{id}/restore.
type RestoreRequest struct {
	Label string `json:"label"`
	Block string `json:"block,omitempty"` // restore only this block
}

// ShowResponse is a materialized version.
type ShowResponse struct {
	Version repo.VersionInfo   `json:"version"`
	Attrs   flowdoc.Attributes `json:"attrs"`
	Body    json.RawMessage    `json:"body"` // canonical FlowDocument JSON
}

// DiffResponse compares two versions.
type DiffResponse struct {
	From    string                `json:"from"`
	To      string                `json:"to"`
	Changes []flowdoc.BlockChange `json:"changes"`
}

// UserRequest is the body of POST /v1/users.
type UserRequest struct {
	Name  string `json:"name"`
	Admin bool   `json:"admin,omitempty"`
}

// TokenRequest is the body of POST /v1/tokens.
type TokenRequest struct {
	User string `json:"user"`
	Kind string `json:"kind,omitempty"` // "full" (default), "backup" or "agent"
}

// IssuedResponse carries a token that is shown only this once.
type IssuedResponse struct {
	User   string     `json:"user"`
	UserID string     `json:"userId"`
	Role   string     `json:"role"`
	Token  string     `json:"token"`
	Info   auth.Token `json:"tokenInfo"`
}

// ChownRequest is the body of PUT /v1/docs/{id}/owner.
type ChownRequest struct {
	User string `json:"user"` // the new owner's name
}

// ChownResponse answers a reassignment.
type ChownResponse struct {
	Doc       string `json:"doc"`
	Owner     string `json:"owner"` // the new owner's user id
	OwnerName string `json:"ownerName"`
	Previous  string `json:"previous,omitempty"` // the previous owner's user id ("" for nobody)
	Changed   bool   `json:"changed"`            // false when it was the owner already
}

// Whoami describes the caller.
type Whoami struct {
	User    string `json:"user"`
	UserID  string `json:"userId"`
	Admin   bool   `json:"admin"`
	TokenID string `json:"tokenId"`
	Kind    string `json:"kind"`
}

// routeMux is the server's ServeMux, recording each pattern it is given
// so that the route list can be read back (Server.Routes): tests walk it
// to hold every route to the token kinds' rules.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// Routes returns every pattern the server's mux serves ("METHOD /path",
// or "/path" for any method), in the order they were registered.
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }

func (s *Server) routes() http.Handler {
	mux := &routeMux{ServeMux: http.NewServeMux()}
	defer func() { s.patterns = mux.patterns }()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg}))

	mux.HandleFunc("GET /v1/whoami", s.authed(anyUser, s.whoami))
	mux.HandleFunc("GET /v1/docs", s.authed(anyUser, s.listDocs))
	mux.HandleFunc("GET /v1/search", s.authed(anyUser, s.searchDocs))
	mux.HandleFunc("POST /v1/docs", s.authed(anyUser, s.createDoc))
	mux.HandleFunc("POST /v1/docs/import", s.authed(anyUser, s.importDoc))
	mux.HandleFunc("GET /v1/docs/{id}", s.authed(anyUser, s.doc(s.getDoc)))
	mux.HandleFunc("GET /v1/docs/{id}/draft", s.authed(anyUser, s.doc(s.getDraft)))
	mux.HandleFunc("POST /v1/docs/{id}/draft", s.authed(anyUser, s.doc(s.saveDraft)))
	mux.HandleFunc("POST /v1/docs/{id}/checkpoint", s.authed(anyUser, s.doc(s.checkpoint)))
	mux.HandleFunc("GET /v1/docs/{id}/log", s.authed(anyUser, s.doc(s.log_)))
	mux.HandleFunc("GET /v1/docs/{id}/versions/{label}", s.authed(anyUser, s.doc(s.show)))
	mux.HandleFunc("GET /v1/docs/{id}/diff", s.authed(anyUser, s.doc(s.diff)))
	mux.HandleFunc("GET /v1/docs/{id}/blocks/{block}/history", s.authed(anyUser, s.doc(s.history)))
	mux.HandleFunc("POST /v1/docs/{id}/restore", s.authed(anyUser, s.doc(s.restore)))
	mux.HandleFunc("PUT /v1/docs/{id}/owner", s.authed(adminOnly, s.doc(s.chown)))
	mux.HandleFunc("GET /v1/fsck", s.authed(adminOnly, s.fsck))
	mux.HandleFunc("POST /v1/admin/gc", s.authed(adminOnly, s.gc))
	mux.HandleFunc("GET "+UsagePath, s.authed(adminOnly, s.usage))
	mux.HandleFunc("POST "+AICheckPath, s.authed(adminOnly, s.aiCheck))
	mux.HandleFunc("POST "+BackupPackPath, s.authed(readsOnly, s.backupPack))
	mux.HandleFunc("POST "+ExportPackPath, s.authed(readsOnly, s.exportPack))
	mux.HandleFunc("GET "+ExportHeadsPath, s.authed(anyUser, s.exportHeads))
	mux.HandleFunc("GET "+ExportGitPath, s.authed(anyUser, s.exportGit))

	mux.HandleFunc("GET /v1/users", s.authed(adminOnly, s.listUsers))
	mux.HandleFunc("POST /v1/users", s.authed(adminOnly, s.addUser))
	mux.HandleFunc("DELETE /v1/users/{name}", s.authed(adminOnly, s.deleteUser))
	mux.HandleFunc("GET /v1/tokens", s.authed(adminOnly, s.listTokens))
	mux.HandleFunc("POST /v1/tokens", s.authed(adminOnly, s.addToken))
	mux.HandleFunc("DELETE /v1/tokens/{ref}", s.authed(adminOnly, s.revokeToken))

	s.publishingRoutes(mux)
	s.deleteRoutes(mux)
	s.assistRoutes(mux)
	s.personaRoutes(mux)
	s.mcpRoutes(mux)
	s.webAppRoutes(mux)

	mux.HandleFunc("/v1/sync", s.syncEndpoint)
	mux.HandleFunc("/", s.noEndpoint)
	return s.observe(s.cors(mux))
}

// noEndpoint answers a path no route serves. The path is echoed as its
// escaped form (no "<", quote or blank, at most 200 bytes), the method
// only when it is a known one, and the answer carries nosniff: whatever a
// client puts in the URL stays inert in the answer.
func (s *Server) noEndpoint(w http.ResponseWriter, r *http.Request) {
	if !isAPIPath(r.URL.Path) {
		s.siteNotFound(w, r) // a page of the site that does not exist
		return
	}
	path := r.URL.EscapedPath()
	if len(path) > 200 {
		path = path[:200] + "…"
	}
	method := methodLabel(r.Method)
	if method == "other" {
		method = "(an unknown method)"
	}
	msg := "no endpoint " + method + " " + path + "; docs/api.md lists them"
	if strings.HasPrefix(r.URL.Path, "/v1/v1/") {
		msg = "no endpoint " + method + " " + path + ": the client's base URL ends in /v1; give the daemon's address without it (e.g. http://127.0.0.1:7420)"
	}
	e := toError(errs.E(errs.NotFound, "%s", msg))
	e.What, e.Name = "endpoint", method+" "+path
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.writeError(w, e)
}

// isAPIPath reports whether path belongs to the API, whose unknown paths
// keep their JSON errors (everything else is the site's).
func isAPIPath(path string) bool {
	return path == "/v1" || strings.HasPrefix(path, "/v1/") || path == "/healthz" || path == "/metrics"
}

// Health is the body of /healthz.
type Health struct {
	Status  string `json:"status"` // "ok", "storage failed" or "shutting down"
	Version string `json:"version"`
	// Storage is "full" while writes are refused for lack of space
	// (status stays "ok": reads are served); absent otherwise.
	Storage string `json:"storage,omitempty"`
	// Database is the state of a store held in a database server
	// (engine postgres): "ok", or "unreachable" while the daemon cannot
	// use it (status "storage failed" until it is back); absent on the
	// embedded engine.
	Database string `json:"database,omitempty"`
	// Error is why the daemon is failing or refusing writes: code
	// storage_failed or storage_full, the message clients get, and (for a
	// failure) its cause, as logged.
	Error *HealthError `json:"error,omitempty"`
}

// HealthError is the error member of Health.
type HealthError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Cause   string `json:"cause,omitempty"`
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if err := s.content.Failure(); err != nil {
		he := &HealthError{Code: errs.CodeOf(err), Message: err.Error()}
		if cause := errors.Unwrap(err); cause != nil {
			he.Cause = cause.Error()
		}
		h := Health{Status: "storage failed", Version: s.cfg.Version, Error: he}
		if s.content.Engine() == enginePostgres {
			h.Database = "unreachable"
		}
		writeJSON(w, http.StatusServiceUnavailable, h)
		return
	}
	if s.closing.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down", "version": s.cfg.Version})
		return
	}
	h := Health{Status: "ok", Version: s.cfg.Version}
	if s.content.Engine() == enginePostgres {
		h.Database = "ok"
	}
	if err := s.content.Writable(); err != nil && errs.KindOf(err) == errs.StorageFull {
		h.Storage, h.Error = "full", &HealthError{Code: errs.CodeOf(err), Message: err.Error()}
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) syncEndpoint(w http.ResponseWriter, r *http.Request) {
	if s.sync == nil {
		s.fail(w, r, errs.E(errs.Unavailable, "this daemon has no sync service mounted at /v1/sync"))
		return
	}
	if err := s.content.Failure(); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.closing.Load() {
		s.fail(w, r, errs.E(errs.Unavailable, "the daemon is shutting down; reconnect later"))
		return
	}
	s.sync.ServeHTTP(w, r)
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	writeJSON(w, http.StatusOK, Whoami{User: p.User, UserID: p.UserID, Admin: p.Admin, TokenID: p.TokenID, Kind: p.Kind})
}

// doc checks that the caller may see document {id}; another user's
// document is answered exactly as a missing one.
func (s *Server) doc(h func(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		id := r.PathValue("id")
		owner, err := s.content.DocOwner(id)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if !owns(p, owner) {
			s.fail(w, r, &repo.NotFoundError{What: "document", Name: id})
			return
		}
		h(w, r, p, id)
	}
}

// decode reads a JSON request body into v, strictly.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return tooLarge(mb)
		}
		if errors.Is(err, io.EOF) {
			return errs.E(errs.Invalid, "the request needs a JSON body")
		}
		return errs.E(errs.Invalid, "request body: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return tooLarge(mb)
		}
		return errs.E(errs.Invalid, "request body: unexpected data after the JSON value")
	}
	return nil
}

func (s *Server) listDocs(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	owner := p.UserID
	if p.Admin {
		owner = ""
		if name := r.URL.Query().Get("owner"); name != "" {
			u, err := s.auth.GetUser(r.Context(), name)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			owner = u.ID
		}
	}
	var docs []repo.DocInfo
	if owner != "" || p.Admin {
		var err error
		if docs, err = s.content.ListDocs(r.Context(), owner); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if err := s.ownerNames(r.Context(), docs); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.publishMarks(r.Context(), docs); err != nil {
		s.fail(w, r, err)
		return
	}
	if docs == nil {
		docs = []repo.DocInfo{}
	}
	writeJSON(w, http.StatusOK, docs)
}

// ownerNames fills in the names of the documents' owners; a document whose
// owner no longer exists keeps an empty name.
func (s *Server) ownerNames(ctx context.Context, docs []repo.DocInfo) error {
	if len(docs) == 0 {
		return nil
	}
	names, err := s.auth.Names(ctx)
	if err != nil {
		return err
	}
	for i := range docs {
		docs[i].OwnerName = names[docs[i].Owner]
	}
	return nil
}

// publishMarks fills in each document's published label and visibility
// from the publishing store (the document list's published marker).
func (s *Server) publishMarks(ctx context.Context, docs []repo.DocInfo) error {
	for i := range docs {
		vis, _, err := s.pub.Status(ctx, docs[i].ID)
		if err != nil {
			return err
		}
		docs[i].Published, docs[i].Visibility = vis.Published, vis.Visibility
	}
	return nil
}

func (s *Server) createDoc(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	req, err := s.decodeCreate(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if req.id != "" && !p.Admin {
		// Refused whether or not the id is taken: an author learns nothing
		// about other users' documents from creating one.
		s.fail(w, r, errs.E(errs.Forbidden, "document ids are chosen by the server; only an admin may choose one: leave the id out"))
		return
	}
	owner := p.UserID
	if req.owner != "" && req.owner != p.User {
		if !p.Admin {
			s.fail(w, r, errs.E(errs.Forbidden, "only an admin may create a document for another user"))
			return
		}
		u, err := s.auth.GetUser(r.Context(), req.owner)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		owner = u.ID
	}
	body := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	if req.body != nil {
		body = *req.body
	}
	v, err := s.content.CreateDoc(r.Context(), repo.CreateParams{ID: req.id, Owner: owner, Author: p.User,
		Attrs: req.attrs, Body: body, Message: req.message})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.m.checkpoints.WithLabelValues("create").Inc()
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) getDoc(w http.ResponseWriter, r *http.Request, _ auth.Principal, doc string) {
	d, err := s.content.GetDoc(r.Context(), doc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ds := []repo.DocInfo{d}
	if err := s.ownerNames(r.Context(), ds); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.publishMarks(r.Context(), ds); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ds[0])
}

// chown reassigns a document to another user (admins only): the way a
// deleted user's documents, which belong to nobody, get an owner again.
// The change is logged and appended to the document's stream; editors of
// the previous owner lose the document at once.
func (s *Server) chown(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	var req ChownRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.User == "" {
		s.fail(w, r, errs.E(errs.Invalid, "chown needs the new owner's user name"))
		return
	}
	res, err := Chown(r.Context(), s.content, s.auth, doc, req.User, p.User)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if res.Changed {
		s.log.Info("document owner changed", "doc", doc, "from", res.Previous, "to", res.Owner,
			"to_name", res.OwnerName, "by", p.User)
		if rc, ok := s.sync.(rechecker); ok {
			if n := rc.Recheck(doc); n > 0 {
				s.log.Info("closed the previous owner's sync connections", "doc", doc, "connections", n)
			}
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// Chown reassigns doc to the user named user on behalf of actor: the one
// implementation behind PUT /v1/docs/{id}/owner and the CLI's direct mode.
// Errors: auth.ErrNotFound (no such user), *repo.NotFoundError.
func Chown(ctx context.Context, rp Documents, as *auth.Store, doc, user, actor string) (ChownResponse, error) {
	u, err := as.GetUser(ctx, user)
	if err != nil {
		return ChownResponse{}, err
	}
	prevID, err := rp.DocOwner(doc)
	if err != nil {
		return ChownResponse{}, err
	}
	prevName := ""
	if prevID != "" {
		if pu, err := as.UserByID(ctx, prevID); err == nil {
			prevName = pu.Name
		}
	}
	prev, err := rp.Chown(ctx, repo.ChownParams{Doc: doc, Owner: u.ID, OwnerName: u.Name, PrevName: prevName, Actor: actor})
	if err != nil {
		return ChownResponse{}, err
	}
	return ChownResponse{Doc: doc, Owner: u.ID, OwnerName: u.Name, Previous: prev, Changed: prev != u.ID}, nil
}

func (s *Server) getDraft(w http.ResponseWriter, r *http.Request, _ auth.Principal, doc string) {
	d, err := s.content.Draft(r.Context(), doc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) saveDraft(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	req, err := s.decodeSave(r)
	if err != nil {
		s.m.saves.WithLabelValues("invalid").Inc()
		s.fail(w, r, err)
		return
	}
	sp := repo.SaveParams{Doc: doc, Actor: p.User, Session: req.session, BaseSeq: req.baseSeq,
		Body: req.body, Align: req.align, Changes: req.changes, Attrs: req.attrs, Seal: req.seal, Message: req.message,
		Merge: req.merge}
	start := time.Now()
	res, err := s.content.SaveDraft(r.Context(), sp)
	if err != nil {
		switch {
		case errors.Is(err, repo.ErrConflict):
			s.m.saves.WithLabelValues("conflict").Inc()
		case errors.Is(err, errs.Invalid):
			s.m.saves.WithLabelValues("invalid").Inc()
		default:
			s.m.saves.WithLabelValues("error").Inc()
		}
		s.fail(w, r, err)
		return
	}
	s.m.saveLatency.Observe(time.Since(start).Seconds())
	s.m.saves.WithLabelValues("ok").Inc()
	if res.Version != nil {
		s.m.checkpoints.WithLabelValues(reasonLabel(req.seal)).Inc()
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	req, err := s.decodeCheckpoint(r) // an empty body takes the defaults
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Reason == "" {
		req.Reason = "manual"
	}
	v, created, err := s.content.Checkpoint(r.Context(), doc, req.Reason, p.User, req.Message)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if created {
		s.m.checkpoints.WithLabelValues(reasonLabel(req.Reason)).Inc()
	}
	writeJSON(w, http.StatusOK, CheckpointResponse{Version: v, Created: created})
}

// uintParam reads a non-negative integer query parameter (0 when absent).
func uintParam(r *http.Request, name string) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil {
		return 0, errs.E(errs.Invalid, "query parameter %s=%q is not a non-negative integer", name, v)
	}
	return n, nil
}

func (s *Server) log_(w http.ResponseWriter, r *http.Request, _ auth.Principal, doc string) {
	limit, err := uintParam(r, "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	before, err := uintParam(r, "before")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	vs, err := s.content.Log(r.Context(), doc, int(limit), before)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if vs == nil {
		vs = []repo.VersionInfo{}
	}
	writeJSON(w, http.StatusOK, vs)
}

func (s *Server) show(w http.ResponseWriter, r *http.Request, _ auth.Principal, doc string) {
	snap, err := s.content.Show(r.Context(), doc, r.PathValue("label"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ShowResponse{Version: snap.Info, Attrs: snap.Attrs, Body: flowdoc.CanonicalJSON(snap.Body)})
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request, _ auth.Principal, doc string) {
	q := r.URL.Query()
	from, to := q.Get("from"), q.Get("to")
	if from == "" || to == "" {
		s.fail(w, r, errs.E(errs.Invalid, "diff needs the query parameters from and to (version labels)"))
		return
	}
	changes, err := s.content.Diff(r.Context(), doc, from, to)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if changes == nil {
		changes = []flowdoc.BlockChange{}
	}
	writeJSON(w, http.StatusOK, DiffResponse{From: from, To: to, Changes: changes})
}

func (s *Server) history(w http.ResponseWriter, r *http.Request, _ auth.Principal, doc string) {
	hs, err := s.content.BlockHistory(r.Context(), doc, r.PathValue("block"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if hs == nil {
		hs = []repo.BlockRevision{}
	}
	slices.Reverse(hs) // newest first, as the log
	writeJSON(w, http.StatusOK, hs)
}

func (s *Server) restore(w http.ResponseWriter, r *http.Request, p auth.Principal, doc string) {
	req, err := s.decodeRestore(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var v repo.VersionInfo
	if req.Block != "" {
		v, err = s.content.RestoreBlock(r.Context(), doc, req.Label, req.Block, p.User)
	} else {
		v, err = s.content.Restore(r.Context(), doc, req.Label, p.User)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.m.checkpoints.WithLabelValues("restore").Inc()
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) fsck(w http.ResponseWriter, r *http.Request) {
	rep, err := s.content.Fsck(r.Context(), repo.FsckOptions{})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// GCRequest is the body of POST /v1/admin/gc.
type GCRequest struct {
	// PruneSeconds: reflog entries younger than this keep what they name
	// (0: the default, 14 days; negative: none do).
	PruneSeconds int64 `json:"pruneSeconds,omitempty"`
	DryRun       bool  `json:"dryRun,omitempty"`
}

// gc collects garbage while the daemon keeps serving: writers hold write
// passes, so nothing they reuse is removed (repo.GC).
func (s *Server) gc(w http.ResponseWriter, r *http.Request) {
	var req GCRequest
	if r.ContentLength != 0 { // an empty body takes the defaults
		if err := decode(r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	rep, err := s.content.GC(r.Context(), repo.GCOptions{Prune: time.Duration(req.PruneSeconds) * time.Second, DryRun: req.DryRun})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) {
	us, err := s.auth.ListUsers(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if us == nil {
		us = []auth.User{}
	}
	writeJSON(w, http.StatusOK, us)
}

func (s *Server) addUser(w http.ResponseWriter, r *http.Request) {
	var req UserRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	u, it, err := s.auth.AddUser(r.Context(), req.Name, req.Admin)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("user added", "user", u.Name, "role", u.Role, "by", principal(r).User)
	writeJSON(w, http.StatusCreated, IssuedResponse{User: u.Name, UserID: u.ID, Role: u.Role, Token: it.Secret, Info: it.Token})
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	toks, err := s.auth.DeleteUser(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("user deleted; their documents belong to nobody until an admin reassigns them (folio doc chown)",
		"user", name, "tokens_revoked", len(toks), "by", principal(r).User)
	if toks == nil {
		toks = []auth.Token{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": name, "revoked": toks})
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	ts, err := s.auth.ListTokens(r.Context(), r.URL.Query().Get("user"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if ts == nil {
		ts = []auth.Token{}
	}
	writeJSON(w, http.StatusOK, ts)
}

func (s *Server) addToken(w http.ResponseWriter, r *http.Request) {
	var req TokenRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	it, err := s.auth.AddToken(r.Context(), req.User, req.Kind)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u, err := s.auth.GetUser(r.Context(), req.User)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("token added", "user", it.User, "token", it.ID, "kind", it.Kind, "by", principal(r).User)
	writeJSON(w, http.StatusCreated, IssuedResponse{User: it.User, UserID: u.ID, Role: u.Role, Token: it.Secret, Info: it.Token})
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	t, err := s.auth.RevokeToken(r.Context(), r.PathValue("ref"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// enginePostgres is the name of the PostgreSQL engine (kv.EnginePostgres;
// the server reaches the store only through Content).
const enginePostgres = "postgres"
