package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/assistant/attrs"
	"github.com/foliodev/folio/assistant/reading"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/internal/repo/search"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/content"
	"github.com/foliodev/folio/persona/index"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Server. Content, Auth and Publish are required.
type Config struct {
	// Content is the content service the server serves (the daemon's
	// *repo.Repo); every read and write of documents, the store's health,
	// the event streams and the stores of exports go through it.
	Content Content
	Auth    *auth.Store
	// Publish publishes the documents of Content and answers the public
	// API (publish.New over the same repository).
	Publish *publish.Store

	// Logger receives one line per request and the lifecycle; nil: discard.
	Logger *slog.Logger
	// Registry holds every collector served at /metrics; nil: a new one.
	Registry *prometheus.Registry
	// Version is reported by /healthz.
	Version string

	// MaxBody bounds a request body (default 2 × the document size limit
	// + 1 MiB); a larger one is answered 413 too_large.
	MaxBody int64
	// MaxFrame, MessagesPerSecond and MaxSubscriptions are the sync
	// server's per-connection limits (zero: its defaults).
	MaxFrame          int64
	MessagesPerSecond float64
	MaxSubscriptions  int

	// NewSync builds the service mounted at /v1/sync; nil: MountSync.
	NewSync SyncFactory
	// AllowedOrigins are the browser origins ("https://blog.example", or
	// "*") whose editors may call the API (CORS) and open /v1/sync.
	AllowedOrigins []string
	// Usage reports token usage over the last days with the settings
	// source of each category (package quota), for admins at GET
	// /v1/admin/usage; nil: the endpoint answers disabled.
	Usage func(days int) (*quota.Report, error)
	// AICheck runs `folio ai check` in the daemon with its configuration
	// (assistant.Gateway.Check), for admins at POST /v1/admin/ai/check;
	// nil: the endpoint answers disabled.
	AICheck func(ctx context.Context, cat quota.Category, prompt string, onText func(string)) (*assistant.CheckReport, error)
	// Assistant is the writing assistant behind the /v1 assistant
	// endpoints (docs/api.md, "Writing assistant"); its task runner must
	// share the repository's hub. nil: those endpoints answer
	// assistant_disabled.
	Assistant *assistant.Service
	// Personas is the persona service behind /v1/personas (docs/api.md,
	// "Personas"), PersonaSources the content service it reads sources
	// through and MemoryIndex the memory index (`folio index`). nil:
	// those endpoints answer persona_disabled.
	Personas       *persona.Service
	PersonaSources *content.Sources
	MemoryIndex    *index.Index
	// Search is the document search index (GET /v1/search, GET
	// /v1/public/search), fed by Content's outbox and opened with the
	// publishing store as its Public; the caller closes it after
	// Shutdown. nil: the server opens one in memory at the first query.
	Search *search.Index
	// MaxStream bounds how long one run event stream (SSE) stays open
	// (default 5 min); clients resume with Last-Event-ID.
	MaxStream time.Duration

	// Connections (Serve only; docs/config.md). MaxConns caps the client
	// connections open at once (default 1,024) and MaxConnsPerAddr those
	// of one client address (default 128; an IPv6 client's /64); negative:
	// no cap. When a cap is met the oldest connection on which no request
	// has authenticated yet is closed to make room, and only when there is
	// none is the new one answered 503 and closed.
	MaxConns        int
	MaxConnsPerAddr int
	// An authenticated connection is protected from being closed to make
	// room (trusted) only within shares: MaxConnsPerToken per token
	// (default 32), MaxConnsPerUser per user (default 64), and all
	// non-admins' together at most MaxConns − AdminConns (AdminConns
	// default: MaxConns/16, at least 1), so that an admin always finds a
	// place. Beyond a share it stays untrusted. When a cap is met and no
	// untrusted connection is left, the trusted connection that has waited
	// longest for its next request is closed. Negative: no cap (no
	// reserve).
	MaxConnsPerToken int
	MaxConnsPerUser  int
	AdminConns       int
	// ReadHeaderTimeout bounds the time to read a request's headers
	// (default 10 s); ReadTimeout the time from the start of a request to
	// the last byte of its body (default 2 min: at the default body limit
	// of 33 MiB, about 280 KiB/s); IdleTimeout how long a kept-alive
	// connection may wait for its next request (default 2 min). WebSocket
	// connections are exempt once upgraded: the sync server keeps its own
	// hello, ping and write deadlines.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration

	// Attrs and Reading are the attributes and reading assistants; nil
	// answers attributes_disabled / reading_disabled (publishing and the
	// public API work without them).
	Attrs   *attrs.Service
	Reading *reading.Service
	// SiteTitle names the public site and the Atom feed ("" : "Folio");
	// SiteAuthor is the feed's author and the pages' footer ("" : the
	// title). [site] in docs/config.md.
	SiteTitle  string
	SiteAuthor string
	// SiteURL is the site's public address ([site] url) the Atom feed's
	// links are built on; "": links relative to the feed. Never the
	// request's Host header, which the client chooses.
	SiteURL string
}

