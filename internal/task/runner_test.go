package task

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func openDB(tb testing.TB, dir string) *kv.DB {
	tb.Helper()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	return db
}

// harness is a runner on a fresh store with a fake clock.
type harness struct {
	tb    testing.TB
	db    *kv.DB
	clock *FakeClock
	r     *Runner
}

func newHarness(tb testing.TB, o Options) *harness {
	tb.Helper()
	h := &harness{tb: tb, db: openDB(tb, tb.TempDir()), clock: NewFakeClock(epoch)}
	if o.Clock == nil {
		o.Clock = h.clock
	}
	if o.Jitter == nil {
		o.Jitter = func(d time.Duration) time.Duration { return d } // deterministic
	}
	r, err := Open(h.db, o)
	if err != nil {
		tb.Fatal(err)
	}
	h.r = r
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.r.Close(ctx); err != nil {
			tb.Error(err)
		}
		h.db.Close()
	})
	return h
}

func (h *harness) start() {
	h.tb.Helper()
	if err := h.r.Start(context.Background()); err != nil {
		h.tb.Fatal(err)
	}
}

func (h *harness) enqueue(s Spec) Task {
	h.tb.Helper()
	t, _, err := h.r.Enqueue(context.Background(), s)
	if err != nil {
		h.tb.Fatal(err)
	}
	return t
}

func (h *harness) get(id ID) Task {
	h.tb.Helper()
	t, err := h.r.Get(context.Background(), id)
	if err != nil {
		h.tb.Fatal(err)
	}
	return t
}

// waitFor polls cond (nudging the scheduler, which may have computed its
// timer from a clock reading older than the last Advance) for 10 s.
func (h *harness) waitFor(what string, cond func() bool) {
	h.tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.tb.Fatalf("timed out waiting for %s", what)
		}
		h.r.kick()
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) waitState(id ID, s State) Task {
	h.tb.Helper()
	var t Task
	h.waitFor(fmt.Sprintf("task %s to be %s", id, s), func() bool {
		t = h.get(id)
		return t.State == s
	})
	return t
}

// settle gives the scheduler a moment and asserts task id stays in state s.
func (h *harness) stays(id ID, s State) {
	h.tb.Helper()
	for range 20 {
		h.r.kick()
		time.Sleep(time.Millisecond)
	}
	if t := h.get(id); t.State != s {
		h.tb.Fatalf("task %s is %s (attempt %d), want it to stay %s", id, t.State, t.Attempt, s)
	}
}

func (h *harness) events(id ID) []stream.Event {
	h.tb.Helper()
	evs, err := stream.Read(h.db, id.Stream(), 0, 0)
	if err != nil {
		h.tb.Fatal(err)
	}
	return evs
}

