package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
)

func businessKey(name string) []byte { return kv.TableKey("batchtest", name) }

// A task enqueued into the caller's batch exists exactly when the batch
// commits: an abandoned batch leaves nothing, a committed one runs.
func TestEnqueueInCommitsWithTheCallersRecords(t *testing.T) {
	h := newHarness(t, Options{})
	ran := make(chan ID, 4)
	h.r.Register("k", func(ctx context.Context, tk *Task) error { ran <- tk.ID; return nil }, KindOptions{})
	h.start()
	ctx := context.Background()

	// Abandoned: the batch is closed without committing.
	b := h.db.NewBatch()
	lost, err := h.r.EnqueueIn(ctx, b, Spec{Kind: "k", Payload: []byte("lost")})
	if err != nil {
		t.Fatal(err)
	}
	b.Set(businessKey("lost"), []byte("x"))
	b.Close()
	if _, err := h.r.Get(ctx, lost.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a task of an uncommitted batch exists: %v", err)
	}

	// Committed with the caller's record.
	b = h.db.NewBatch()
	tk, err := h.r.EnqueueIn(ctx, b, Spec{Kind: "k", Payload: []byte("kept")})
	if err != nil {
		t.Fatal(err)
	}
	b.Set(businessKey("kept"), []byte(tk.ID.String()))
	if err := h.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	h.r.Enqueued(tk)
	if got := <-ran; got != tk.ID {
		t.Fatalf("ran %s, want %s", got, tk.ID)
	}
	done := h.waitState(tk.ID, Succeeded)
	if types := eventTypes(h.events(tk.ID)); !sameStrings(types, []string{EventEnqueued, EventStarted, EventSucceeded}) {
		t.Fatalf("events %v", types)
	}
	if done.LastSeq != 3 {
		t.Fatalf("LastSeq %d, want 3", done.LastSeq)
	}
	if v, err := kv.Get(h.db, businessKey("kept")); err != nil || string(v) != tk.ID.String() {
		t.Fatalf("business record %q %v", v, err)
	}

	// Unique keys belong to the caller in batch mode.
	b = h.db.NewBatch()
	defer b.Close()
	if _, err := h.r.EnqueueIn(ctx, b, Spec{Kind: "k", UniqueKey: "u"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("EnqueueIn with a unique key: %v, want ErrInvalid", err)
	}
	if _, err := h.r.EnqueueIn(ctx, b, Spec{Kind: "nope"}); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("EnqueueIn of an unknown kind: %v", err)
	}
}

