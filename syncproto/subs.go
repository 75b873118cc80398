package syncproto

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Stream delivery.
//
// One watcher per stream (with at least one subscriber on this server)
// fans new events out: a round reads the events after the last one it
// read from the store once, encodes each once per codec, and queues the
// same bytes on every subscription that is live (caught up), without
// waiting. A subscription is live once it has caught up; before that
// (a replay from an old cursor) and whenever its queue is too full for a
// round, it is lagging: a drain goroutine of its own reads the store
// after its cursor, encodes for its connection and waits for queue room
// (LagTimeout, then the connection is closed as a slow consumer), until
// it has caught up with the rounds and turns live again. So replays read
// the store, live delivery reads it once per event for all, and a slow
// reader never holds up the others.
//
// Order and exactly-once: a subscription's events are queued either by
// rounds (while live) or by its drain (while lagging), never both; each
// is queued only when its cursor is above the subscription's, which
// advances with every event queued or skipped. The switch to live happens
// under the watcher's round lock, when the drain's cursor has reached the
// last event the rounds read, so no event falls between the two.
//
// Why no event is missed: a round clears the watcher's pending mark
// before it reads the store. An event committed before that read is
// found by it; one committed after it sets the mark again (the stream's
// notice, Events.Watch), which runs another round.
//
// Idle cost: a quiet stream's watcher owns no goroutine, nor does a live
// subscription; a connection with nothing to write has none either
// (sendQueue.wakeLocked).

// sub is one stream subscription of a connection.
type sub struct {
	c      *conn
	w      *watcher
	stream string
	skip   string        // session whose draft.updated events are not delivered
	stopCh chan struct{} // closed by stop; ends a drain waiting for queue room

	mu      sync.Mutex // guards the fields below
	cursor  uint64     // last event handled (queued or skipped)
	live    bool       // rounds queue its events; else its drain does
	running bool       // a drain goroutine runs
	stopped bool
	idle    chan struct{} // closed when the running drain exits
	moved   *sync.Cond    // on mu; broadcast when cursor, running or stopped change
}

// watcher follows one stream for the subscriptions of this server. It
// owns no goroutine while the stream is quiet: the stream's notice
// (Events.Watch) marks a round pending and starts a goroutine for the
// rounds when none runs, and that goroutine ends when no round is
// pending.
type watcher struct {
	stream  string
	subs    map[*sub]struct{} // guarded by Server.wmu
	unwatch func()            // ends the stream's notices

	mu      sync.Mutex // guards the fields below
	pending bool       // a notice came since the last round began
	running bool       // a goroutine runs rounds
	stopped bool       // the last subscription left

	round sync.Mutex // held by the round in progress; guards last
	last  uint64     // the last event a round read (or the stream's last when the watcher started)
}

// watch registers sb with its stream's watcher, starting one when it is
// the stream's first subscription.
func (s *Server) watch(sb *sub) {
	s.wmu.Lock()
	if w := s.watchers[sb.stream]; w != nil {
		w.subs[sb] = struct{}{}
		sb.w = w
		s.wmu.Unlock()
		return
	}
	s.wmu.Unlock()
	// A new watcher, made outside the server's lock (reading the stream's
	// last event may read the store): notices first, then the last
	// event, so that an event after that read is noticed. Until the
	// first round, a subscription replays from the store (it starts
	// lagging).
	nw := &watcher{stream: sb.stream, subs: map[*sub]struct{}{}}
	nw.unwatch = s.cfg.Events.Watch(sb.stream, func() { s.kick(nw) })
	last, err := s.cfg.Events.Last(context.Background(), sb.stream)
	if err != nil {
		last = sb.cursor
	}
	nw.last = last
	s.wmu.Lock()
	w := s.watchers[sb.stream]
	if w == nil { // (else another subscription made one meanwhile)
		w = nw
		s.watchers[sb.stream] = w
	}
	w.subs[sb] = struct{}{}
	sb.w = w
	s.wmu.Unlock()
	if w != nw {
		nw.stop()
	}
}

func (s *Server) unwatch(sb *sub) {
	s.wmu.Lock()
	w := s.watchers[sb.stream]
	if w == nil || w != sb.w {
		s.wmu.Unlock()
		return
	}
	delete(w.subs, sb)
	last := len(w.subs) == 0
	if last {
		delete(s.watchers, sb.stream)
	}
	s.wmu.Unlock()
	if last {
		w.stop()
	}
}

