package syncproto

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// conn is one WebSocket session.
//
// Goroutines: the connection's goroutine runs the read loop and hands
// each request to a pooled worker, one at a time (so a client's saves
// apply in the order sent). A writer runs on a pooled worker only while
// the send queue has frames (see sendQueue.wakeLocked) and a
// subscription's drain only while it has events to queue (subs.go), so an
// idle connection costs one goroutine.
type conn struct {
	srv     *Server
	ws      *websocket.Conn
	wire    *batchConn // the socket under ws (transport.go)
	codec   Codec
	session string
	header  string // bearer token of the upgrade request
	started time.Time

	ctx    context.Context // cancelled when the connection ends (its drains stop reading)
	cancel context.CancelFunc
	// vals carries the upgrade request's values and is never cancelled:
	// requests and pings derive their deadlines from it. Requests run one
	// at a time and the connection ends only after the last one, so none
	// needs ctx's cancellation; and a context derived from a cancellable
	// one is registered in it, which costs every connection a map for
	// its life.
	vals context.Context

	// proc is held while a request is processed; shutdown takes it to
	// wait for the request in progress and to stop further ones.
	proc    sync.Mutex
	stopped bool          // guarded by proc: ignore further requests
	handled chan struct{} // the request's worker is done (onWorker)

	mu         sync.Mutex // guards the fields below
	authed     bool
	who        Principal
	helloTimer *time.Timer   // closes a connection that sends no hello in time; dropped once authenticated
	open       few[*openDoc] // by document id
	subs       few[*sub]     // by stream name
	bucket     bucket

	pingMu      sync.Mutex  // guards ping, pingStopped
	ping        *time.Timer // the next keepalive ping
	pingStopped bool

	q      sendQueue
	wsDone chan struct{} // closed when the writer has closed the socket
	wsOnce sync.Once
}

// openDoc is a document opened for editing on a connection.
type openDoc struct {
	dirty bool // this connection saved changes not yet sealed by it
}

// newConn makes the connection of an upgraded request. Its context keeps
// the request context's values (the transport's, such as which socket it
// came on) but not its cancellation: the connection outlives the handler's
// request.
func newConn(parent context.Context, s *Server, ws *websocket.Conn, wire *batchConn, codec Codec, session, header string) *conn {
	c := &conn{srv: s, ws: ws, wire: wire, codec: codec, session: session, header: header, started: time.Now(), handled: make(chan struct{}, 1)}
	c.vals = context.WithoutCancel(parent)
	c.ctx, c.cancel = context.WithCancel(c.vals)
	c.wsDone = make(chan struct{})
	// The writer runs on a pooled worker: it starts whenever an idle
	// queue gets a frame, several times a second on a busy connection.
	c.q.init(s.cfg.SendQueue, s.cfg.SendQueueBytes, func() { s.workers.Run(c.writeLoop) })
	c.bucket = bucket{rate: s.cfg.MessagesPerSecond, burst: float64(s.cfg.Burst), tokens: float64(s.cfg.Burst)}
	return c
}

func (c *conn) principalIfAuthed() (Principal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.who, c.authed
}

func (c *conn) info() ConnInfo {
	c.mu.Lock()
	ci := ConnInfo{Session: c.session, User: c.who.User, Protocol: c.codec.Name(), Connected: c.started}
	for _, it := range c.subs.items {
		ci.Streams = append(ci.Streams, it.key)
	}
	for _, it := range c.open.items {
		ci.OpenDocs = append(ci.OpenDocs, it.key)
	}
	c.mu.Unlock()
	sort.Strings(ci.Streams)
	sort.Strings(ci.OpenDocs)
	ci.QueueLen, ci.QueueMax, ci.Closing = c.q.stats()
	return ci
}

func (c *conn) highWater() int {
	_, hw, _ := c.q.stats()
	return hw
}