func eventTypes(evs []stream.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func detail(tb testing.TB, e stream.Event) EventDetail {
	tb.Helper()
	var d EventDetail
	if len(e.Data) > 0 {
		if err := kv.Unmarshal(e.Data, &d); err != nil {
			tb.Fatal(err)
		}
	}
	return d
}

// rawEvents counts the event keys of a task's stream in the store.
func rawEvents(tb testing.TB, db *kv.DB, id ID) int {
	tb.Helper()
	it, err := db.NewIter(&kv.IterOptions{LowerBound: stream.Key(id.Stream(), 0), UpperBound: stream.Key(id.Stream(), 1<<63)})
	if err != nil {
		tb.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}

func sameStrings(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestLifecycleAndEvents(t *testing.T) {
	h := newHarness(t, Options{})
	var ran atomic.Int32
	h.r.Register("noop", func(ctx context.Context, tk *Task) error {
		if string(tk.Payload) != "hello" || tk.Attempt != 1 || tk.State != Running {
			return Permanent(fmt.Errorf("handler got %+v", tk))
		}
		ran.Add(1)
		return nil
	}, KindOptions{})
	if _, _, err := h.r.Enqueue(context.Background(), Spec{Kind: "nope"}); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("enqueue of unregistered kind: %v, want ErrUnknownKind", err)
	}
	tk := h.enqueue(Spec{Kind: "noop", User: "u1", Payload: []byte("hello")})
	if tk.State != Queued || tk.LastSeq != 1 {
		t.Fatalf("enqueued task %+v", tk)
	}
	h.start()
	done := h.waitState(tk.ID, Succeeded)
	if ran.Load() != 1 || done.Attempt != 1 || done.FinishedAt.IsZero() {
		t.Fatalf("ran %d times, task %+v", ran.Load(), done)
	}
	evs := h.events(tk.ID)
	if got := eventTypes(evs); !sameStrings(got, []string{EventEnqueued, EventStarted, EventSucceeded}) {
		t.Fatalf("events %v", got)
	}
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	// Tail from a cursor: replay stops after the terminal event.
	var tail []uint64
	for e, err := range h.r.Events(context.Background(), tk.ID, 1) {
		if err != nil {
			t.Fatal(err)
		}
		tail = append(tail, e.Seq)
	}
	if fmt.Sprint(tail) != "[2 3]" {
		t.Fatalf("tail from 1 gave seqs %v", tail)
	}
	for _, s := range []State{Queued, Running, Failed, Cancelled} {
		if l, err := h.r.List(context.Background(), s, 0, 0); err != nil || len(l) != 0 {
			t.Fatalf("List(%s) = %d tasks, %v", s, len(l), err)
		}
	}
	if l, _ := h.r.List(context.Background(), Succeeded, 0, 0); len(l) != 1 || l[0].ID != tk.ID {
		t.Fatalf("List(succeeded) = %+v", l)
	}
	if _, err := h.r.Get(context.Background(), tk.ID+1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of unknown id: %v", err)
	}
}

func TestBackoffWithFakeClock(t *testing.T) {
	h := newHarness(t, Options{})
	var runs atomic.Int32
	h.r.Register("flaky", func(ctx context.Context, tk *Task) error {
		runs.Add(1)
		return errors.New("upstream 503")
	}, KindOptions{MaxAttempts: 4, BackoffBase: time.Second, BackoffCap: 3 * time.Second})
	h.start()
	tk := h.enqueue(Spec{Kind: "flaky"})
	// Each failure waits base*2^(n-1), capped: 1s, 2s, 3s; the 4th run fails for good.
	for n, wait := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		h.waitFor("run", func() bool { return runs.Load() == int32(n+1) })
		q := h.waitState(tk.ID, Queued)
		if want := h.clock.Now().Add(wait); !q.RunAt.Equal(want) {
			t.Fatalf("after run %d: due %v, want %v", n+1, q.RunAt, want)
		}
		h.clock.Advance(wait - time.Millisecond)
		h.stays(tk.ID, Queued)
		if runs.Load() != int32(n+1) {
			t.Fatalf("ran before its backoff passed")
		}
		h.clock.Advance(time.Millisecond)
	}
	f := h.waitState(tk.ID, Failed)
	if runs.Load() != 4 || f.Attempt != 4 {
		t.Fatalf("runs %d, attempt %d; want 4", runs.Load(), f.Attempt)
	}
	var delays []int64
	for _, e := range h.events(tk.ID) {
		if e.Type == EventRetryScheduled {
			delays = append(delays, detail(t, e).DelayMs)
		}
	}
	if fmt.Sprint(delays) != "[1000 2000 3000]" {
		t.Fatalf("retry delays %v", delays)
	}
}

func TestDefaultJitterStaysInRange(t *testing.T) {
	r, err := Open(openDB(t, t.TempDir()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Duration]bool{}
	for range 200 {
		d := r.opts.Jitter(10 * time.Second)
		if d < 5*time.Second || d > 10*time.Second {
			t.Fatalf("jittered delay %v outside [5s, 10s]", d)
		}
		seen[d] = true
	}
	if len(seen) < 50 {
		t.Fatalf("jitter produced only %d distinct delays", len(seen))
	}
}

func TestRetryAfterAndRateLimit(t *testing.T) {
	h := newHarness(t, Options{})
	var runs atomic.Int32
	h.r.Register("provider", func(ctx context.Context, tk *Task) error {
		switch runs.Add(1) {
		case 1:
			return RetryAfter(errors.New("429 slow down"), 30*time.Second)
		case 2, 3, 4:
			return RateLimited(errors.New("quota window full"), 10*time.Second)
		}
		return nil
	}, KindOptions{MaxAttempts: 2, BackoffBase: time.Second})
	h.start()
	tk := h.enqueue(Spec{Kind: "provider"})
	q := h.waitState(tk.ID, Queued)
	h.waitFor("first run", func() bool { q = h.get(tk.ID); return q.Attempt == 1 && q.State == Queued })
	if want := h.clock.Now().Add(30 * time.Second); !q.RunAt.Equal(want) {
		t.Fatalf("Retry-After not honoured: due %v, want %v", q.RunAt, want)
	}
	h.clock.Advance(30 * time.Second)
	// Three rate-limited runs: each waits 10 s and spends no attempt, so a
	// task allowed 2 attempts still gets its 5th run.
	for i := 2; i <= 4; i++ {
		h.waitFor("rate-limited run", func() bool {
			q = h.get(tk.ID)
			return runs.Load() == int32(i) && q.State == Queued
		})
		if q.Charged() != 1 {
			t.Fatalf("rate limit spent an attempt: charged %d", q.Charged())
		}
		h.clock.Advance(10 * time.Second)
	}
	done := h.waitState(tk.ID, Succeeded)
	if done.Attempt != 5 || done.Refunded != 3 || done.Charged() != 2 {
		t.Fatalf("attempt %d refunded %d", done.Attempt, done.Refunded)
	}
	var rl int
	for _, e := range h.events(tk.ID) {
		if e.Type == EventRateLimited {
			rl++
			if detail(t, e).DelayMs != 10000 {
				t.Fatalf("rate_limited delay %d", detail(t, e).DelayMs)
			}
		}
	}
	if rl != 3 {
		t.Fatalf("%d rate_limited events, want 3", rl)
	}
}

type budgetErr struct{}

func (budgetErr) Error() string   { return "daily token budget exhausted" }
func (budgetErr) Retryable() bool { return false }

func TestPermanentErrorsDoNotRetry(t *testing.T) {
	cases := map[string]error{
		"permanent":      Permanent(errors.New("payload fails validation")),
		"self-described": fmt.Errorf("writing: %w", budgetErr{}),
		"cancellation":   fmt.Errorf("call: %w", context.Canceled),
	}
	for name, herr := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.r.Register("k", func(ctx context.Context, tk *Task) error { return herr }, KindOptions{MaxAttempts: 5})
			h.start()
			tk := h.enqueue(Spec{Kind: "k"})
			f := h.waitState(tk.ID, Failed)
			if f.Attempt != 1 || f.LastError != herr.Error() {
				t.Fatalf("attempt %d error %q", f.Attempt, f.LastError)
			}
			if IsRetryable(herr) {
				t.Fatal("IsRetryable = true")
			}
		})
	}
	if !IsRetryable(errors.New("timeout")) || !IsRetryable(RateLimited(errors.New("x"), 0)) {
		t.Fatal("plain errors and rate limits must be retryable")
	}
}