// stop ends the watcher's notices; no round starts after it.
func (w *watcher) stop() {
	w.unwatch()
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}

// kick is the stream's notice: a round is pending; a goroutine runs it
// unless one runs already (it runs another round after its current one).
func (s *Server) kick(w *watcher) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = true
	if w.running || w.stopped {
		return
	}
	w.running = true
	s.wwg.Add(1)
	go s.runRounds(w)
}

// runRounds runs rounds while one is pending.
func (s *Server) runRounds(w *watcher) {
	defer s.wwg.Done()
	for {
		w.mu.Lock()
		if !w.pending || w.stopped {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.pending = false
		w.mu.Unlock()
		s.fanout(w)
	}
}

// fanout runs one round: every event stored after the last one read is
// encoded once per codec and queued on every live subscription.
func (s *Server) fanout(w *watcher) {
	w.round.Lock()
	defer w.round.Unlock()
	var subs []*sub
	for {
		evs, err := s.cfg.Events.Read(context.Background(), w.stream, w.last, s.cfg.ReplayBatch)
		if errors.Is(err, ErrTrimmed) {
			// Trimmed before this round read it: every subscription must
			// find out from the store (its drain answers resync).
			subs = subs[:0]
			s.wmu.Lock()
			for sb := range w.subs {
				subs = append(subs, sb)
			}
			s.wmu.Unlock()
			for _, sb := range subs {
				sb.lag()
			}
			if last, err := s.cfg.Events.Last(context.Background(), w.stream); err == nil {
				w.last = last
			}
			return
		}
		if err != nil {
			s.log.Error("sync: read stream failed", "stream", w.stream, "err", err)
			return
		}
		if len(evs) == 0 {
			return
		}
		s.wmu.Lock()
		subs = subs[:0]
		for sb := range w.subs {
			subs = append(subs, sb)
		}
		s.wmu.Unlock()
		for _, e := range evs {
			if e.Cursor <= w.last {
				continue
			}
			var enc [2][]byte // by codec: 0 JSON, 1 MessagePack; encoded on first use
			var failed [2]bool
			frameFor := func(c Codec) ([]byte, bool) {
				i := 0
				if c.Binary() {
					i = 1
				}
				if enc[i] == nil && !failed[i] {
					b, err := encodeEvent(c, w.stream, e)
					if err != nil {
						s.log.Error("sync: encode event failed", "stream", w.stream, "cursor", e.Cursor, "err", err)
						failed[i] = true
					}
					enc[i] = b
				}
				return enc[i], !failed[i]
			}
			for _, sb := range subs {
				sb.offer(e, frameFor)
			}
			w.last = e.Cursor
		}
		if len(evs) < s.cfg.ReplayBatch {
			return
		}
	}
}

// encodeEvent encodes a stream event.
func encodeEvent(c Codec, stream string, e StreamEvent) ([]byte, error) {
	return c.Encode(&Event{Envelope: Envelope{Type: e.Type}, Stream: stream, Cursor: e.Cursor, Time: e.Time, Data: e.Data})
}

// skips reports whether the subscription does not get e: the
// draft.updated of its own connection's save.
func (sb *sub) skips(e StreamEvent) bool {
	du, ok := e.Data.(*DraftUpdated)
	return ok && sb.skip != "" && du.Session == sb.skip
}

// offer queues e on a live subscription without waiting; a queue without
// room makes it lagging (its drain takes over from its cursor).
func (sb *sub) offer(e StreamEvent, frameFor func(Codec) ([]byte, bool)) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if !sb.live || sb.stopped || e.Cursor <= sb.cursor {
		return
	}
	if !sb.skips(e) {
		data, ok := frameFor(sb.c.codec)
		if ok {
			switch sb.c.q.push(frame{data: data, stream: sb.stream, cursor: e.Cursor}, true) {
			case pushOK:
				sb.c.srv.cfg.Metrics.sent(e.Type)
			case pushFull:
				sb.live = false
				sb.startDrainLocked()
				return
			case pushClosed:
				return
			}
		}
	}
	sb.cursor = e.Cursor
	sb.moved.Broadcast()
}

// lag makes the subscription read the store itself.
func (sb *sub) lag() {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.live = false
	sb.startDrainLocked()
}

