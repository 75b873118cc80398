package stream

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/foliodev/folio/internal/kv"
	"github.com/vmihailenco/msgpack/v5"
)

var (
	// ErrTrimmed is returned by Read when events after the cursor were trimmed.
	ErrTrimmed = errors.New("stream: cursor is older than retention")
	// ErrNotFound is returned by Get when the event does not exist.
	ErrNotFound = errors.New("stream: no such event")
)

// Event is one persisted event. Data is the event's payload as msgpack
// (decode it with kv.Unmarshal into the type its Type names).
//
// Ref marks an event stored by reference (AppendEventAs): Data is then
// the stored form, which names what the payload is made of elsewhere in
// the store instead of holding it, Time is 0, and the stream's owner
// turns it back into the event before handing it on (repo.Repo.ReadEvents
// for document streams). Events a Hub holds are never by reference.
type Event struct {
	Stream string             `msgpack:"-" json:"stream"`
	Seq    uint64             `msgpack:"-" json:"seq"`
	Type   string             `msgpack:"type" json:"type"`
	Time   int64              `msgpack:"time" json:"time"` // Unix milliseconds
	Data   msgpack.RawMessage `msgpack:"data,omitempty" json:"-"`
	Ref    bool               `msgpack:"ref,omitempty" json:"-"`
}

func prefix(stream string) []byte {
	k := make([]byte, 0, len(kv.PrefixEvent)+len(stream)+1+8)
	k = append(k, kv.PrefixEvent...)
	k = append(k, stream...)
	return append(k, 0)
}

// Key is the Pebble key of event seq of stream.
func Key(stream string, seq uint64) []byte { return kv.Uint64(prefix(stream), seq) }

// metaKey holds a stream's trim point (first retained seq).
func metaKey(stream string) []byte { return kv.TableKey("streammeta", stream) }

// Last returns the last sequence number of stream (0 when empty or never written).
func Last(r kv.Reader, stream string) (uint64, error) {
	p := prefix(stream)
	it, err := r.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if it.Last() {
		return kv.ParseUint64(it.Key()), nil
	}
	if err := it.Error(); err != nil {
		return 0, err
	}
	// Every event may have been trimmed: the trim point remembers where we were.
	v, err := kv.Get(r, metaKey(stream))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return kv.ParseUint64(v) - 1, nil
}

// Append adds event seq of stream to b. data is encoded with kv.Marshal.
func Append(b *kv.Batch, stream string, seq uint64, typ string, timeMs int64, data any) error {
	_, err := AppendEvent(b, stream, seq, typ, timeMs, data)
	return err
}

// AppendEvent is Append; it returns the event as Read will return it, for
// Hub.Publish.
func AppendEvent(b *kv.Batch, stream string, seq uint64, typ string, timeMs int64, data any) (Event, error) {
	var raw []byte
	if data != nil {
		var err error
		if raw, err = kv.Marshal(data); err != nil {
			return Event{}, fmt.Errorf("stream: encode %s event: %w", typ, err)
		}
	}
	e := Event{Stream: stream, Seq: seq, Type: typ, Time: timeMs, Data: raw}
	v, err := kv.Marshal(e)
	if err != nil {
		return Event{}, err
	}
	return e, b.Set(Key(stream, seq), v)
}

// AppendEventAs is AppendEvent of an event whose payload is data but
// which is stored as stored, by reference (Event.Ref), and without its
// time: the owner restores both, from what the reference names. It
// returns the event with data and time, as readers must be given it, for
// Hub.Publish.
func AppendEventAs(b *kv.Batch, stream string, seq uint64, typ string, timeMs int64, data, stored any) (Event, error) {
	raw, err := kv.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("stream: encode %s event: %w", typ, err)
	}
	ref, err := kv.Marshal(stored)
	if err != nil {
		return Event{}, fmt.Errorf("stream: encode %s event: %w", typ, err)
	}
	v, err := kv.Marshal(refEvent{Type: typ, Data: ref, Ref: true})
	if err != nil {
		return Event{}, err
	}
	return Event{Stream: stream, Seq: seq, Type: typ, Time: timeMs, Data: raw}, b.Set(Key(stream, seq), v)
}

// refEvent is how an event stored by reference is encoded: an Event
// without a time.
type refEvent struct {
	Type string             `msgpack:"type"`
	Data msgpack.RawMessage `msgpack:"data,omitempty"`
	Ref  bool               `msgpack:"ref"`
}