// run serves the connection until it ends, then cleans up: ends the
// subscriptions, seals leave checkpoints and waits until the socket is
// closed.
func (c *conn) run() {
	// A bearer token on the upgrade authenticates at once; the welcome
	// is then sent unsolicited (without id).
	if c.header != "" {
		c.proc.Lock()
		c.onWorker(func() { // like every request: checking a token reads the store
			if c.authenticate(c.header) {
				c.welcome("")
			}
		})
		c.proc.Unlock()
	}
	if _, ok := c.principalIfAuthed(); !ok {
		c.mu.Lock()
		c.helloTimer = time.AfterFunc(c.srv.cfg.HelloTimeout, func() {
			if _, ok := c.principalIfAuthed(); !ok {
				c.closeWith(CloseAuthFailed, "no hello within "+c.srv.cfg.HelloTimeout.String(), false)
			}
		})
		c.mu.Unlock()
	}

	if d := c.srv.cfg.PingInterval; d > 0 {
		c.pingMu.Lock()
		c.ping = time.AfterFunc(d, c.keepalive)
		c.pingMu.Unlock()
	}

	c.readLoop()
	c.mu.Lock()
	if c.helloTimer != nil {
		c.helloTimer.Stop()
	}
	c.mu.Unlock()
	c.stopPing()

	// The peer is gone or the server closes: no more requests.
	c.proc.Lock()
	c.stopped = true
	c.proc.Unlock()
	c.stopAllSubs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c.sealLeaves(ctx)
	cancel()
	c.closeWith(websocket.StatusNormalClosure, "", false)
	<-c.wsDone
	c.cancel()
}

func (c *conn) readLoop() {
	for {
		typ, data, err := c.ws.Read(context.Background())
		if err != nil {
			if code := websocket.CloseStatus(err); code == CloseTooLarge {
				c.srv.cfg.Metrics.closed(code)
			}
			return
		}
		c.proc.Lock()
		if !c.stopped { // stopped: shutting down; the writer closes the socket
			c.onWorker(func() { c.handleFrame(typ, data) })
		}
		c.proc.Unlock()
	}
}

// onWorker runs fn on a pooled worker (package gopool) and waits for it.
// A goroutine keeps the largest stack it grew to, and the connection's
// goroutine lives as long as the connection, so the deep work of a
// request (decoding, a save down to the store) grows the stack of a
// pooled worker instead of one per connection.
func (c *conn) onWorker(fn func()) {
	c.srv.workers.Run(func() {
		fn()
		c.handled <- struct{}{}
	})
	<-c.handled
}

func (c *conn) handleFrame(typ websocket.MessageType, data []byte) {
	if (typ == websocket.MessageBinary) != c.codec.Binary() {
		want := "text"
		if c.codec.Binary() {
			want = "binary"
		}
		c.replyError("", CodeBadMessage, fmt.Sprintf("subprotocol %s uses %s frames", c.codec.Name(), want))
		return
	}
	m, err := c.codec.Decode(data, false)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			c.srv.cfg.Metrics.received("invalid")
			var ee *errs.Error
			if errors.As(de.Err, &ee) { // classified (e.g. invalid JSON text): as over HTTP
				c.replyErr(de.ID, ee)
				return
			}
			c.replyError(de.ID, de.Code, de.Err.Error())
			return
		}
		c.replyError("", CodeBadMessage, err.Error())
		return
	}
	env := m.Env()
	if !IsRequest(env.Type) {
		c.srv.cfg.Metrics.received("invalid")
		c.replyError(env.ID, CodeUnknownType, fmt.Sprintf("%q is not a message a client sends", env.Type))
		return
	}
	c.srv.cfg.Metrics.received(env.Type)
	c.mu.Lock()
	ok, wait := c.bucket.take(time.Now())
	authed := c.authed
	c.mu.Unlock()
	if !ok {
		c.send(&Error{Envelope: Envelope{ID: env.ID}, Code: CodeRateLimited, Kind: CodeRateLimited.Kind().String(),
			Message:      fmt.Sprintf("more than %g messages per second; %s was dropped", c.srv.cfg.MessagesPerSecond, env.Type),
			RetryAfterMs: max((wait + time.Millisecond - 1).Milliseconds(), 1)})
		return
	}
	if hello, isHello := m.(*Hello); isHello {
		c.hello(hello)
		return
	}
	if !authed {
		c.replyError(env.ID, CodeHelloRequired, "send hello first")
		return
	}
	if c.principal().Agent && !AgentMay(env.Type) {
		c.replyError(env.ID, CodeForbidden, fmt.Sprintf("an agent token may only read and propose suggestions; %s is the author's to send", env.Type))
		return
	}
	c.handle(m)
}

