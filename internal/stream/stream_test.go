package stream

import (
	"errors"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
)

func openDB(t *testing.T) *kv.DB {
	t.Helper()
	db, err := kv.Open(t.TempDir(), kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type payload struct {
	N int `msgpack:"n"`
}

// Events come back in order after any cursor; a trimmed cursor must resync;
// Last survives trimming every event.
func TestAppendReadTrim(t *testing.T) {
	db := openDB(t)
	const s = "doc:x"
	for i := uint64(1); i <= 10; i++ {
		b := db.NewBatch()
		if err := Append(b, s, i, "t", int64(i), payload{int(i)}); err != nil {
			t.Fatal(err)
		}
		if err := db.Apply(b, kv.Sync); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := Read(db, s, 4, 3)
	if err != nil || len(evs) != 3 || evs[0].Seq != 5 || evs[2].Seq != 7 {
		t.Fatalf("read after 4 = %+v %v", evs, err)
	}
	var p payload
	if err := kv.Unmarshal(evs[0].Data, &p); err != nil || p.N != 5 {
		t.Fatalf("payload = %+v %v", p, err)
	}
	// Another stream sharing a prefix is not mixed in.
	b := db.NewBatch()
	Append(b, "doc:xy", 1, "t", 0, nil)
	db.Apply(b, kv.Sync)
	if evs, _ := Read(db, s, 0, 0); len(evs) != 10 {
		t.Fatalf("read all = %d events, want 10", len(evs))
	}
	b = db.NewBatch()
	if err := Trim(b, s, 8); err != nil {
		t.Fatal(err)
	}
	db.Apply(b, kv.Sync)
	if _, err := Read(db, s, 3, 0); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("read from a trimmed cursor = %v, want ErrTrimmed", err)
	}
	if evs, err := Read(db, s, 7, 0); err != nil || len(evs) != 3 || evs[0].Seq != 8 {
		t.Fatalf("read from the first retained = %+v %v", evs, err)
	}
	b = db.NewBatch()
	Trim(b, s, 11)
	db.Apply(b, kv.Sync)
	if last, _ := Last(db, s); last != 10 {
		t.Fatalf("Last after trimming everything = %d, want 10", last)
	}
}

// A waiter taken before a read is woken by the next Notify.
func TestHubWakes(t *testing.T) {
	h := NewHub()
	w := h.Wait("doc:a")
	other := h.Wait("doc:b")
	h.Notify("doc:a")
	select {
	case <-w:
	case <-time.After(time.Second):
		t.Fatal("waiter not woken")
	}
	select {
	case <-other:
		t.Fatal("a waiter on another stream was woken")
	default:
	}
}

func TestHubWatch(t *testing.T) {
	h := NewHub()
	var a, a2, b int
	stopA := h.Watch("doc:a", func() { a++ })
	stopA2 := h.Watch("doc:a", func() { a2++ })
	defer h.Watch("doc:b", func() { b++ })()
	h.Notify("doc:a")
	h.Publish("doc:a", 0, Event{Seq: 1, Type: "t"})
	h.Publish("doc:a", 0) // a commit without events still wakes
	if a != 3 || a2 != 3 || b != 0 {
		t.Fatalf("notices a=%d a2=%d b=%d, want 3, 3, 0", a, a2, b)
	}
	stopA()
	h.Notify("doc:a")
	if a != 3 || a2 != 4 {
		t.Fatalf("after stop: a=%d (want 3, no more notices) a2=%d (want 4)", a, a2)
	}
	stopA2()
	h.Notify("doc:a")
	if len(h.watches) != 1 {
		t.Fatalf("%d streams watched after both of doc:a stopped, want 1", len(h.watches))
	}
}
