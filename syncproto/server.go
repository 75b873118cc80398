package syncproto

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/internal/gopool"
)

// Config configures a Server. Docs, Events, Auth and Access are required;
// every zero limit takes the default named in its comment.
type Config struct {
	Docs   Docs
	Events Events
	Auth   Authenticator
	Access Access
	// Attrs answers attrs.suggest; nil answers attributes_disabled.
	Attrs Attrs
	// Assistant answers the writing assistant's requests (assist.go);
	// nil answers them assistant_disabled.
	Assistant Assistant

	Logger  *slog.Logger // default: discard
	Metrics *Metrics     // nil: no metrics

	// MaxFrame is the largest frame a client may send (default 1 MiB);
	// a larger one closes the connection with CloseTooLarge.
	MaxFrame int64
	// MessagesPerSecond and Burst shape each connection's token bucket
	// (default 50/s, burst twice the rate). Messages over it get
	// rate_limited. The defaults are the daemon's ([limits] in
	// docs/config.md).
	MessagesPerSecond float64
	Burst             int
	// MaxSubscriptions bounds the streams a connection follows, open
	// documents included (default 64).
	MaxSubscriptions int
	// SendQueue bounds the frames waiting to be written per connection
	// (default 256) and SendQueueBytes their size (default 4 MiB).
	SendQueue      int
	SendQueueBytes int
	// LagTimeout is how long stream delivery may wait for room in a full
	// send queue before the connection is closed as a slow consumer
	// (default 5 s). Replies never wait: a reply that finds the queue full
	// closes the connection at once.
	LagTimeout time.Duration
	// HelloTimeout is how long a new connection has to authenticate
	// (default 5 s).
	HelloTimeout time.Duration
	// WriteTimeout bounds one write to the socket, of a frame or of the
	// frames the connection's writer sends together (default 10 s).
	WriteTimeout time.Duration
	// PingInterval is how often the server pings a connection at the
	// WebSocket level (default 30 s; negative: never). A peer that does
	// not answer within the interval is cut, so a vanished client (no
	// FIN) does not hold memory or keep its leave checkpoint waiting.
	PingInterval time.Duration
	// ReplayBatch is how many events one store read returns (default 128).
	ReplayBatch int
	// SaveKeyTTL is how long the ack of a keyed draft.save is remembered
	// for a retry (default 10 min); SaveKeyBytes bounds the memory of all
	// remembered acks (default 8 MiB, about 40,000 saves), oldest
	// forgotten first.
	SaveKeyTTL   time.Duration
	SaveKeyBytes int
	// OriginPatterns are the browser origins allowed besides the request's
	// own host (coder/websocket AcceptOptions.OriginPatterns).
	OriginPatterns []string
}

func (c *Config) defaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = 1 << 20
	}
	if c.MessagesPerSecond <= 0 {
		c.MessagesPerSecond = 50
	}
	if c.Burst <= 0 {
		c.Burst = max(1, int(2*c.MessagesPerSecond))
	}
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = 64
	}
	if c.SendQueue <= 0 {
		c.SendQueue = 256
	}
	if c.SendQueue < 4 {
		c.SendQueue = 4
	}
	if c.SendQueueBytes <= 0 {
		c.SendQueueBytes = 4 << 20
	}
	if c.LagTimeout <= 0 {
		c.LagTimeout = 5 * time.Second
	}
	if c.HelloTimeout <= 0 {
		c.HelloTimeout = 5 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.PingInterval == 0 {
		c.PingInterval = 30 * time.Second
	}
	if c.ReplayBatch <= 0 {
		c.ReplayBatch = 128
	}
	if c.SaveKeyTTL <= 0 {
		c.SaveKeyTTL = 10 * time.Minute
	}
	if c.SaveKeyBytes <= 0 {
		c.SaveKeyBytes = 8 << 20
	}
}