// Defaults of the connection limits.
const (
	DefaultMaxConns          = 1024
	DefaultMaxConnsPerAddr   = 128
	DefaultMaxConnsPerToken  = 32
	DefaultMaxConnsPerUser   = 64
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 2 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
)

// Server serves the HTTP API. Create it with New.
type Server struct {
	cfg     Config
	content Content
	auth    *auth.Store
	log     *slog.Logger
	reg     *prometheus.Registry
	m       *metrics
	maxBody int64
	handler http.Handler
	// patterns are the routes of handler (Routes); set by New.
	patterns []string

	pub         *publish.Store
	rendered    *renderCache
	assetKey    [32]byte    // signs the asset URLs of password-protected pages (site.go); random per process
	sync        SyncService // nil when no sync service is mounted
	stopRevoke  func()
	closing     atomic.Bool
	stop        chan struct{} // closed by Shutdown and FailStop: long answers (event streams) end
	stopOnce    sync.Once
	active      atomic.Int64 // HTTP handlers running (WebSocket sessions excluded)
	httpMu      sync.Mutex   // guards httpSrv
	httpSrv     *http.Server
	gate        *gate // the connection gate of Serve; guarded by httpMu
	reqSequence atomic.Uint64
	bootID      string
	search      searchIndex // GET /v1/search, /v1/public/search (search.go)
}

