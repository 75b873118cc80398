package stream

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/foliodev/folio/internal/kv"
)

// commit appends events seq first..first+n-1 of s in one synced batch,
// trimming to keep when keep > 0, and returns them as appended.
func commit(t testing.TB, db *kv.DB, s string, first uint64, n int, keep uint64) []Event {
	t.Helper()
	b := db.NewBatch()
	defer b.Close()
	var out []Event
	for i := 0; i < n; i++ {
		seq := first + uint64(i)
		e, err := AppendEvent(b, s, seq, "t", int64(seq), payload{int(seq)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if keep > 0 {
		if err := Trim(b, s, keep); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	return out
}

// The hub answers from its tail exactly what the store answers, for every
// cursor and limit, including cursors older than the tail (from the store)
// and at its end (nothing new).
func TestHubReadMatchesStore(t *testing.T) {
	db := openDB(t)
	h := NewHub()
	const s = "doc:x"
	seq := uint64(1)
	for round := 0; round < 12; round++ {
		n := 1 + round%3
		h.Publish(s, 0, commit(t, db, s, seq, n, 0)...)
		seq += uint64(n)
		last, err := h.Last(db, s)
		if err != nil || last != seq-1 {
			t.Fatalf("round %d: Last = %d %v, want %d", round, last, err, seq-1)
		}
		for after := uint64(0); after < seq; after++ {
			for _, limit := range []int{0, 1, 2, 256} {
				got, err := h.Read(db, s, after, limit)
				want, werr := Read(db, s, after, limit)
				if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, after %d, limit %d: hub %+v %v, store %+v %v", round, after, limit, got, err, want, werr)
				}
			}
		}
	}
}

// The tail is read from memory: events published but (in this test) not in
// the store come back from it, and only the last tailEvents of them.
func TestHubTailBounds(t *testing.T) {
	db := openDB(t)
	h := NewHub()
	const s = "doc:m"
	var evs []Event
	for i := uint64(1); i <= 20; i++ {
		evs = append(evs, Event{Stream: s, Seq: i, Type: "t", Time: int64(i)})
	}
	h.Publish(s, 0, evs...)
	got, err := h.Read(db, s, 15, 0)
	if err != nil || len(got) != 5 || got[0].Seq != 16 {
		t.Fatalf("read after 15 = %+v %v, want 16..20 from the tail", got, err)
	}
	if got, _ := h.Read(db, s, 20-tailEvents-1, 0); len(got) != 0 {
		t.Fatalf("a cursor older than the tail was answered from memory: %+v", got)
	}
	if last, _ := h.Last(db, s); last != 20 {
		t.Fatalf("Last = %d, want 20 from the tail", last)
	}
	// An event too big to keep drops the stream's tail.
	h.Publish(s, 0, Event{Stream: s, Seq: 21, Type: "t", Data: make([]byte, tailEventBytes)})
	if last, _ := h.Last(db, s); last != 0 {
		t.Fatalf("Last after an oversized event = %d, want the store's 0", last)
	}
	// Many streams stay within the byte budget.
	big := make([]byte, 32<<10)
	for i := 0; i < 2*tailBytes/len(big); i++ {
		h.Publish(fmt.Sprintf("doc:%d", i), 0, Event{Seq: 1, Type: "t", Data: big})
	}
	if h.bytes > tailBytes {
		t.Fatalf("tails hold %d bytes, budget %d", h.bytes, tailBytes)
	}
}

// Whatever the hub was not shown, it forgets: Notify, an out-of-order
// publish and a trim past the tail all send readers to the store.
func TestHubForgets(t *testing.T) {
	db := openDB(t)
	h := NewHub()
	const s = "doc:f"
	h.Publish(s, 0, commit(t, db, s, 1, 3, 0)...)
	// A writer that does not publish (here: event 4) must Notify.
	commit(t, db, s, 4, 1, 0)
	h.Notify(s)
	if last, _ := h.Last(db, s); last != 4 {
		t.Fatalf("Last after Notify = %d, want 4 from the store", last)
	}
	// A gap starts a new tail; the events before it come from the store.
	commit(t, db, s, 5, 1, 0)
	h.Publish(s, 0, commit(t, db, s, 6, 1, 0)...)
	got, err := h.Read(db, s, 4, 0)
	if err != nil || len(got) != 2 || got[0].Seq != 5 || got[1].Seq != 6 {
		t.Fatalf("read across a gap = %+v %v, want 5, 6", got, err)
	}
	// Publishing an older event than the tail's end forgets the tail.
	h.Publish(s, 0, Event{Seq: 5, Type: "t"})
	if _, ok := h.tails[s]; ok {
		t.Fatal("an out-of-order publish kept the tail")
	}
	// A trim in the published batch drops the trimmed events from the
	// tail: a reader behind it resyncs.
	h.Publish(s, 0, commit(t, db, s, 7, 2, 0)...)
	h.Publish(s, 10, commit(t, db, s, 9, 2, 10)...)
	if _, err := h.Read(db, s, 7, 0); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("read behind the trim = %v, want ErrTrimmed", err)
	}
	if got, err := h.Read(db, s, 9, 0); err != nil || len(got) != 1 || got[0].Seq != 10 {
		t.Fatalf("read after 9 = %+v %v", got, err)
	}
}

// Writers that append under a lock and publish after commit, racing with
// readers that follow the stream through the hub: every reader sees every
// event once, in order, with the data the store holds, and the head the
// hub reports is never ahead of the store.
func TestHubConcurrentWritersReaders(t *testing.T) {
	db := openDB(t)
	h := NewHub()
	const s = "doc:c"
	const writers, perWriter, readers = 4, 150, 4
	var lock sync.Mutex // the document lock
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < perWriter; i++ {
				lock.Lock()
				last, err := h.Last(db, s)
				if err != nil {
					t.Error(err)
					lock.Unlock()
					return
				}
				evs := commit(t, db, s, last+1, 1+rng.IntN(3), 0)
				if rng.IntN(10) == 0 {
					h.Notify(s) // a writer that does not publish
				} else {
					h.Publish(s, 0, evs...)
				}
				lock.Unlock()
			}
		}(w)
	}
	done := make(chan struct{})
	errc := make(chan error, readers)
	for r := 0; r < readers; r++ {
		go func() {
			var cursor uint64
			finishing := false
			for {
				wait := h.Wait(s)
				evs, err := h.Read(db, s, cursor, 5)
				if err != nil {
					errc <- err
					return
				}
				for _, e := range evs {
					if e.Seq != cursor+1 {
						errc <- fmt.Errorf("after %d the reader got %d", cursor, e.Seq)
						return
					}
					var p payload
					if err := kv.Unmarshal(e.Data, &p); err != nil || uint64(p.N) != e.Seq {
						errc <- fmt.Errorf("event %d carries %+v %v", e.Seq, p, err)
						return
					}
					cursor = e.Seq
				}
				if len(evs) > 0 {
					continue
				}
				if finishing {
					// Every writer is done and a read after that found
					// nothing new: the reader must be at the end.
					last, err := Last(db, s)
					if err == nil && cursor != last {
						err = fmt.Errorf("the reader stopped at %d of %d", cursor, last)
					}
					errc <- err
					return
				}
				select {
				case <-wait:
				case <-done:
					finishing = true
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	for r := 0; r < readers; r++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}