// Server serves the sync protocol. It is an http.Handler for /v1/sync.
type Server struct {
	cfg     Config
	log     *slog.Logger
	session atomic.Uint64
	revokes atomic.Uint64 // revocations so far

	mu      sync.Mutex // guards conns, closing
	conns   map[*conn]struct{}
	closing bool

	wmu      sync.Mutex          // guards watchers (and their subs)
	watchers map[string]*watcher // by stream name
	wwg      sync.WaitGroup      // one per goroutine running a watcher's rounds: stop waits for them

	keys    *saveKeys   // acks of keyed saves, for retries
	workers gopool.Pool // run the handling of frames and the upgrade's authentication

	wg sync.WaitGroup // one per connection handler
}

// DefaultConfig returns a Config with every default set (and no Docs,
// Events, Auth or Access): what docs/protocol.md "Limits" lists.
func DefaultConfig() Config {
	var c Config
	c.defaults()
	return c
}

// New returns a Server; it owns no goroutine until connections arrive.
func New(cfg Config) (*Server, error) {
	if cfg.Docs == nil || cfg.Events == nil || cfg.Auth == nil || cfg.Access == nil {
		return nil, errors.New("syncproto: Config needs Docs, Events, Auth and Access")
	}
	cfg.defaults()
	return &Server{cfg: cfg, log: cfg.Logger, conns: map[*conn]struct{}{},
		watchers: map[string]*watcher{}, keys: newSaveKeys(cfg.SaveKeyTTL, cfg.SaveKeyBytes)}, nil
}

// Limits returns the limits announced to clients.
func (s *Server) Limits() Limits { return s.cfg.limits() }

func (c *Config) limits() Limits {
	return Limits{MaxFrame: c.MaxFrame, MessagesPerSecond: c.MessagesPerSecond, Burst: c.Burst,
		MaxSubscriptions: c.MaxSubscriptions, SendQueue: c.SendQueue}
}

// DefaultLimits are the limits a server with the default Config announces.
func DefaultLimits() Limits {
	c := DefaultConfig()
	return c.limits()
}

