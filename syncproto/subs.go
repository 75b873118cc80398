package syncproto

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Stream delivery.
//
// A subscription owns no goroutine while it is idle, so that an idle
// connection costs little memory. One watcher goroutine per stream (with
// at least one subscriber on this server) waits on the Hub and kicks
// every subscription of the stream; a kicked subscription runs a drain
// goroutine that reads the store after its cursor and queues what it
// finds, then exits. At most one drain runs per subscription, so events
// are queued in order and each once.
//
// Why no event is missed: the watcher takes a new Hub channel before it
// kicks, and a drain reads the store after the kick. An event committed
// before that read is found by it; one committed after it closes the
// channel the watcher holds, which kicks again.

// sub is one stream subscription of a connection.
type sub struct {
	c      *conn
	stream string
	skip   string        // session whose draft.updated events are not delivered
	stopCh chan struct{} // closed by stop; ends a drain waiting for queue room

	mu      sync.Mutex // guards the fields below
	cursor  uint64     // last event handled (queued or skipped)
	running bool       // a drain goroutine runs
	pending bool       // kicked while running: read again
	stopped bool
	idle    chan struct{} // closed when the running drain exits
	moved   *sync.Cond    // on mu; broadcast when cursor, running or stopped change
}

// watcher wakes the subscriptions of one stream.
type watcher struct {
	stream string
	subs   map[*sub]struct{} // guarded by Server.wmu
	stop   chan struct{}
}

func (s *Server) watch(sb *sub) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w := s.watchers[sb.stream]
	if w == nil {
		w = &watcher{stream: sb.stream, subs: map[*sub]struct{}{}, stop: make(chan struct{})}
		s.watchers[sb.stream] = w
		go s.runWatcher(w)
	}
	w.subs[sb] = struct{}{}
}

func (s *Server) unwatch(sb *sub) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w := s.watchers[sb.stream]
	if w == nil {
		return
	}
	delete(w.subs, sb)
	if len(w.subs) == 0 {
		close(w.stop)
		delete(s.watchers, sb.stream)
	}
}

func (s *Server) runWatcher(w *watcher) {
	var subs []*sub
	for {
		ch := s.cfg.Events.Wait(w.stream)
		s.wmu.Lock()
		subs = subs[:0]
		for sb := range w.subs {
			subs = append(subs, sb)
		}
		s.wmu.Unlock()
		for _, sb := range subs {
			sb.kick()
		}
		select {
		case <-ch:
		case <-w.stop:
			return
		}
	}
}

// kick makes the subscription read the store.
func (sb *sub) kick() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.stopped {
		return
	}
	if sb.running {
		sb.pending = true
		return
	}
	sb.running = true
	sb.idle = make(chan struct{})
	go sb.drain()
}

// catchUp returns once every event of the stream up to cursor to has
// been queued (or skipped) on the connection, or the subscription ended.
// The handler calls it before queuing a reply that must follow those
// events (docs/protocol.md, "Ordering"): the send queue is FIFO, so the
// reply reaches the client after them. The events are stored, so a
// drain reading the store finds them; it waits for queue room at most
// LagTimeout before the connection is closed as a slow consumer, which
// ends the subscription, so catchUp never waits longer than that.
func (sb *sub) catchUp(to uint64) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for sb.cursor < to && !sb.stopped {
		if sb.running {
			sb.pending = true
		} else {
			sb.running = true
			sb.idle = make(chan struct{})
			go sb.drain()
		}
		sb.moved.Wait()
	}
}

// stop ends the subscription and waits until its drain, if any, exited:
// nothing of the stream is queued after stop returns.
func (sb *sub) stop() {
	sb.mu.Lock()
	if sb.stopped {
		sb.mu.Unlock()
		return
	}
	sb.stopped = true
	close(sb.stopCh)
	sb.moved.Broadcast()
	var idle chan struct{}
	if sb.running {
		idle = sb.idle
	}
	sb.mu.Unlock()
	sb.c.srv.unwatch(sb)
	if idle != nil {
		<-idle
	}
}