// New wires the handlers. It starts nothing; see Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Content == nil || cfg.Auth == nil || cfg.Publish == nil {
		return nil, errors.New("server: Config needs Content, Auth and Publish")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxConnsPerAddr == 0 {
		cfg.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if cfg.MaxConnsPerToken == 0 {
		cfg.MaxConnsPerToken = DefaultMaxConnsPerToken
	}
	if cfg.MaxConnsPerUser == 0 {
		cfg.MaxConnsPerUser = DefaultMaxConnsPerUser
	}
	if cfg.AdminConns == 0 && cfg.MaxConns > 0 {
		cfg.AdminConns = max(1, cfg.MaxConns/16)
	}
	if cfg.MaxConns > 0 && cfg.AdminConns >= cfg.MaxConns {
		return nil, fmt.Errorf("server: the admins' reserve (%d connections) must be smaller than the connection cap (%d)", cfg.AdminConns, cfg.MaxConns)
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxStream <= 0 {
		cfg.MaxStream = DefaultMaxStream
	}
	s := &Server{cfg: cfg, content: cfg.Content, auth: cfg.Auth, log: cfg.Logger, reg: cfg.Registry, maxBody: cfg.MaxBody,
		pub: cfg.Publish, rendered: newRenderCache(renderCacheBytes), stop: make(chan struct{})}
	if s.maxBody <= 0 {
		s.maxBody = 2*int64(cfg.Content.Limits().MaxBytes) + 1<<20
		if cfg.Content.Limits().MaxBytes <= 0 {
			s.maxBody = 17 << 20
		}
	}
	_, _ = rand.Read(s.assetKey[:])
	var b [4]byte
	_, _ = rand.Read(b[:])
	s.bootID = hex.EncodeToString(b[:])
	registerRuntime(s.reg)
	m, err := newMetrics(s.reg)
	if err != nil {
		return nil, fmt.Errorf("server: metrics: %w", err)
	}
	s.m = m
	factory := cfg.NewSync
	if factory == nil {
		factory = MountSync
	}
	svc, err := factory(SyncDeps{Server: s})
	if err != nil {
		return nil, fmt.Errorf("server: sync service: %w", err)
	}
	s.sync = svc
	rep, err := s.content.MigrateOwners(context.Background(), s.auth)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if !rep.Done {
		s.log.Info("document owners are user ids now", "documents_migrated", rep.Docs, "orphaned", rep.Orphaned)
	}
	s.stopRevoke = s.auth.OnRevoke(s.revoked)
	s.handler = s.routes()
	return s, nil
}

// Handler returns the root handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// Registerer is the registry collectors of other parts register with.
func (s *Server) Registerer() prometheus.Registerer { return s.reg }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// Content is the content service the server serves.
func (s *Server) Content() Content { return s.content }

// Config returns the configuration New completed with defaults.
func (s *Server) Config() Config { return s.cfg }

// revoked closes the live connections of a revoked token.
func (s *Server) revoked(tokenID string) {
	s.m.revoked.Inc()
	n := 0
	if s.sync != nil {
		n = s.sync.RevokeToken(tokenID)
	}
	s.log.Info("token revoked", "token", tokenID, "closed_connections", n)
}

// Serve accepts connections on ln until Shutdown, within the connection
// caps and deadlines of the Config. It returns nil after a graceful
// Shutdown and the listener's error otherwise.
func (s *Server) Serve(ln net.Listener) error {
	g := newGate(gateLimits{max: max(s.cfg.MaxConns, 0), perAddr: max(s.cfg.MaxConnsPerAddr, 0),
		perToken: max(s.cfg.MaxConnsPerToken, 0), perUser: max(s.cfg.MaxConnsPerUser, 0),
		adminShare: max(s.cfg.AdminConns, 0)}, s.m)
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		// No ReadTimeout: it would also cut the background read net/http
		// keeps after a body is read, cancelling a long answer (a backup
		// pack); observe bounds each body instead. No WriteTimeout: packs
		// and WebSocket streams are long; unauthenticated answers are
		// small and the connection is closed after them.
		IdleTimeout: s.cfg.IdleTimeout,
		ConnContext: withConn,
		ConnState:   connState,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	ln = &gatedListener{Listener: ln, g: g}
	s.httpMu.Lock()
	if s.closing.Load() {
		s.httpMu.Unlock()
		return http.ErrServerClosed
	}
	s.httpSrv = srv
	s.gate = g
	s.httpMu.Unlock()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections and requests, waits for requests
// in flight (their commits finish and are answered), shuts the sync
// service down (leave checkpoints, resumable close) and returns. Both run
// concurrently under ctx's deadline. The repository stays open; the
// caller closes it afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.stopOnce.Do(func() { close(s.stop) })
	s.httpMu.Lock()
	srv := s.httpSrv
	s.httpMu.Unlock()
	var wg sync.WaitGroup
	var httpErr, syncErr error
	if srv != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			httpErr = srv.Shutdown(ctx)
		}()
	}
	if s.sync != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			syncErr = s.sync.Shutdown(ctx)
		}()
	}
	wg.Wait()
	if s.stopRevoke != nil {
		s.stopRevoke()
	}
	if srv != nil && httpErr != nil {
		// The deadline passed with requests still running (a client
		// trickling a body, say): cut their connections and give the
		// handlers a moment to return before the caller closes the store.
		srv.Close()
		for end := time.Now().Add(time.Second); s.active.Load() > 0 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := s.closeSearch(ctx); err != nil {
		s.log.Warn("search index: close", "err", err)
	}
	if httpErr != nil {
		return fmt.Errorf("server: http shutdown: %w", httpErr)
	}
	if syncErr != nil {
		return fmt.Errorf("server: sync shutdown: %w", syncErr)
	}
	return nil
}

// FailStop is the first step of stopping after the store failed: every
// request from now on is answered 503 storage_failed (as it already is
// since the failure: see authed), /healthz says why, and the WebSocket
// sessions close with syncproto.CloseStorageFailed once their request in
// progress is answered, within ctx. The HTTP listener keeps answering
// until the caller calls Shutdown, so that clients and load balancers see
// why rather than a refused connection. The repository must not be closed
// afterwards (see kv.DB.Close).
func (s *Server) FailStop(ctx context.Context) error {
	s.closing.Store(true)
	s.stopOnce.Do(func() { close(s.stop) })
	if s.sync == nil {
		return nil
	}
	return s.sync.FailStop(ctx, "the server's storage failed; reconnect after it restarts")
}

// Busy returns how many HTTP requests are still being handled. After
// Shutdown it is 0 unless a handler outlived the deadline; the store must
// then stay open (synced writes are durable without Close).
func (s *Server) Busy() int64 { return s.active.Load() }

