package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/syncproto"
)

// Options configure Dial.
type Options struct {
	// Token is the bearer token.
	Token string
	// TokenInHello sends the token in the hello message (as browsers
	// must) instead of the Authorization header of the upgrade.
	TokenInHello bool
	// Subprotocol is syncproto.SubprotocolMsgpack (default) or
	// syncproto.SubprotocolJSON.
	Subprotocol string
	// Name identifies the client in the server's logs.
	Name string
	// HTTPClient dials; default http.DefaultClient.
	HTTPClient *http.Client
	// OnEvent receives every stream event, in order, on the client's read
	// goroutine (a slow callback slows reading). Cursors are updated
	// before it is called.
	OnEvent func(*syncproto.Event)
	// OnResync receives resync notices that end a subscription.
	OnResync func(*syncproto.Resync)
	// OnError receives error messages that answer no request.
	OnError func(*syncproto.Error)
}

// Client is one sync connection. Its methods are safe for concurrent use.
type Client struct {
	ws    *websocket.Conn
	codec syncproto.Codec
	opts  Options

	mu      sync.Mutex // guards the fields below
	nextID  uint64
	pending map[string]chan syncproto.Message
	cursors map[string]uint64
	welcome syncproto.Welcome

	done     chan struct{} // closed when the read loop ends
	closeErr error         // why it ended; valid after done
}

// ResyncError is a resync answer to Subscribe: the cursor is older than
// retention.
type ResyncError struct{ *syncproto.Resync }

func (e *ResyncError) Error() string {
	return fmt.Sprintf("stream %s: cursor %d is not retained (first %d, last %d); reload and subscribe after %d",
		e.Stream, e.After, e.First, e.Last, e.Last)
}

// CloseError reports how the server closed the connection.
type CloseError struct {
	Code   websocket.StatusCode
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("sync connection closed: %d %s", int(e.Code), e.Reason)
}

// Resumable reports whether reconnecting and resuming is expected to work.
func (e *CloseError) Resumable() bool { return syncproto.Resumable(e.Code) }

// Dial connects to url (ws:// or wss://, path /v1/sync), authenticates and
// returns when the server's welcome arrived.
func Dial(ctx context.Context, url string, o Options) (*Client, error) {
	if o.Subprotocol == "" {
		o.Subprotocol = syncproto.SubprotocolMsgpack
	}
	codec := syncproto.CodecFor(o.Subprotocol)
	if codec == nil {
		return nil, fmt.Errorf("client: unknown subprotocol %q", o.Subprotocol)
	}
	h := http.Header{}
	if o.Token != "" && !o.TokenInHello {
		h.Set("Authorization", "Bearer "+o.Token)
	}
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPClient: o.HTTPClient, HTTPHeader: h, Subprotocols: []string{o.Subprotocol},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", url, err)
	}
	if ws.Subprotocol() != o.Subprotocol {
		ws.CloseNow()
		return nil, fmt.Errorf("client: server did not accept subprotocol %s", o.Subprotocol)
	}
	ws.SetReadLimit(64 << 20)
	c := &Client{ws: ws, codec: codec, opts: o, pending: map[string]chan syncproto.Message{},
		cursors: map[string]uint64{}, done: make(chan struct{})}
	go c.readLoop()
	hello := &syncproto.Hello{Client: o.Name}
	if o.TokenInHello {
		hello.Token = o.Token
	}
	r, err := c.Request(ctx, hello)
	if err != nil {
		c.ws.CloseNow()
		return nil, err
	}
	w, ok := r.(*syncproto.Welcome)
	if !ok {
		c.ws.CloseNow()
		return nil, fmt.Errorf("client: hello answered with %s", r.Env().Type)
	}
	c.mu.Lock()
	c.welcome = *w
	c.mu.Unlock()
	return c, nil
}

// Welcome returns the server's welcome.
func (c *Client) Welcome() syncproto.Welcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.welcome
}

// Cursor returns the last cursor received of one stream: what to resume
// from after a disconnect.
func (c *Client) Cursor(stream string) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.cursors[stream]
	return v, ok
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended (a *CloseError when the server
// closed it with a code); nil while it is open.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.closeErr
	default:
		return nil
	}
}

// Close ends the connection normally.
func (c *Client) Close() error {
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.done
	return err
}

// CloseNow cuts the connection without a close handshake (a network drop).
func (c *Client) CloseNow() {
	c.ws.CloseNow()
	<-c.done
}

func (c *Client) readLoop() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				c.closeErr = &CloseError{Code: ce.Code, Reason: ce.Reason}
			} else {
				c.closeErr = &CloseError{Code: websocket.StatusAbnormalClosure, Reason: err.Error()}
			}
			c.mu.Lock()
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		m, err := c.codec.Decode(data, true)
		if err != nil {
			continue // a newer server may send what this client does not know
		}
		c.dispatch(m)
	}
}

func (c *Client) dispatch(m syncproto.Message) {
	c.mu.Lock()
	switch m := m.(type) {
	case *syncproto.Event:
		c.cursors[m.Stream] = m.Cursor
		c.mu.Unlock()
		if c.opts.OnEvent != nil {
			c.opts.OnEvent(m)
		}
		return
	case *syncproto.Snapshot:
		c.cursors[m.Stream] = m.Cursor
	case *syncproto.Subscribed:
		c.cursors[m.Stream] = m.Cursor
	case *syncproto.Resync:
		delete(c.cursors, m.Stream)
	}
	id := m.Env().ID
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- m
		return
	}
	switch m := m.(type) {
	case *syncproto.Resync:
		if c.opts.OnResync != nil {
			c.opts.OnResync(m)
		}
	case *syncproto.Error:
		if c.opts.OnError != nil {
			c.opts.OnError(m)
		}
	}
}