func (sb *sub) drain() {
	for {
		ok := sb.deliver()
		sb.mu.Lock()
		if !ok {
			// The subscription ended itself (resync, error, slow consumer).
			sb.running = false
			if !sb.stopped {
				sb.stopped = true
				close(sb.stopCh)
			}
			close(sb.idle)
			sb.moved.Broadcast()
			sb.mu.Unlock()
			sb.c.srv.unwatch(sb)
			sb.c.forgetSub(sb)
			return
		}
		if !sb.pending || sb.stopped {
			sb.running = false
			close(sb.idle)
			sb.moved.Broadcast()
			sb.mu.Unlock()
			return
		}
		sb.pending = false
		sb.mu.Unlock()
	}
}

// deliver queues every stored event after the cursor. It returns false
// when the subscription must end.
func (sb *sub) deliver() bool {
	c := sb.c
	cfg := &c.srv.cfg
	sb.mu.Lock()
	cursor := sb.cursor
	sb.mu.Unlock()
	for {
		evs, err := cfg.Events.Read(c.ctx, sb.stream, cursor, cfg.ReplayBatch)
		if errors.Is(err, ErrTrimmed) {
			first, _ := cfg.Events.FirstRetained(c.ctx, sb.stream)
			last, _ := cfg.Events.Last(c.ctx, sb.stream)
			c.send(&Resync{Stream: sb.stream, After: cursor, First: first, Last: last})
			return false
		}
		if err != nil {
			if c.ctx.Err() == nil {
				c.srv.log.Error("sync: read stream failed", "stream", sb.stream, "err", err)
				c.send(&Error{Code: CodeInternal, Kind: CodeInternal.Kind().String(), Message: "reading " + sb.stream + " failed on the server; the subscription ended; subscribe again from your cursor"})
			}
			return false
		}
		for _, e := range evs {
			if e.Cursor <= cursor {
				continue // never twice
			}
			f, ok := c.eventFrame(sb, e)
			if ok {
				switch c.q.pushWait(f, cfg.LagTimeout, sb.stopCh) {
				case pushOK:
					cfg.Metrics.sent(e.Type)
				case pushFull:
					c.slow()
					return false
				case pushClosed:
					return false
				}
			}
			cursor = e.Cursor
			sb.mu.Lock()
			sb.cursor = cursor
			sb.moved.Broadcast()
			sb.mu.Unlock()
		}
		if len(evs) < cfg.ReplayBatch {
			return true
		}
	}
}

// startSub starts delivering stream after cursor.
func (c *conn) startSub(name string, after uint64) {
	sb := &sub{c: c, stream: name, cursor: after, stopCh: make(chan struct{})}
	sb.moved = sync.NewCond(&sb.mu)
	if strings.HasPrefix(name, "doc:") {
		sb.skip = c.session
	}
	c.mu.Lock()
	c.subs[name] = sb
	c.mu.Unlock()
	c.q.wrote(name, after)
	c.srv.watch(sb) // the watcher's first round kicks the replay
	sb.kick()
}

// stopSub ends a subscription; nothing of it is queued after it returns.
func (c *conn) stopSub(name string) bool {
	c.mu.Lock()
	sb := c.subs[name]
	delete(c.subs, name)
	c.mu.Unlock()
	if sb == nil {
		return false
	}
	sb.stop()
	return true
}

// catchUp makes every event of the document's stream stored now reach
// this connection's send queue before the caller queues its reply, when
// the connection follows that stream. So a draft.ack or draft.conflict of
// seq S follows every draft.updated below S, and a checkpoint.done or
// restore.done follows its version.created.
func (c *conn) catchUp(ctx context.Context, doc string) {
	name := DocStream(doc)
	c.mu.Lock()
	sb := c.subs[name]
	c.mu.Unlock()
	if sb == nil {
		return
	}
	last, err := c.srv.cfg.Events.Last(ctx, name)
	if err != nil {
		// The reply still goes out; the events follow it. A client that
		// applies the skip rule may then miss one, so say so loudly.
		c.srv.log.Error("sync: read stream head before a reply failed", "stream", name, "err", err)
		return
	}
	sb.catchUp(last)
}

// forgetSub drops a subscription that ended itself.
func (c *conn) forgetSub(sb *sub) {
	c.mu.Lock()
	if c.subs[sb.stream] == sb {
		delete(c.subs, sb.stream)
	}
	c.mu.Unlock()
}

func (c *conn) stopAllSubs() {
	c.mu.Lock()
	names := make([]string, 0, len(c.subs))
	for n := range c.subs {
		names = append(names, n)
	}
	c.mu.Unlock()
	for _, n := range names {
		c.stopSub(n)
	}
}