// ctxKey keys request-scoped values.
type ctxKey int

const (
	principalKey ctxKey = iota
	infoKey
)

// reqInfo is filled in by the handlers for the access log line.
type reqInfo struct {
	user string
}

// principal returns the authenticated caller of r.
func principal(r *http.Request) auth.Principal {
	p, _ := r.Context().Value(principalKey).(auth.Principal)
	return p
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Authenticate checks a token for the HTTP API and the sync service.
// Every failure is (or wraps) auth.ErrUnauthenticated.
func (s *Server) Authenticate(ctx context.Context, token string) (auth.Principal, error) {
	if token == "" {
		return auth.Principal{}, auth.ErrUnauthenticated
	}
	p, err := s.auth.Authenticate(ctx, token)
	if err == nil {
		trustConn(ctx, p) // the connection it came on is protected, within its shares
	}
	return p, err
}

// CanAccess reports whether p may read and change document doc. It is
// false for a document that does not exist, so another user's document
// and a missing one look the same.
func (s *Server) CanAccess(_ context.Context, p auth.Principal, doc string) bool {
	owner, err := s.content.DocOwner(doc)
	if err != nil {
		return false
	}
	return owns(p, owner)
}

// owns reports whether p may reach a document whose owner is the user id
// owner: an admin always, an author only their own. Owners are user ids,
// never names, so a later user of a deleted user's name owns nothing of
// theirs; a document of nobody ("" or a deleted user's id) is admins' only.
func owns(p auth.Principal, owner string) bool {
	return p.Admin || (owner != "" && owner == p.UserID)
}

// recorder captures the status of a response; it passes Hijack and
// Flush through so that WebSocket upgrades work behind it. body, when
// set, is the request's body: an answer that begins before it was read to
// the end closes the connection (see WriteHeader).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	body   *deadlineBody
}

// WriteHeader closes the connection after an answer given before the
// request's body was read to its end (a refusal: unauthenticated, unknown
// endpoint, forbidden), and reads no more of it: net/http would otherwise
// read and discard up to 256 KiB of what remains before closing, which
// lets a client that trickles its body hold the connection for as long as
// it likes.
func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		if w.body != nil && !w.body.done() {
			w.Header().Set("Connection", "close")
			w.body.abandon()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("server: response does not support hijacking")
	}
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe wraps the whole mux: request id, access log, metrics.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			id = fmt.Sprintf("%s-%d", s.bootID, s.reqSequence.Add(1))
		}
		w.Header().Set("X-Request-Id", id)
		rec := &recorder{ResponseWriter: w}
		info := &reqInfo{}
		r = r.WithContext(context.WithValue(r.Context(), infoKey, info))
		upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		if !upgrade {
			s.m.inFlight.Inc()
			s.active.Add(1)
			defer func() { s.active.Add(-1); s.m.inFlight.Dec() }()
		}
		if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
			rec.body = s.bodyDeadline(w, r.Body, start)
			r.Body = rec.body
		}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		d := time.Since(start)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		} else if i := strings.IndexByte(route, ' '); i >= 0 {
			route = route[i+1:]
		}
		// route is a pattern of the mux (a fixed set) or "unmatched".
		method := methodLabel(r.Method)
		s.m.requests.WithLabelValues(method, route, codeLabel(rec.status)).Inc()
		if !upgrade {
			s.m.duration.WithLabelValues(method, route).Observe(d.Seconds())
		}
		lvl := slog.LevelInfo
		if rec.status >= 500 {
			lvl = slog.LevelError
		}
		if r.URL.Path == "/healthz" || r.URL.Path == "/metrics" {
			lvl = slog.LevelDebug
		}
		attrs := []slog.Attr{slog.String("request_id", id), slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", rec.status),
			slog.Duration("duration", d), slog.Int64("bytes", rec.bytes)}
		if info.user != "" {
			attrs = append(attrs, slog.String("user", info.user))
		}
		s.log.LogAttrs(r.Context(), lvl, "http request", attrs...)
	})
}

// bodyDeadline bounds the reading of a request body: it must have arrived
// ReadTimeout after the request began, or reads fail and the request with
// them. The deadline is lifted at the body's end, because net/http then
// reads on in the background to notice a client leaving, and a deadline
// there would cancel a long answer.
func (s *Server) bodyDeadline(w http.ResponseWriter, body io.ReadCloser, start time.Time) *deadlineBody {
	rc := http.NewResponseController(w)
	b := &deadlineBody{ReadCloser: body, deadline: func(time.Time) {}}
	if err := rc.SetReadDeadline(start.Add(s.cfg.ReadTimeout)); err == nil {
		b.deadline = func(t time.Time) { _ = rc.SetReadDeadline(t) }
	} // else: not a connection net/http serves (a test recorder)
	return b
}