func (c *Client) write(ctx context.Context, m syncproto.Message) error {
	b, err := c.codec.Encode(m)
	if err != nil {
		return err
	}
	typ := websocket.MessageText
	if c.codec.Binary() {
		typ = websocket.MessageBinary
	}
	if err := c.ws.Write(ctx, typ, b); err != nil {
		// A failed write means the connection is gone; the read loop is
		// about to learn why (a close frame the server sent first, such
		// as 4001 for a bad token). Report that rather than the write's
		// own error.
		t := time.NewTimer(2 * time.Second)
		defer t.Stop()
		select {
		case <-c.done:
			return c.closeErr
		case <-ctx.Done():
		case <-t.C:
		}
		return fmt.Errorf("client: send %s: %w", m.Env().Type, err)
	}
	return nil
}

// Request sends m and waits for its reply. An error reply is returned as
// *syncproto.RemoteError; a closed connection as *CloseError.
func (c *Client) Request(ctx context.Context, m syncproto.Message) (syncproto.Message, error) {
	env := m.Env()
	env.Type = syncproto.TypeOf(m)
	ch := make(chan syncproto.Message, 1)
	c.mu.Lock()
	c.nextID++
	env.ID = strconv.FormatUint(c.nextID, 10)
	c.pending[env.ID] = ch
	c.mu.Unlock()
	select {
	case <-c.done:
		return nil, c.closeErr
	default:
	}
	if err := c.write(ctx, m); err != nil {
		c.forget(env.ID)
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, c.closeErr
		}
		if e, isErr := r.(*syncproto.Error); isErr {
			return nil, &syncproto.RemoteError{Code: e.Code, Kind: e.Kind, Message: e.Message, ID: e.ID, Problems: e.Problems, RetryAfterMs: e.RetryAfterMs}
		}
		return r, nil
	case <-ctx.Done():
		c.forget(env.ID)
		return nil, fmt.Errorf("client: %s %s: %w", env.Type, env.ID, ctx.Err())
	}
}

func (c *Client) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func expect[T syncproto.Message](r syncproto.Message, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	t, ok := r.(T)
	if !ok {
		return zero, fmt.Errorf("client: unexpected reply %s", r.Env().Type)
	}
	return t, nil
}

// Open opens doc for editing and returns its snapshot; the document's
// events follow through OnEvent.
func (c *Client) Open(ctx context.Context, doc string) (*syncproto.Snapshot, error) {
	return expect[*syncproto.Snapshot](c.Request(ctx, &syncproto.Open{Doc: doc}))
}

// Leave stops editing doc.
func (c *Client) Leave(ctx context.Context, doc string) (*syncproto.Left, error) {
	return expect[*syncproto.Left](c.Request(ctx, &syncproto.Leave{Doc: doc}))
}

// Save saves block-level changes against baseSeq. A conflict is a
// *folio.ConflictError.
func (c *Client) Save(ctx context.Context, doc string, baseSeq uint64, changes ...syncproto.Change) (*syncproto.Ack, error) {
	return c.SaveMessage(ctx, &syncproto.Save{Doc: doc, BaseSeq: baseSeq, Changes: changes})
}

// SaveMessage sends a prepared save (full body or attrs).
func (c *Client) SaveMessage(ctx context.Context, s *syncproto.Save) (*syncproto.Ack, error) {
	r, err := c.Request(ctx, s)
	if err != nil {
		return nil, err
	}
	switch r := r.(type) {
	case *syncproto.Ack:
		return r, nil
	case *syncproto.Conflict:
		return nil, r.ConflictError()
	}
	return nil, fmt.Errorf("client: unexpected reply %s", r.Env().Type)
}

// Checkpoint asks for a checkpoint with reason ("" = manual).
func (c *Client) Checkpoint(ctx context.Context, doc, reason, message string) (*syncproto.CheckpointDone, error) {
	return expect[*syncproto.CheckpointDone](c.Request(ctx, &syncproto.Checkpoint{Doc: doc, Reason: reason, Message: message}))
}

// Restore restores version label of doc.
func (c *Client) Restore(ctx context.Context, doc, label string) (*syncproto.RestoreDone, error) {
	return expect[*syncproto.RestoreDone](c.Request(ctx, &syncproto.Restore{Doc: doc, Label: label}))
}

// Subscribe follows a stream: after nil means only new events. A cursor
// older than retention is a *ResyncError.
func (c *Client) Subscribe(ctx context.Context, stream string, after *uint64) (*syncproto.Subscribed, error) {
	r, err := c.Request(ctx, &syncproto.Subscribe{Stream: stream, After: after})
	if err != nil {
		return nil, err
	}
	switch r := r.(type) {
	case *syncproto.Subscribed:
		return r, nil
	case *syncproto.Resync:
		return nil, &ResyncError{r}
	}
	return nil, fmt.Errorf("client: unexpected reply %s", r.Env().Type)
}

// Unsubscribe stops following a stream.
func (c *Client) Unsubscribe(ctx context.Context, stream string) error {
	_, err := expect[*syncproto.Unsubscribed](c.Request(ctx, &syncproto.Unsubscribe{Stream: stream}))
	return err
}

// Ping measures a round trip.
func (c *Client) Ping(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	_, err := expect[*syncproto.Pong](c.Request(ctx, &syncproto.Ping{}))
	return time.Since(start), err
}