func (sb *sub) startDrainLocked() {
	if sb.running || sb.stopped {
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
// reply reaches the client after them. A round brings live subscriptions
// there; a lagging one waits for its drain, which waits for queue room
// at most LagTimeout before the connection is closed as a slow consumer
// (ending the subscription), so catchUp never waits longer than that.
func (sb *sub) catchUp(to uint64) {
	sb.mu.Lock()
	done := sb.cursor >= to || sb.stopped
	sb.mu.Unlock()
	if done {
		return // a round or the drain got there first
	}
	sb.c.srv.fanout(sb.w)
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for sb.cursor < to && !sb.stopped {
		// Live and still short (the round could not read the store):
		// the drain reads it.
		sb.live = false
		sb.startDrainLocked()
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
	// A round in progress checks stopped under mu: it queues nothing more.
}

// drain catches a lagging subscription up from the store, then turns it
// live under the watcher's round lock.
func (sb *sub) drain() {
	for {
		ok := sb.deliver()
		if !ok {
			// The subscription ended itself (resync, error, slow consumer).
			sb.mu.Lock()
			sb.running = false
			if !sb.stopped {
				sb.stopped = true
				close(sb.stopCh)
			}
			close(sb.idle)
			sb.idle = nil
			sb.moved.Broadcast()
			sb.mu.Unlock()
			sb.c.srv.unwatch(sb)
			sb.c.forgetSub(sb)
			return
		}
		w := sb.w
		w.round.Lock()
		sb.mu.Lock()
		done := sb.stopped || sb.cursor >= w.last
		if done {
			sb.live = !sb.stopped
			sb.running = false
			close(sb.idle)
			sb.idle = nil
			sb.moved.Broadcast()
		}
		sb.mu.Unlock()
		w.round.Unlock()
		if done {
			return
		}
		// Rounds read more meanwhile: read it from the store too.
	}
}

// deliver queues every stored event after the cursor, waiting for queue
// room. It returns false when the subscription must end.
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
			if !sb.skips(e) {
				b, err := encodeEvent(c.codec, sb.stream, e)
				if err != nil {
					c.srv.log.Error("sync: encode event failed", "stream", sb.stream, "cursor", e.Cursor, "err", err)
				} else {
					switch c.q.pushWait(frame{data: b, stream: sb.stream, cursor: e.Cursor}, cfg.LagTimeout, sb.stopCh) {
					case pushOK:
						cfg.Metrics.sent(e.Type)
					case pushFull:
						c.slow()
						return false
					case pushClosed:
						return false
					}
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

// startSub starts delivering stream after cursor: the subscription starts
// lagging, its drain replays from the store and turns it live.
func (c *conn) startSub(name string, after uint64) {
	sb := &sub{c: c, stream: name, cursor: after, stopCh: make(chan struct{})}
	sb.moved = sync.NewCond(&sb.mu)
	if strings.HasPrefix(name, "doc:") {
		sb.skip = c.session
	}
	c.mu.Lock()
	c.subs.set(name, sb)
	c.mu.Unlock()
	c.q.wrote(name, after)
	c.srv.watch(sb)
	sb.mu.Lock()
	sb.startDrainLocked()
	sb.mu.Unlock()
}

// stopSub ends a subscription; nothing of it is queued after it returns.
func (c *conn) stopSub(name string) bool {
	c.mu.Lock()
	sb := c.subs.get(name)
	c.subs.del(name)
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
	sb := c.subs.get(name)
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
	if c.subs.get(sb.stream) == sb {
		c.subs.del(sb.stream)
	}
	c.mu.Unlock()
}

func (c *conn) stopAllSubs() {
	c.mu.Lock()
	names := make([]string, 0, c.subs.len())
	for _, it := range c.subs.items {
		names = append(names, it.key)
	}
	c.mu.Unlock()
	for _, n := range names {
		c.stopSub(n)
	}
}

// flushSubs makes every subscription deliver what its stream holds now.
func (c *conn) flushSubs(ctx context.Context) {
	c.mu.Lock()
	subs := make([]*sub, 0, c.subs.len())
	for _, it := range c.subs.items {
		subs = append(subs, it.val)
	}
	c.mu.Unlock()
	for _, sb := range subs {
		last, err := c.srv.cfg.Events.Last(ctx, sb.stream)
		if err != nil {
			continue // nothing more can be delivered from it
		}
		// catchUp waits at most about LagTimeout (a slow consumer is
		// closed then); a shutdown deadline comes first.
		done := make(chan struct{})
		go func() {
			sb.catchUp(last)
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}