// deadlineBody lifts the read deadline once its body is read to the end.
type deadlineBody struct {
	io.ReadCloser
	deadline func(time.Time) // sets the connection's read deadline
	eof      atomic.Bool
}

// abandon makes every further read of the body fail at once: the request
// was answered and its connection is closing.
func (b *deadlineBody) abandon() { b.deadline(time.Unix(1, 0)) }

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.eof.Swap(true) {
		b.deadline(time.Time{})
	}
	return n, err
}

// done reports whether the body was read to its end.
func (b *deadlineBody) done() bool { return b.eof.Load() }

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// fail answers err as a JSON error; internal errors are logged with the
// request id and answered without their details.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := toError(err)
	if errs.KindOf(err) == errs.Internal {
		id := w.Header().Get("X-Request-Id")
		s.log.Error("request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		e.Message = "internal error (request " + id + "); the daemon's log has the details"
	}
	s.writeError(w, e)
}

// writeError answers e with the HTTP status of its kind.
func (s *Server) writeError(w http.ResponseWriter, e Error) {
	k, _ := errs.KindFromName(e.Kind)
	switch k {
	case errs.Unauthenticated:
		w.Header().Set("WWW-Authenticate", `Bearer realm="folio"`)
		// Close the connection after the answer instead of reading the
		// rest of a body nobody will use: a client without a token gets
		// nothing more from this connection and holds it no longer.
		w.Header().Set("Connection", "close")
	case errs.Conflict:
		s.m.conflicts.Inc()
	}
	if e.RetryAfterMs > 0 {
		w.Header().Set("Retry-After", fmt.Sprint((e.RetryAfterMs+999)/1000))
	}
	writeJSON(w, k.HTTPStatus(), ErrorBody{Error: e})
}

// Access levels of a route.
const (
	anyUser   = iota // any valid token; read-only and agent tokens only for GET
	adminOnly        // an admin's token (an admin's agent token only for GET)
	readsOnly        // any valid token, read-only ones included (a POST that only reads)
	proposes         // any token but a read-only one: a write that only proposes (agents may)
)

// authed requires a valid bearer token; admin routes also need an admin,
// and read-only (backup) tokens reach only GET and readsOnly routes.
func (s *Server) authed(level int, h http.HandlerFunc) http.HandlerFunc {
	admin := level == adminOnly
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.content.Failure(); err != nil {
			s.fail(w, r, err) // fail-stop: nothing is read or written any more
			return
		}
		p, err := s.Authenticate(r.Context(), bearer(r))
		if err != nil {
			if errors.Is(err, auth.ErrUnauthenticated) {
				s.m.authFail.Inc()
			}
			s.fail(w, r, err)
			return
		}
		if info, ok := r.Context().Value(infoKey).(*reqInfo); ok {
			info.user = p.User
		}
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		if p.Agent() && level != readsOnly && level != proposes && !read {
			// Enforced here, for every route, whatever its handler does:
			// an agent reads and proposes; the author decides.
			s.fail(w, r, errAgent(r))
			return
		}
		if admin && !p.Admin {
			s.fail(w, r, errs.E(errs.Forbidden, "this needs an admin token; user %s is an author", p.User))
			return
		}
		if p.ReadOnly() && level != readsOnly && !read {
			s.fail(w, r, errReadOnly(p.Kind))
			return
		}
		if s.closing.Load() && r.Method != http.MethodGet && level != readsOnly {
			if err := s.content.Failure(); err != nil {
				// The store failed while this request was being
				// authenticated: say so, as to every request after.
				s.fail(w, r, err)
				return
			}
			s.fail(w, r, errs.E(errs.Unavailable, "the daemon is shutting down; retry when it is back"))
			return
		}
		if r.Body != nil {
			limit := s.maxBody
			if r.URL.Path == AssetsPath {
				// An upload is bounded by the asset limit, which may be
				// larger than a JSON body's (uploadAsset reads at most it).
				limit = max(limit, int64(s.content.MaxAsset())+1)
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		h(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	}
}