// ServeHTTP upgrades the request and returns; the connection is served
// on a goroutine of its own until it closes (Shutdown waits for it). An
// "Authorization: Bearer" header authenticates the connection at hello;
// otherwise the hello must carry the token.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		http.Error(w, "folio: the sync server is shutting down; reconnect later", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()

	hj := &hijacker{ResponseWriter: w, timeout: s.cfg.WriteTimeout}
	ws, err := websocket.Accept(hj, r, &websocket.AcceptOptions{
		Subprotocols:    Subprotocols,
		OriginPatterns:  s.cfg.OriginPatterns,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		s.wg.Done()
		s.log.Debug("sync: upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	codec := CodecFor(ws.Subprotocol())
	if codec == nil {
		ws.Close(CloseProtocolError, "offer subprotocol folio.v1.msgpack or folio.v1.json")
		s.wg.Done()
		return
	}
	ws.SetReadLimit(s.cfg.MaxFrame)

	c := newConn(r.Context(), s, ws, hj.conn, codec, "s"+strconv.FormatUint(s.session.Add(1), 36), bearer(r))
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ws.Close(CloseShutdown, "server shutting down; reconnect later")
		s.wg.Done()
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.cfg.Metrics.connOpened()

	// The connection is served on a goroutine of its own and the handler
	// returns: net/http is done with a hijacked connection, and its
	// goroutine, whose stack grew while it read and routed the request,
	// would otherwise stay parked in the read loop for the connection's
	// life. A fresh goroutine keeps a stack as small as the loop needs.
	go func() {
		defer s.wg.Done()
		c.run()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.cfg.Metrics.connClosed(c.highWater())
	}()
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		// A copy: the connection keeps the token, not the request's headers.
		return strings.Clone(strings.TrimSpace(h[7:]))
	}
	return ""
}

// RevokeToken closes every connection authenticated with token id
// tokenID with CloseTokenRevoked. Call it after the revocation is stored.
func (s *Server) RevokeToken(tokenID string) int {
	return s.revoke(func(p Principal) bool { return p.TokenID == tokenID }, "token revoked")
}

// RevokeUser closes every connection of user with CloseTokenRevoked.
func (s *Server) RevokeUser(user string) int {
	return s.revoke(func(p Principal) bool { return p.User == user }, "user removed or revoked")
}

func (s *Server) revoke(match func(Principal) bool, reason string) int {
	s.revokes.Add(1) // before the scan: see conn.authenticate
	s.mu.Lock()
	var hit []*conn
	for c := range s.conns {
		if p, ok := c.principalIfAuthed(); ok && match(p) && !c.q.isClosed() {
			hit = append(hit, c)
		}
	}
	s.mu.Unlock()
	for _, c := range hit {
		c.closeWith(CloseTokenRevoked, reason, false)
	}
	return len(hit)
}

// Recheck asks Access again, for every connection that has document doc
// open or follows its stream, whether its principal may still reach it,
// and closes those that may not with CloseAccessWithdrawn. Call it after
// the document's owner changed. It returns how many it closed.
func (s *Server) Recheck(doc string) int {
	name := "doc:" + doc
	s.mu.Lock()
	var follow []*conn
	for c := range s.conns {
		c.mu.Lock()
		open := c.open.has(doc)
		sub := c.subs.has(name)
		c.mu.Unlock()
		if open || sub {
			follow = append(follow, c)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, c := range follow {
		p, ok := c.principalIfAuthed()
		if !ok || c.q.isClosed() {
			continue
		}
		ctx, cancel := context.WithTimeout(c.vals, requestTimeout)
		allowed := s.cfg.Access.CanAccess(ctx, p, doc)
		cancel()
		if !allowed {
			c.closeWith(CloseAccessWithdrawn, "document "+doc+" was given to another user", false)
			n++
		}
	}
	return n
}

// ConnInfo describes one connection, for status pages and tests.
type ConnInfo struct {
	Session   string
	User      string
	QueueLen  int    // frames waiting to be written now
	QueueMax  int    // the largest QueueLen seen
	Closing   string // why the server is closing it; "" while open
	Streams   []string
	OpenDocs  []string
	Protocol  string
	Connected time.Time
}

// Conns lists the open connections.
func (s *Server) Conns() []ConnInfo {
	s.mu.Lock()
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	out := make([]ConnInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out
}

// Shutdown stops accepting connections, lets every request in progress
// finish, seals a leave checkpoint for each editor with unsealed changes,
// and closes every connection with CloseShutdown (after the frames already
// queued). It returns when all connections are gone or ctx ends; then the
// remaining ones are cut.
//
// Every subscriber receives the version.created event of each leave
// checkpoint before its close: all connections seal first, then each
// delivers what its streams hold and closes.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.stop(ctx, func(c *conn) { c.quiesce(ctx) }, func(c *conn) { c.finish(ctx) })
}

// FailStop is Shutdown for a server whose store failed: it stops accepting
// connections, lets every request in progress finish (its write fails at
// once with storage_failed, and that reply is sent), and closes every
// connection with CloseStorageFailed and reason, sealing no checkpoint.
// It returns when all connections are gone or ctx ends; then the
// remaining ones are cut.
func (s *Server) FailStop(ctx context.Context, reason string) error {
	return s.stop(ctx, func(c *conn) { c.failStop(reason) })
}

// stop closes the server to new connections, runs each step on every
// connection (a step starts when the one before ended on all of them) and
// waits for them to end until ctx does.
func (s *Server) stop(ctx context.Context, steps ...func(*conn)) error {
	s.mu.Lock()
	s.closing = true
	cs := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()

	stopped := make(chan struct{})
	go func() {
		for _, step := range steps {
			var wg sync.WaitGroup
			for _, c := range cs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					step(c)
				}()
			}
			wg.Wait()
		}
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
	}

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("syncproto: shutdown: %w", ctx.Err())
		s.mu.Lock()
		for c := range s.conns {
			c.ws.CloseNow()
		}
		s.mu.Unlock()
		<-done
	}
	// Every subscription has ended, so every watcher is stopping; a round
	// in progress must finish before the store may close.
	s.wwg.Wait()
	return err
}

// leaveCheckpoint seals a leave checkpoint of doc for actor.
func (s *Server) leaveCheckpoint(ctx context.Context, doc, actor string) (*VersionInfo, error) {
	v, created, err := s.cfg.Docs.Seal(ctx, doc, ReasonLeave, actor)
	if err != nil {
		return nil, err
	}
	if !created {
		return nil, nil
	}
	s.cfg.Metrics.checkpoint(ReasonLeave)
	return &v, nil
}