// A batch committed without Enqueued (the process died in between) is
// found by the next Start.
func TestEnqueueInWithoutEnqueuedIsLoadedAtStart(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	r, err := Open(db, Options{Clock: NewFakeClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	r.Register("k", func(context.Context, *Task) error { return nil }, KindOptions{})
	b := db.NewBatch()
	tk, err := r.EnqueueIn(context.Background(), b, Spec{Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	r.Close(context.Background())

	r2, err := Open(db, Options{Clock: NewFakeClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	r2.Register("k", func(context.Context, *Task) error { return nil }, KindOptions{})
	if err := r2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := &harness{tb: t, db: db, r: r2}
	h.waitState(tk.ID, Succeeded)
	r2.Close(context.Background())
	db.Close()
}

// OnTransition sees every transition with its events and the handler's
// error, and what it writes commits with the transition; an error from it
// aborts the transition.
func TestOnTransitionFollowsEveryTransition(t *testing.T) {
	h := newHarness(t, Options{})
	var mu sync.Mutex
	var seen []string
	failStart := 1 // the first start transition is refused by the hook
	hook := func(b *kv.Batch, tr *Transition) error {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range tr.Events {
			if e.Type == EventStarted && failStart > 0 {
				failStart--
				return errors.New("hook refuses")
			}
		}
		for _, e := range tr.Events {
			s := fmt.Sprintf("%s/%s->%s@%d", e.Type, tr.Old.State, tr.New.State, e.Seq)
			if tr.Err != nil {
				s += " err=" + tr.Err.Error()
			}
			seen = append(seen, s)
			if err := b.Set(businessKey(fmt.Sprintf("%s-%d", tr.New.ID, e.Seq)), []byte(e.Type)); err != nil {
				return err
			}
		}
		tr.Wake("mirror")
		return nil
	}
	calls := 0
	h.r.Register("k", func(ctx context.Context, tk *Task) error {
		calls++
		if calls == 1 {
			return errors.New("transient")
		}
		return nil
	}, KindOptions{OnTransition: hook, BackoffBase: 1, BackoffCap: 1})
	h.start()
	woken := h.r.Hub().Wait("mirror")
	tk := h.enqueue(Spec{Kind: "k"})
	select {
	case <-woken:
	default:
		t.Fatal("the stream the hook named was not woken after the commit")
	}
	// The refused start is retried by the scheduler a second later, the
	// failed run after its backoff: move the clock until it is done.
	h.waitFor("the task to succeed", func() bool {
		h.clock.Advance(time.Second)
		return h.get(tk.ID).State == Succeeded
	})
	mu.Lock()
	got := fmt.Sprint(seen)
	mu.Unlock()
	want := fmt.Sprint([]string{
		"enqueued/->queued@1",
		"started/queued->running@2",
		"retry_scheduled/running->queued@3 err=transient",
		"started/queued->running@4",
		"succeeded/running->succeeded@5",
	})
	if got != want {
		t.Fatalf("hook saw\n %s\nwant\n %s", got, want)
	}
	for seq := 1; seq <= 5; seq++ {
		if ok, _ := kv.Has(h.db, businessKey(fmt.Sprintf("%s-%d", tk.ID, seq))); !ok {
			t.Fatalf("the hook's record of event %d was not committed", seq)
		}
	}
}

// Complete commits the handler's effect with the success; a cancel
// requested first makes it write nothing.
func TestCompleteIsAtomicWithTheEffect(t *testing.T) {
	h := newHarness(t, Options{})
	cancelFirst := make(chan struct{})
	release := make(chan struct{})
	// The handler hands Complete's answer over: the task's state is
	// committed inside Complete, before the handler goes on.
	completeErrs := make(chan error, 2)
	h.r.Register("k", func(ctx context.Context, tk *Task) error {
		if string(tk.Payload) == "cancel" {
			close(cancelFirst)
			<-release
		}
		completeErrs <- h.r.Complete(ctx, tk, func(b *kv.Batch) error {
			return b.Set(businessKey(tk.ID.String()), tk.Payload)
		})
		// Whatever the handler returns after a successful Complete is ignored.
		return errors.New("ignored after Complete")
	}, KindOptions{MaxAttempts: 1})
	h.start()
	ctx := context.Background()

	ok := h.enqueue(Spec{Kind: "k", Payload: []byte("ok")})
	done := h.waitState(ok.ID, Succeeded)
	if completeErr := <-completeErrs; completeErr != nil || done.LastError != "" {
		t.Fatalf("Complete = %v, last error %q", completeErr, done.LastError)
	}
	if v, err := kv.Get(h.db, businessKey(ok.ID.String())); err != nil || string(v) != "ok" {
		t.Fatalf("effect %q %v", v, err)
	}
	if types := eventTypes(h.events(ok.ID)); !sameStrings(types, []string{EventEnqueued, EventStarted, EventSucceeded}) {
		t.Fatalf("events %v", types)
	}

	c := h.enqueue(Spec{Kind: "k", Payload: []byte("cancel")})
	<-cancelFirst
	if _, err := h.r.Cancel(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	h.waitState(c.ID, Cancelled)
	if completeErr := <-completeErrs; !errors.Is(completeErr, ErrCancelRequested) {
		t.Fatalf("Complete after a cancel = %v, want ErrCancelRequested", completeErr)
	}
	if ok, _ := kv.Has(h.db, businessKey(c.ID.String())); ok {
		t.Fatal("the effect of a cancelled task was written")
	}
}