func TestCancelQueued(t *testing.T) {
	h := newHarness(t, Options{})
	h.r.Register("k", func(ctx context.Context, tk *Task) error { return nil }, KindOptions{})
	h.start()
	tk := h.enqueue(Spec{Kind: "k", RunAt: epoch.Add(time.Hour)})
	c, err := h.r.Cancel(context.Background(), tk.ID)
	if err != nil || c.State != Cancelled {
		t.Fatalf("Cancel = %v, %v", c.State, err)
	}
	h.clock.Advance(2 * time.Hour)
	h.stays(tk.ID, Cancelled)
	if got := eventTypes(h.events(tk.ID)); !sameStrings(got, []string{EventEnqueued, EventCancelled}) {
		t.Fatalf("events %v", got)
	}
	if _, err := h.r.Cancel(context.Background(), tk.ID); !errors.Is(err, ErrFinished) {
		t.Fatalf("second Cancel: %v, want ErrFinished", err)
	}
}

func TestCancelRunningEndsCancelledWhateverHandlerReturns(t *testing.T) {
	h := newHarness(t, Options{})
	started := make(chan ID, 1)
	h.r.Register("slow", func(ctx context.Context, tk *Task) error {
		started <- tk.ID
		<-ctx.Done()
		return nil // claims success after cancellation
	}, KindOptions{})
	h.start()
	tk := h.enqueue(Spec{Kind: "slow"})
	<-started
	c, err := h.r.Cancel(context.Background(), tk.ID)
	if err != nil || !c.CancelRequested {
		t.Fatalf("Cancel = %+v, %v", c, err)
	}
	h.waitState(tk.ID, Cancelled)
	want := []string{EventEnqueued, EventStarted, EventCancelRequested, EventCancelled}
	if got := eventTypes(h.events(tk.ID)); !sameStrings(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestUniqueKeyUnderConcurrentEnqueue(t *testing.T) {
	h := newHarness(t, Options{})
	gate := make(chan struct{})
	var fail atomic.Bool
	h.r.Register("k", func(ctx context.Context, tk *Task) error {
		<-gate
		if fail.Load() {
			return Permanent(errors.New("bad input"))
		}
		return nil
	}, KindOptions{})
	h.start()
	enqueueAll := func() (ids map[ID]int, created int) {
		ids = map[ID]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tk, c, err := h.r.Enqueue(context.Background(), Spec{Kind: "k", UniqueKey: "doc-7/summary"})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ids[tk.ID]++
				if c {
					created++
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		return ids, created
	}
	ids, created := enqueueAll()
	if len(ids) != 1 || created != 1 {
		t.Fatalf("16 concurrent enqueues gave ids %v, %d created", ids, created)
	}
	var first ID
	for id := range ids {
		first = id
	}
	close(gate)
	h.waitState(first, Succeeded)
	// A succeeded task still owns its key.
	if tk, c, err := h.r.Enqueue(context.Background(), Spec{Kind: "k", UniqueKey: "doc-7/summary"}); err != nil || c || tk.ID != first {
		t.Fatalf("enqueue after success: %v created=%v err=%v", tk.ID, c, err)
	}
	// A failed one does not: the next enqueue makes a new task.
	fail.Store(true)
	tk, c, err := h.r.Enqueue(context.Background(), Spec{Kind: "k", UniqueKey: "other"})
	if err != nil || !c {
		t.Fatal(err)
	}
	h.waitState(tk.ID, Failed)
	again, c, err := h.r.Enqueue(context.Background(), Spec{Kind: "k", UniqueKey: "other"})
	if err != nil || !c || again.ID == tk.ID {
		t.Fatalf("enqueue after failure: %v created=%v err=%v", again.ID, c, err)
	}
	if n := len(h.events(tk.ID)); n != 3 {
		t.Fatalf("deduplicated enqueues must not write events; failed task has %d", n)
	}
}

func TestConcurrencyBoundsSkipInsteadOfBlocking(t *testing.T) {
	h := newHarness(t, Options{Concurrency: 4, PerUser: 2})
	gate := make(chan struct{})
	var mu sync.Mutex
	running := map[string]int{}
	peak := map[string]int{}
	handler := func(ctx context.Context, tk *Task) error {
		mu.Lock()
		for _, k := range []string{"total", "kind:" + tk.Kind, "user:" + tk.User} {
			running[k]++
			peak[k] = max(peak[k], running[k])
		}
		mu.Unlock()
		<-gate
		mu.Lock()
		for _, k := range []string{"total", "kind:" + tk.Kind, "user:" + tk.User} {
			running[k]--
		}
		mu.Unlock()
		return nil
	}
	h.r.Register("a", handler, KindOptions{Concurrency: 1})
	h.r.Register("b", handler, KindOptions{})
	var ids []ID
	// The head of the queue is three "a" tasks (kind bound 1), then four
	// tasks of user x (user bound 2), then one of user y.
	for _, s := range []Spec{
		{Kind: "a", User: "u1"}, {Kind: "a", User: "u2"}, {Kind: "a", User: "u3"},
		{Kind: "b", User: "x"}, {Kind: "b", User: "x"}, {Kind: "b", User: "x"}, {Kind: "b", User: "x"},
		{Kind: "b", User: "y"},
	} {
		ids = append(ids, h.enqueue(s).ID)
		h.clock.Advance(time.Millisecond)
	}
	h.start()
	h.waitFor("4 running", func() bool {
		l, _ := h.r.List(context.Background(), Running, 0, 0)
		return len(l) == 4
	})
	l, _ := h.r.List(context.Background(), Running, 0, 0)
	var got []ID
	for _, tk := range l {
		got = append(got, tk.ID)
	}
	want := []ID{ids[0], ids[3], ids[4], ids[7]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("running %v, want %v (a#1, x#1, x#2, y#1)", got, want)
	}
	close(gate)
	for _, id := range ids {
		h.waitState(id, Succeeded)
	}
	mu.Lock()
	defer mu.Unlock()
	if peak["total"] > 4 || peak["kind:a"] > 1 || peak["user:x"] > 2 {
		t.Fatalf("bounds exceeded: %v", peak)
	}
}

func TestStaleWriterCannotOverwrite(t *testing.T) {
	h := newHarness(t, Options{})
	var first Task
	var runs atomic.Int32
	done := make(chan struct{})
	h.r.Register("k", func(ctx context.Context, tk *Task) error {
		if runs.Add(1) == 1 {
			first = *tk
			return errors.New("transient")
		}
		<-done
		return nil
	}, KindOptions{BackoffBase: time.Second})
	h.start()
	tk := h.enqueue(Spec{Kind: "k"})
	h.waitFor("retry", func() bool { return h.get(tk.ID).State == Queued && runs.Load() == 1 })
	h.clock.Advance(time.Second)
	h.waitFor("second run", func() bool { return runs.Load() == 2 })
	before := h.get(tk.ID)
	// The first attempt's view is stale: it cannot write to the log.
	if err := h.r.Emit(context.Background(), &first, "progress", nil); !errors.Is(err, ErrStale) {
		t.Fatalf("Emit from attempt 1 during attempt 2: %v, want ErrStale", err)
	}
	if after := h.get(tk.ID); after.LastSeq != before.LastSeq {
		t.Fatal("stale Emit changed the log")
	}
	close(done)
	h.waitState(tk.ID, Succeeded)
}

func TestEmitAndLiveTail(t *testing.T) {
	h := newHarness(t, Options{})
	proceed := make(chan struct{})
	h.r.Register("gen", func(ctx context.Context, tk *Task) error {
		for i := range 5 {
			<-proceed
			if err := h.r.Emit(ctx, tk, "delta", map[string]int{"i": i}); err != nil {
				return err
			}
		}
		return nil
	}, KindOptions{})
	if err := h.r.Emit(context.Background(), &Task{}, EventSucceeded, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Emit of a reserved type: %v", err)
	}
	h.start()
	tk := h.enqueue(Spec{Kind: "gen"})
	got := make(chan stream.Event)
	go func() {
		defer close(got)
		for e, err := range h.r.Events(context.Background(), tk.ID, 0) {
			if err != nil {
				t.Error(err)
				return
			}
			got <- e
		}
	}()
	var types []string
	var seq uint64
	sent := 0
	for e := range got {
		if e.Seq != seq+1 {
			t.Fatalf("seq %d after %d", e.Seq, seq)
		}
		seq = e.Seq
		types = append(types, e.Type)
		if (e.Type == EventStarted || e.Type == "delta") && sent < 5 {
			// The next delta is written only after the tailer saw this
			// event, so these arrive live, not by replay.
			proceed <- struct{}{}
			sent++
		}
	}
	want := []string{EventEnqueued, EventStarted, "delta", "delta", "delta", "delta", "delta", EventSucceeded}
	if !sameStrings(types, want) {
		t.Fatalf("tail gave %v, want %v", types, want)
	}
}

func TestRecoveryAfterRestart(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	defer db.Close()
	clock := NewFakeClock(epoch)
	r1, err := Open(db, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	r1.Register("k", func(ctx context.Context, tk *Task) error { return nil }, KindOptions{MaxAttempts: 2})
	ctx := context.Background()
	// Leave three tasks as a crashed process would: running (attempt 1),
	// running with a cancel requested, and running on its last attempt.
	var ids []ID
	for i, attempt := range []int{1, 1, 2} {
		tk, _, err := r1.Enqueue(ctx, Spec{Kind: "k"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tk.ID)
		if _, err := r1.update(tk.ID, func(t *Task, x *txn) error {
			t.State, t.Attempt = Running, attempt
			x.event(EventStarted, EventDetail{Attempt: attempt})
			return nil
		}); err != nil {
			t.Fatal(i, err)
		}
	}
	if _, err := r1.Cancel(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(db, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	r2.Register("k", func(ctx context.Context, tk *Task) error { return nil }, KindOptions{MaxAttempts: 2})
	if err := r2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r2.Close(ctx)
	h := &harness{tb: t, db: db, clock: clock, r: r2}
	ok := h.waitState(ids[0], Succeeded)
	if ok.Attempt != 2 {
		t.Fatalf("recovered task ran as attempt %d, want 2", ok.Attempt)
	}
	want := []string{EventEnqueued, EventStarted, EventRecovered, EventStarted, EventSucceeded}
	if got := eventTypes(h.events(ids[0])); !sameStrings(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	h.waitState(ids[1], Cancelled)
	f := h.waitState(ids[2], Failed)
	if f.Attempt != 2 {
		t.Fatalf("exhausted task attempt %d", f.Attempt)
	}
	if got := eventTypes(h.events(ids[2])); got[len(got)-2] != EventRecovered {
		t.Fatalf("events %v", got)
	}
}

func TestCloseRequeuesInterruptedRuns(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	r, _ := Open(db, Options{})
	started := make(chan struct{})
	r.Register("k", func(ctx context.Context, tk *Task) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}, KindOptions{MaxAttempts: 1})
	r.Start(ctx)
	tk, _, _ := r.Enqueue(ctx, Spec{Kind: "k"})
	<-started
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	q, _ := r.Get(ctx, tk.ID)
	if q.State != Queued || q.Charged() != 0 {
		t.Fatalf("after Close: %s charged %d, want queued with the attempt refunded", q.State, q.Charged())
	}
	if _, _, err := r.Enqueue(ctx, Spec{Kind: "k"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Enqueue after Close: %v", err)
	}
	r2, _ := Open(db, Options{})
	r2.Register("k", func(ctx context.Context, tk *Task) error { return nil }, KindOptions{MaxAttempts: 1})
	r2.Start(ctx)
	defer r2.Close(ctx)
	h := &harness{tb: t, db: db, r: r2}
	h.waitState(tk.ID, Succeeded)
}

func TestRetentionTrimsFinishedLogs(t *testing.T) {
	h := newHarness(t, Options{Retention: time.Hour, TrimEvery: 10 * time.Minute})
	block := make(chan struct{})
	h.r.Register("k", func(ctx context.Context, tk *Task) error {
		if string(tk.Payload) == "block" {
			<-block
		}
		return nil
	}, KindOptions{})
	h.start()
	defer close(block)
	done := h.enqueue(Spec{Kind: "k"})
	busy := h.enqueue(Spec{Kind: "k", Payload: []byte("block")})
	fin := h.waitState(done.ID, Succeeded)
	h.waitState(busy.ID, Running)
	if n, err := h.r.TrimLogs(context.Background()); err != nil || n != 0 {
		t.Fatalf("trim before retention: %d, %v", n, err)
	}
	// The background sweep runs on the clock.
	h.clock.Advance(61 * time.Minute)
	h.waitFor("sweep", func() bool {
		_, err := stream.Read(h.db, done.ID.Stream(), 0, 0)
		return errors.Is(err, stream.ErrTrimmed)
	})
	if n := rawEvents(t, h.db, done.ID); n != 0 {
		t.Fatalf("trimmed log still holds %d events", n)
	}
	if len(h.events(busy.ID)) != 2 {
		t.Fatal("the log of an unfinished task was trimmed")
	}
	for _, err := range h.r.Events(context.Background(), done.ID, 0) {
		if !errors.Is(err, stream.ErrTrimmed) {
			t.Fatalf("reading a trimmed log from 0: %v, want ErrTrimmed", err)
		}
	}
	for e, err := range h.r.Events(context.Background(), done.ID, fin.LastSeq) {
		t.Fatalf("reading past the end of a trimmed log gave %v %v", e, err)
	}
	if last, _ := stream.Last(h.db, done.ID.Stream()); last != fin.LastSeq {
		t.Fatalf("stream.Last after trim = %d, want %d", last, fin.LastSeq)
	}
	if g := h.get(done.ID); g.State != Succeeded {
		t.Fatal("retention removed the record")
	}
}

func TestFakeClockTimers(t *testing.T) {
	c := NewFakeClock(epoch)
	a, b := c.NewTimer(time.Second), c.NewTimer(2*time.Second)
	c.Advance(time.Second)
	select {
	case <-a.C():
	default:
		t.Fatal("timer due at 1s did not fire")
	}
	if !b.Stop() || c.Pending() != 0 {
		t.Fatal("Stop of a pending timer")
	}
	c.Advance(time.Hour)
	select {
	case <-b.C():
		t.Fatal("stopped timer fired")
	default:
	}
}

func TestIDRoundTrip(t *testing.T) {
	id := ID(0x0123456789abcdef)
	if id.String() != "0123456789abcdef" || id.Short() != "89abcdef" {
		t.Fatal(id.String())
	}
	if p, err := ParseID(id.String()); err != nil || p != id {
		t.Fatal(p, err)
	}
	for _, bad := range []string{"", "123", "0123456789abcdeg"} {
		if _, err := ParseID(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("ParseID(%q) = %v", bad, err)
		}
	}
}

func TestKindRegisteredAfterStartPicksUpStoredTasks(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	ctx := context.Background()
	r1, _ := Open(db, Options{})
	r1.Register("late", func(ctx context.Context, tk *Task) error { return nil }, KindOptions{})
	tk, _, err := r1.Enqueue(ctx, Spec{Kind: "late"})
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := Open(db, Options{})
	if err := r2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r2.Close(ctx)
	h := &harness{tb: t, db: db, r: r2}
	h.stays(tk.ID, Queued)
	r2.Register("late", func(ctx context.Context, tk *Task) error { return nil }, KindOptions{})
	h.waitState(tk.ID, Succeeded)
}

func TestTimeoutIsRetryable(t *testing.T) {
	h := newHarness(t, Options{})
	var runs atomic.Int32
	h.r.Register("slow", func(ctx context.Context, tk *Task) error {
		if runs.Add(1) == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}, KindOptions{Timeout: 20 * time.Millisecond, BackoffBase: time.Second})
	h.start()
	tk := h.enqueue(Spec{Kind: "slow"})
	h.waitFor("retry after timeout", func() bool { return h.get(tk.ID).State == Queued && runs.Load() == 1 })
	if e := h.events(tk.ID); e[len(e)-1].Type != EventRetryScheduled {
		t.Fatalf("after a timeout: %v", eventTypes(e))
	}
	h.clock.Advance(time.Second)
	h.waitState(tk.ID, Succeeded)
}

// TestFairUsersShareAKindsSlot: with one slot for a kind, a user who
// queued many tasks first does not keep a later user's task waiting
// behind all of them: starts alternate between the users.
func TestFairUsersShareAKindsSlot(t *testing.T) {
	h := newHarness(t, Options{Concurrency: 4})
	var mu sync.Mutex
	var order []string
	h.r.Register("gen", func(ctx context.Context, tk *Task) error {
		mu.Lock()
		order = append(order, tk.User)
		mu.Unlock()
		return nil
	}, KindOptions{Concurrency: 1, FairUsers: true})
	var ids []ID
	for i := 0; i < 5; i++ {
		ids = append(ids, h.enqueue(Spec{Kind: "gen", User: "flood"}).ID)
		h.clock.Advance(time.Millisecond)
	}
	for i := 0; i < 2; i++ {
		ids = append(ids, h.enqueue(Spec{Kind: "gen", User: "other"}).ID)
		h.clock.Advance(time.Millisecond)
	}
	h.start()
	for _, id := range ids {
		h.waitState(id, Succeeded)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(order, " "); got != "flood other flood other flood flood flood" {
		t.Fatalf("start order %s", got)
	}
}
