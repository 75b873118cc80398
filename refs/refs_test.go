package refs_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

func open(tb testing.TB) (*kv.DB, *refs.Store) {
	tb.Helper()
	db, err := kv.Open(tb.TempDir(), kv.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db, refs.New(db)
}

func id(s string) objstore.ID { return objstore.Sum(objstore.KindVersion, []byte(s)) }

func TestConcurrentCASOneWinnerPerRound(t *testing.T) {
	db, rs := open(t)
	const writers, rounds = 8, 100
	name := "docs/d1/head"
	var head objstore.ID
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		start := make(chan struct{})
		results := make([]error, writers)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				b := db.NewBatch()
				key := kv.TableKey("test", fmt.Sprint(round), fmt.Sprint(w))
				b.Set(key, []byte("x")) // rides along: must be durable only for the winner
				<-start
				results[w] = rs.Update(b, []refs.Update{{Name: name, Old: head, New: id(fmt.Sprint(round, "/", w))}}, "race")
			}(w)
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range results {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
				}
				winner = w
			case !errors.Is(err, refs.ErrConflict):
				t.Fatalf("round %d: writer %d: %v", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		got, err := rs.Get(name)
		if want := id(fmt.Sprint(round, "/", winner)); err != nil || got != want {
			t.Fatalf("round %d: head %s, %v; want the winner's %s", round, got.Short(), err, want.Short())
		}
		for w := 0; w < writers; w++ {
			has, _ := kv.Has(db, kv.TableKey("test", fmt.Sprint(round), fmt.Sprint(w)))
			if has != (w == winner) {
				t.Fatalf("round %d: writer %d's batch committed = %v", round, w, has)
			}
		}
		head = got
	}
	log, err := rs.Reflog(name)
	if err != nil || len(log) != rounds {
		t.Fatalf("reflog: %d entries, %v; want %d", len(log), err, rounds)
	}
	prev := objstore.ID{}
	for i, e := range log {
		if e.Old != prev || e.Seq != uint64(i+1) || e.Message != "race" {
			t.Fatalf("reflog entry %d: %+v, want Old %s", i, e, prev.Short())
		}
		prev = e.New
	}
	if prev != head {
		t.Fatal("the last reflog entry is not the head")
	}
}

func TestMultiRefBatchIsAtomic(t *testing.T) {
	db, rs := open(t)
	a, b := "docs/a/head", "docs/b/head"
	if err := rs.Update(db.NewBatch(), []refs.Update{{Name: a, New: id("a1")}, {Name: b, New: id("b1")}}, "create"); err != nil {
		t.Fatal(err)
	}
	batch := db.NewBatch()
	batch.Set([]byte("t/side/effect"), []byte("1"))
	err := rs.Update(batch, []refs.Update{{Name: a, Old: id("a1"), New: id("a2")}, {Name: b, Old: id("stale"), New: id("b2")}}, "move")
	if !errors.Is(err, refs.ErrConflict) {
		t.Fatalf("update with one stale ref: %v, want ErrConflict", err)
	}
	if got, _ := rs.Get(a); got != id("a1") {
		t.Fatal("a moved although the batch conflicted")
	}
	if has, _ := kv.Has(db, []byte("t/side/effect")); has {
		t.Fatal("the caller's batch was committed on a conflict")
	}
	if log, _ := rs.Reflog(a); len(log) != 1 {
		t.Fatalf("a conflict left reflog entries: %d", len(log))
	}
	if err := rs.Update(db.NewBatch(), []refs.Update{{Name: a, Old: id("a1"), New: id("a2")}, {Name: b, Old: id("b1"), New: id("b2")}}, "move"); err != nil {
		t.Fatal(err)
	}
	vals, names, err := rs.List("docs/")
	if err != nil || len(names) != 2 || names[0] != a || vals[a] != id("a2") || vals[b] != id("b2") {
		t.Fatalf("List: %v %v %v", vals, names, err)
	}
	if err := rs.Update(db.NewBatch(), []refs.Update{{Name: a, Old: id("a2"), New: id("x")}, {Name: a, Old: id("x"), New: id("y")}}, ""); err == nil {
		t.Fatal("an update naming a ref twice was accepted")
	}
}

func TestCreateDeleteAndReflog(t *testing.T) {
	db, rs := open(t)
	name := "docs/d/head"
	if _, err := rs.Get(name); !errors.Is(err, refs.ErrNotFound) {
		t.Fatalf("Get of a missing ref: %v", err)
	}
	steps := []refs.Update{
		{Name: name, New: id("1")},
		{Name: name, Old: id("1"), New: id("2")},
		{Name: name, Old: id("2")}, // delete
		{Name: name, New: id("3")}, // create again
	}
	for i, u := range steps {
		if err := rs.Update(db.NewBatch(), []refs.Update{u}, fmt.Sprint("step ", i)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := rs.Update(db.NewBatch(), []refs.Update{{Name: name, New: id("4")}}, ""); !errors.Is(err, refs.ErrConflict) {
		t.Fatalf("creating an existing ref: %v, want ErrConflict", err)
	}
	if got, _ := rs.Get(name); got != id("3") {
		t.Fatal("head is not the recreated value")
	}
	log, err := rs.Reflog(name)
	if err != nil || len(log) != len(steps) {
		t.Fatalf("reflog: %d entries, %v", len(log), err)
	}
	for i, e := range log {
		if e.Old != steps[i].Old || e.New != steps[i].New || e.Message != fmt.Sprint("step ", i) || e.Time == 0 {
			t.Fatalf("reflog entry %d: %+v, want %+v", i, e, steps[i])
		}
	}
	if _, err := rs.Reflog("docs/none/head"); err != nil {
		t.Fatal(err)
	}
}

// A move logged elsewhere moves the ref and writes no reflog entry; the
// next logged move records where the ref really was.
func TestUpdateLoggedElsewhere(t *testing.T) {
	db, rs := open(t)
	name := "docs/d/head"
	steps := []refs.Update{
		{Name: name, New: id("1")},
		{Name: name, Old: id("1"), New: id("2"), LoggedElsewhere: true},
		{Name: name, Old: id("2"), New: id("3"), LoggedElsewhere: true},
		{Name: name, Old: id("3")}, // delete
	}
	for i, u := range steps {
		if err := rs.Update(db.NewBatch(), []refs.Update{u}, fmt.Sprint("step ", i)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	log, err := rs.Reflog(name)
	if err != nil || len(log) != 2 {
		t.Fatalf("reflog: %+v, %v; want the two logged moves", log, err)
	}
	if log[0].New != id("1") || log[1].Old != id("3") || !log[1].New.IsZero() {
		t.Fatalf("reflog %+v: the delete must name the value the ref really had", log)
	}
}