// replyError queues an error reply with code and its kind.
func (c *conn) replyError(id string, code Code, msg string) {
	c.send(&Error{Envelope: Envelope{ID: id}, Code: code, Kind: code.Kind().String(), Message: msg})
}

// replyErr queues the error reply of err: its code, kind and message
// (package errs), and the problems of an invalid document.
func (c *conn) replyErr(id string, err error) {
	e := &Error{Envelope: Envelope{ID: id}, Code: Code(errs.CodeOf(err)), Kind: errs.KindOf(err).String(), Message: errs.Message(err)}
	var ve *flowdoc.ValidationError
	if errors.As(err, &ve) {
		e.Problems = ve.Problems
	}
	if d := errs.RetryAfterOf(err); d > 0 {
		e.RetryAfterMs = max(d.Milliseconds(), 1)
	}
	c.send(e)
}

// encode sets the message's type and encodes it.
func (c *conn) encode(m Message) ([]byte, bool) {
	m.Env().Type = TypeOf(m)
	b, err := c.codec.Encode(m)
	if err != nil {
		c.srv.log.Error("sync: encode failed", "type", m.Env().Type, "err", err)
		return nil, false
	}
	return b, true
}

// send queues a reply without waiting; a full queue closes the connection
// as a slow consumer.
func (c *conn) send(m Message) { c.sendEnding(m, "") }

// sendEnding is send for the reply that ends the connection's following
// of stream (unsubscribed, left): once it is written, the stream's cursor
// is no longer listed in a resumable close (every frame of the stream was
// queued before it).
func (c *conn) sendEnding(m Message, stream string) {
	b, ok := c.encode(m)
	if !ok {
		return
	}
	switch c.q.push(frame{data: b, ends: stream}, false) {
	case pushOK:
		c.srv.cfg.Metrics.sent(m.Env().Type)
	case pushFull:
		c.slow()
	}
}

// slow closes the connection as a slow consumer, dropping what is queued.
func (c *conn) slow() {
	c.closeWithResume(CloseSlowConsumer, "slow consumer", false)
}

// closeWith makes the writer close the connection with code and reason:
// after the frames already queued when flush, else at once (dropping
// them). The first close wins.
func (c *conn) closeWith(code websocket.StatusCode, reason string, flush bool) {
	c.closeQueue(code, reason, flush, false)
}

// closeWithResume is closeWith for resumable closes: the reason ends with
// the last cursor written per stream ("; resume doc:a@12 run:b@3"),
// computed when the close frame is written.
func (c *conn) closeWithResume(code websocket.StatusCode, reason string, flush bool) {
	c.closeQueue(code, reason, flush, true)
}

func (c *conn) closeQueue(code websocket.StatusCode, reason string, flush, resume bool) {
	if c.q.close(code, clipReason(reason), flush, resume) && code != websocket.StatusNormalClosure {
		c.srv.cfg.Metrics.closed(code)
		who, _ := c.principalIfAuthed()
		c.srv.log.Info("sync: closing connection", "session", c.session, "user", who.User, "code", int(code), "reason", reason)
	}
}

// clipReason fits a close reason into a control frame (123 bytes).
func clipReason(s string) string {
	const maxReason = 123
	if len(s) <= maxReason {
		return s
	}
	s = s[:maxReason]
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	return s
}

// Batches: the writer takes up to batchFrames frames (batchBytes after
// the first) from the queue at a time and writes them to the socket
// together (transport.go).
const (
	batchFrames = 64
	batchBytes  = 32 << 10
)