// Get returns event seq of stream as stored (ErrNotFound: no such event,
// or trimmed).
func Get(r kv.Reader, stream string, seq uint64) (Event, error) {
	v, err := kv.Get(r, Key(stream, seq))
	if errors.Is(err, kv.ErrNotFound) {
		return Event{}, fmt.Errorf("%w: event %d of %s", ErrNotFound, seq, stream)
	}
	if err != nil {
		return Event{}, err
	}
	var e Event
	if err := kv.Unmarshal(v, &e); err != nil {
		return Event{}, fmt.Errorf("stream: decode %s event: %w", stream, err)
	}
	e.Stream, e.Seq = stream, seq
	return e, nil
}

// Read returns up to limit events of stream with seq > after, in order.
// It returns ErrTrimmed when the event after the cursor no longer exists.
func Read(r kv.Reader, stream string, after uint64, limit int) ([]Event, error) {
	first, err := FirstRetained(r, stream)
	if err != nil {
		return nil, err
	}
	if after+1 < first {
		return nil, fmt.Errorf("%w: %s after %d, first retained %d", ErrTrimmed, stream, after, first)
	}
	p := prefix(stream)
	it, err := r.NewIter(&kv.IterOptions{LowerBound: Key(stream, after+1), UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Event
	for it.First(); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
		var e Event
		if err := kv.Unmarshal(it.Value(), &e); err != nil {
			return nil, fmt.Errorf("stream: decode %s event: %w", stream, err)
		}
		e.Stream, e.Seq = stream, kv.ParseUint64(it.Key())
		out = append(out, e)
	}
	return out, it.Error()
}

// FirstRetained returns the first seq that Trim kept (1 when never trimmed).
func FirstRetained(r kv.Reader, stream string) (uint64, error) {
	v, err := kv.Get(r, metaKey(stream))
	if errors.Is(err, kv.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	return kv.ParseUint64(v), nil
}

// Trim adds to b the deletion of every event of stream before seq keep and
// records keep as the first retained seq.
func Trim(b *kv.Batch, stream string, keep uint64) error {
	if keep <= 1 {
		return nil
	}
	if err := b.DeleteRange(Key(stream, 0), Key(stream, keep)); err != nil {
		return err
	}
	return b.Set(metaKey(stream), kv.Uint64(nil, keep))
}

// Hub wakes readers waiting for new events, and keeps the most recent
// events its writers published of each busy stream (the tail), so that
// live readers — a fan-out round, the head of a stream asked before a
// reply — are answered from memory instead of the store.
//
// The tail is a cache, never the truth: it holds a contiguous run of
// committed events and answers a read only when the run holds every event
// after the reader's cursor that the hub has seen; anything older comes
// from the store. A writer publishes its batch's events after the batch
// committed, under the lock that orders the stream's appends (Publish);
// a writer that only wakes readers (Notify) makes the hub forget the
// stream's tail, since it has not seen what was written. So a read from
// the tail is a read of the store at the moment of the last publish,
// and a later commit wakes the reader as before.
type Hub struct {
	mu      sync.Mutex
	waiters map[string]chan struct{} // closed and replaced on every Notify or Publish
	watches map[string][]*watch      // called on every Notify or Publish
	tails   map[string]*tail
	bytes   int // of every tail's events
}

// watch is one Watch registration.
type watch struct{ fn func() }

// tail is a contiguous run of a stream's most recent published events.
type tail struct {
	evs   []Event // evs[i].Seq == evs[0].Seq+i
	bytes int
}

// Bounds of the hub's tails. A live reader needs only the events of the
// last few commits; replays read the store.
const (
	tailEvents     = 8        // events kept per stream
	tailEventBytes = 64 << 10 // a bigger event is not kept (its stream's tail is dropped)
	tailBytes      = 16 << 20 // all tails together; over it, whole tails are dropped
)

// NewHub returns an empty Hub.
func NewHub() *Hub {
	return &Hub{waiters: map[string]chan struct{}{}, watches: map[string][]*watch{}, tails: map[string]*tail{}}
}

// Watch calls fn at every later Notify or Publish of stream, until stop
// is called; after stop returns fn is not called again. It is Wait for a
// reader that owns no goroutine while the stream is quiet: fn runs on the
// writer's goroutine, under the hub's lock, so it must return at once
// (start the reading elsewhere) and must not call the hub. As with Wait,
// register before reading so that no event slips between the two.
func (h *Hub) Watch(stream string, fn func()) (stop func()) {
	w := &watch{fn: fn}
	h.mu.Lock()
	h.watches[stream] = append(h.watches[stream], w)
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		ws := h.watches[stream]
		for i, x := range ws {
			if x == w {
				ws = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(h.watches, stream)
		} else {
			h.watches[stream] = ws
		}
	}
}

// Wait returns a channel closed at the next Notify or Publish of stream.
// Take it before reading, so that no event slips between read and wait.
func (h *Hub) Wait(stream string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.waiters[stream]
	if !ok {
		c = make(chan struct{})
		h.waiters[stream] = c
	}
	return c
}

// Notify wakes every reader waiting on stream and forgets its tail. Call
// it after the batch holding new events (or a Trim) has committed, when
// the writer does not Publish them.
func (h *Hub) Notify(stream string) {
	h.mu.Lock()
	h.dropLocked(stream)
	h.wakeLocked(stream)
	h.mu.Unlock()
}

// Publish records evs, the events of stream that a batch appended (in
// order, with their Seq, Type, Time and Data as appended) and wakes the
// stream's readers. firstRetained is the stream's first retained event
// when the batch trimmed it (0: not trimmed). Call it after the batch
// committed and before releasing the lock that orders the stream's
// appends.
func (h *Hub) Publish(stream string, firstRetained uint64, evs ...Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	defer h.wakeLocked(stream)
	if len(evs) == 0 {
		return
	}
	t := h.tails[stream]
	if t != nil {
		last := t.evs[len(t.evs)-1].Seq
		switch {
		case evs[0].Seq <= last:
			// Published out of order: the hub cannot tell what is
			// newest, so it forgets the stream.
			h.dropLocked(stream)
			return
		case evs[0].Seq > last+1:
			// A gap (events the hub was not shown): start afresh.
			h.dropLocked(stream)
			t = nil
		}
	}
	if t == nil {
		t = &tail{}
		h.tails[stream] = t
	}
	for _, e := range evs {
		n := len(e.Data) + len(e.Type) + 64
		if n > tailEventBytes {
			h.dropLocked(stream)
			return
		}
		e.Stream = stream
		t.evs = append(t.evs, e)
		t.bytes += n
		h.bytes += n
	}
	drop := max(len(t.evs)-tailEvents, 0)
	for drop < len(t.evs) && t.evs[drop].Seq < firstRetained {
		drop++
	}
	if drop > 0 {
		for _, e := range t.evs[:drop] {
			n := len(e.Data) + len(e.Type) + 64
			t.bytes -= n
			h.bytes -= n
		}
		t.evs = append(t.evs[:0:0], t.evs[drop:]...)
	}
	if len(t.evs) == 0 {
		h.dropLocked(stream)
		return
	}
	for name := range h.tails {
		if h.bytes <= tailBytes {
			break
		}
		if name != stream {
			h.dropLocked(name) // map order: an arbitrary other stream
		}
	}
}

func (h *Hub) dropLocked(stream string) {
	if t := h.tails[stream]; t != nil {
		h.bytes -= t.bytes
		delete(h.tails, stream)
	}
}

func (h *Hub) wakeLocked(stream string) {
	for _, w := range h.watches[stream] {
		w.fn()
	}
	if c, ok := h.waiters[stream]; ok {
		delete(h.waiters, stream)
		close(c)
	}
}

// Read is stream.Read, answered from the stream's tail when the tail holds
// the event after the cursor (or the cursor is at its end), and from r
// otherwise.
func (h *Hub) Read(r kv.Reader, stream string, after uint64, limit int) ([]Event, error) {
	h.mu.Lock()
	if t := h.tails[stream]; t != nil {
		first, last := t.evs[0].Seq, t.evs[len(t.evs)-1].Seq
		if after+1 >= first && after <= last {
			var out []Event // nil when nothing is new, as from the store
			if evs := t.evs[after+1-first:]; len(evs) > 0 {
				if limit > 0 && len(evs) > limit {
					evs = evs[:limit]
				}
				out = slices.Clone(evs)
			}
			h.mu.Unlock()
			return out, nil
		}
	}
	h.mu.Unlock()
	return Read(r, stream, after, limit)
}

// Last is stream.Last, answered from the stream's tail when it has one.
func (h *Hub) Last(r kv.Reader, stream string) (uint64, error) {
	h.mu.Lock()
	if t := h.tails[stream]; t != nil {
		last := t.evs[len(t.evs)-1].Seq
		h.mu.Unlock()
		return last, nil
	}
	h.mu.Unlock()
	return Last(r, stream)
}
