package stream

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble"
	"github.com/foliodev/folio/internal/kv"
	"github.com/vmihailenco/msgpack/v5"
)

// ErrTrimmed is returned by Read when events after the cursor were trimmed.
var ErrTrimmed = errors.New("stream: cursor is older than retention")

// Event is one persisted event. Data is the event's payload as msgpack
// (decode it with kv.Unmarshal into the type its Type names).
type Event struct {
	Stream string             `msgpack:"-" json:"stream"`
	Seq    uint64             `msgpack:"-" json:"seq"`
	Type   string             `msgpack:"type" json:"type"`
	Time   int64              `msgpack:"time" json:"time"` // Unix milliseconds
	Data   msgpack.RawMessage `msgpack:"data,omitempty" json:"-"`
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
func Last(r pebble.Reader, stream string) (uint64, error) {
	p := prefix(stream)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
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
func Append(b *pebble.Batch, stream string, seq uint64, typ string, timeMs int64, data any) error {
	var raw []byte
	if data != nil {
		var err error
		if raw, err = kv.Marshal(data); err != nil {
			return fmt.Errorf("stream: encode %s event: %w", typ, err)
		}
	}
	v, err := kv.Marshal(Event{Type: typ, Time: timeMs, Data: raw})
	if err != nil {
		return err
	}
	return b.Set(Key(stream, seq), v, nil)
}

// Read returns up to limit events of stream with seq > after, in order.
// It returns ErrTrimmed when the event after the cursor no longer exists.
func Read(r pebble.Reader, stream string, after uint64, limit int) ([]Event, error) {
	first, err := FirstRetained(r, stream)
	if err != nil {
		return nil, err
	}
	if after+1 < first {
		return nil, fmt.Errorf("%w: %s after %d, first retained %d", ErrTrimmed, stream, after, first)
	}
	p := prefix(stream)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: Key(stream, after+1), UpperBound: kv.PrefixEnd(p)})
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
func FirstRetained(r pebble.Reader, stream string) (uint64, error) {
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
func Trim(b *pebble.Batch, stream string, keep uint64) error {
	if keep <= 1 {
		return nil
	}
	if err := b.DeleteRange(Key(stream, 0), Key(stream, keep), nil); err != nil {
		return err
	}
	return b.Set(metaKey(stream), kv.Uint64(nil, keep), nil)
}

// Hub wakes readers waiting for new events. It holds no events.
type Hub struct {
	mu      sync.Mutex
	waiters map[string]chan struct{} // closed and replaced on every Notify
}

// NewHub returns an empty Hub.
func NewHub() *Hub { return &Hub{waiters: map[string]chan struct{}{}} }

// Wait returns a channel closed at the next Notify of stream. Take it
// before reading the store, so that no event slips between read and wait.
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

// Notify wakes every reader waiting on stream. Call it after the batch
// holding the new events has committed.
func (h *Hub) Notify(stream string) {
	h.mu.Lock()
	c, ok := h.waiters[stream]
	delete(h.waiters, stream)
	h.mu.Unlock()
	if ok {
		close(c)
	}
}