// writeLoop writes queued frames until the queue is empty (then it
// exits; the next push starts it again) or closed (then it closes the
// WebSocket with the queued close code).
func (c *conn) writeLoop() {
	typ := websocket.MessageText
	if c.codec.Binary() {
		typ = websocket.MessageBinary
	}
	var batch []frame
	for {
		fs, closing, code, reason := c.q.pop(batch[:0], batchFrames, batchBytes)
		if len(fs) == 0 {
			if closing {
				if code != 0 {
					c.ws.Close(code, reason)
				} else {
					c.ws.CloseNow()
				}
				c.q.drain()
				c.wsOnce.Do(func() { close(c.wsDone) })
			}
			return
		}
		if err := c.writeFrames(typ, fs); err != nil {
			c.q.close(0, "", false, false) // the loop pops the close next
		} else {
			for _, f := range fs {
				switch {
				case f.stream != "":
					c.q.wrote(f.stream, f.cursor)
				case f.ends != "":
					c.q.forget(f.ends)
				}
			}
		}
		clear(fs)
		batch = fs
	}
}

// writeFrames writes fs to the socket: framed into one batch and written
// at once within WriteTimeout.
func (c *conn) writeFrames(typ websocket.MessageType, fs []frame) error {
	c.wire.begin(time.Now().Add(c.srv.cfg.WriteTimeout))
	var err error
	for _, f := range fs {
		// No deadline of the library's own: the batch's write has one.
		if err = c.ws.Write(context.Background(), typ, f.data); err != nil {
			break
		}
	}
	if ferr := c.wire.flush(); err == nil {
		err = ferr
	}
	return err
}

// keepalive pings the peer; one that does not answer within the interval
// is cut (the read loop then ends and cleans up).
func (c *conn) keepalive() {
	d := c.srv.cfg.PingInterval
	ctx, cancel := context.WithTimeout(c.vals, d)
	err := c.ws.Ping(ctx)
	cancel()
	if err != nil {
		c.ws.CloseNow()
		return
	}
	c.pingMu.Lock()
	if !c.pingStopped {
		c.ping.Reset(d)
	}
	c.pingMu.Unlock()
}

func (c *conn) stopPing() {
	c.pingMu.Lock()
	c.pingStopped = true
	if c.ping != nil {
		c.ping.Stop()
	}
	c.pingMu.Unlock()
}

// quiesce is the first step of the server's graceful close of this
// connection: the request in progress finishes (its reply is queued), no
// other is processed, and a leave checkpoint is sealed for every open
// document it changed. Its subscriptions keep running, so that the
// version.created events of every connection's leave checkpoints reach
// them (finish).
func (c *conn) quiesce(ctx context.Context) {
	c.proc.Lock()
	c.stopped = true
	c.proc.Unlock()
	c.sealLeaves(ctx)
}

// finish is the last step of the graceful close: every subscription
// delivers what its stream holds now (the leave checkpoints sealed by
// quiesce included), then ends, and the socket closes resumable after the
// queued frames.
func (c *conn) finish(ctx context.Context) {
	c.flushSubs(ctx)
	c.stopAllSubs()
	c.closeWithResume(CloseShutdown, "server shutting down", true)
}

// failStop ends the connection after its store failed: the request in
// progress finishes (its reply is queued), nothing is sealed, and the
// socket closes with CloseStorageFailed after the queued frames.
func (c *conn) failStop(reason string) {
	c.proc.Lock()
	c.stopped = true
	c.proc.Unlock()
	c.stopAllSubs()
	c.mu.Lock()
	c.open = few[*openDoc]{}
	c.mu.Unlock()
	c.closeWith(CloseStorageFailed, reason, true)
}

// sealLeaves seals a leave checkpoint for every open document this
// connection changed, then forgets its open documents.
func (c *conn) sealLeaves(ctx context.Context) {
	c.mu.Lock()
	docs := c.open.items
	c.open = few[*openDoc]{}
	who := c.who
	c.mu.Unlock()
	for _, it := range docs {
		if doc, od := it.key, it.val; od.dirty {
			if _, err := c.srv.leaveCheckpoint(ctx, doc, who.User); err != nil {
				c.srv.log.Warn("sync: leave checkpoint failed", "doc", doc, "user", who.User, "err", err)
			}
		}
	}
}

// bucket is a token bucket.
type bucket struct {
	rate, burst, tokens float64
	last                time.Time
}

// take spends one token; when none is left it returns how long until one is.
func (b *bucket) take(now time.Time) (bool, time.Duration) {
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}
