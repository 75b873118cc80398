package quota

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newClock() *clock { return &clock{t: time.Date(2026, 3, 14, 22, 0, 0, 0, time.UTC)} }

func openDB(t testing.TB, dir string) *kv.DB {
	t.Helper()
	db, err := kv.Open(dir, kv.Options{Create: true, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code()
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func TestBudgetPerCategory(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	clk := newClock()
	lim := Limits{DailyTokens: 1000}
	writing := NewPolicy(db, Writing, lim, clk.now)
	reading := NewPolicy(db, Reading, lim, clk.now)
	ctx := context.Background()

	l, err := writing.Acquire(ctx, "u1", 600)
	if err != nil {
		t.Fatal(err)
	}
	// While the first request runs its reservation counts.
	if _, err := writing.Acquire(ctx, "u2", 600); code(err) != "writing_token_budget_exhausted" {
		t.Fatalf("second reservation: %v", err)
	}
	if err := l.Settle(950); err != nil {
		t.Fatal(err)
	}
	_, err = writing.Acquire(ctx, "u1", 100)
	var qe *Error
	if !errors.As(err, &qe) || qe.Code() != "writing_token_budget_exhausted" || !errors.Is(err, ErrBudgetExhausted) ||
		qe.Retryable() || qe.RetryAfter != 2*time.Hour {
		t.Fatalf("writing at its limit: %v (%+v)", err, qe)
	}
	// Reading has its own counters even with the same limits and credentials.
	rl, err := reading.Acquire(ctx, "u1", 100)
	if err != nil {
		t.Fatalf("reading refused while writing is exhausted: %v", err)
	}
	rl.Settle(80)
	// The next UTC day starts afresh.
	clk.add(2 * time.Hour)
	l, err = writing.Acquire(ctx, "u1", 100)
	if err != nil {
		t.Fatalf("next day: %v", err)
	}
	l.Release()
}

func TestReservationCharges(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	p := NewPolicy(db, Attributes, Limits{DailyTokens: 10000}, newClock().now)
	ctx := context.Background()
	l, _ := p.Acquire(ctx, "", 300)
	l.Release() // never reached the model
	l, _ = p.Acquire(ctx, "", 300)
	if err := l.SettleReservation(); err != nil { // stream cut before usage
		t.Fatal(err)
	}
	if err := l.Settle(5); !errors.Is(err, ErrSettled) {
		t.Fatalf("double settle: %v", err)
	}
	l, _ = p.Acquire(ctx, "", 300)
	l.Settle(42)
	st, _ := p.Status()
	if st.Tokens != 342 || st.Reserved != 0 || st.InFlight != 0 || st.Requests != 3 || st.TokenLeft != 10000-342 {
		t.Fatalf("status %+v", st)
	}
}

func TestRateAndConcurrency(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	clk := newClock()
	ctx := context.Background()

	p := NewPolicy(db, Reading, Limits{RequestsPerMinute: 2, RequestsPerDay: 3}, clk.now)
	for i := 0; i < 2; i++ {
		l, err := p.Acquire(ctx, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		l.Settle(1)
		clk.add(10 * time.Second)
	}
	_, err := p.Acquire(ctx, "", 0)
	var qe *Error
	if !errors.As(err, &qe) || qe.Code() != "reading_rate_limited" || qe.RetryAfter != 40*time.Second || !qe.Retryable() {
		t.Fatalf("per minute: %v", err)
	}
	clk.add(41 * time.Second)
	l, err := p.Acquire(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if _, err := p.Acquire(ctx, "", 0); code(err) != "reading_rate_limited" || !strings.Contains(err.Error(), "per day") {
		t.Fatalf("per day: %v", err)
	}

	c := NewPolicy(db, Writing, Limits{Concurrency: 3, UserConcurrency: 2}, clk.now)
	a1, _ := c.Acquire(ctx, "alice", 0)
	a2, _ := c.Acquire(ctx, "alice", 0)
	if _, err := c.Acquire(ctx, "alice", 0); code(err) != "writing_concurrency_limited" || !strings.Contains(err.Error(), "per user") {
		t.Fatalf("per user: %v", err)
	}
	b1, err := c.Acquire(ctx, "bob", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(ctx, "carol", 0); code(err) != "writing_concurrency_limited" || !errors.Is(err, ErrConcurrencyLimited) {
		t.Fatalf("total: %v", err)
	}
	a1.Release()
	a1.Release() // idempotent
	if l, err := c.Acquire(ctx, "alice", 0); err != nil {
		t.Fatalf("after release: %v", err)
	} else {
		l.Release()
	}
	a2.Release()
	b1.Release()
}

func TestCountersSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	ctx := context.Background()
	db := openDB(t, dir)
	p := NewPolicy(db, Writing, Limits{RequestsPerDay: 2, DailyTokens: 500}, clk.now)
	l, _ := p.Acquire(ctx, "", 100)
	l.Settle(450)
	led := NewLedger(db, LedgerOptions{Now: clk.now})
	if err := led.Book(Event{ID: "run1/1", Category: Writing, Provider: "openai", Model: "m", Input: 300, Output: 150, Time: clk.now()}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = openDB(t, dir)
	defer db.Close()
	p = NewPolicy(db, Writing, Limits{RequestsPerDay: 2, DailyTokens: 500}, clk.now)
	st, _ := p.Status()
	if st.Requests != 1 || st.Tokens != 450 {
		t.Fatalf("after restart: %+v", st)
	}
	if _, err := p.Acquire(ctx, "", 100); code(err) != "writing_token_budget_exhausted" {
		t.Fatalf("budget forgotten after restart: %v", err)
	}
	rep, err := NewLedger(db, LedgerOptions{Now: clk.now}).Report(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Totals[Writing]; got.Events != 1 || got.Total != 450 {
		t.Fatalf("ledger after restart: %+v", rep)
	}
}

func TestBookingDedup(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	clk := newClock()
	led := NewLedger(db, LedgerOptions{Now: clk.now})
	ev := Event{ID: "task-7/attempt-1/call-0", Category: Reading, Provider: "local", Model: "folio-local-1", Input: 10, Output: 5, Time: clk.now()}

	for i := 0; i < 2; i++ { // the retried task books again in its own batch
		b := db.NewBatch()
		b.Set([]byte("t/test/business"), []byte{byte(i)})
		if err := led.BookInBatch(b, ev); err != nil {
			t.Fatal(err)
		}
		if err := db.Apply(b, kv.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := led.Book(ev); err != nil {
		t.Fatal(err)
	}
	clk.add(3 * time.Hour) // the retry happens the next day, with a new time
	ev2 := ev
	ev2.Time = clk.now()
	if !led.BookSafe(ev2) {
		t.Fatal("BookSafe failed")
	}
	rep, _ := led.Report(2)
	if got := rep.Totals[Reading]; got.Events != 1 || got.Total != 15 {
		t.Fatalf("booked %+v, want once", got)
	}
	if rep.Health != HealthOK || rep.From != "2026-03-14" || rep.To != "2026-03-15" {
		t.Fatalf("report %+v", rep)
	}
	if err := led.Book(Event{Category: Reading, Time: clk.now()}); !errors.Is(err, ErrBadEvent) {
		t.Fatalf("event without id: %v", err)
	}
}

func TestSafeBookingFailure(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	clk := newClock()
	var logs bytes.Buffer
	led := NewLedger(db, LedgerOptions{Now: clk.now, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ok := Event{ID: "a", Category: Attributes, Provider: "openai", Model: "m", Input: 1, Output: 2, Time: clk.now()}
	if !led.BookSafe(ok) {
		t.Fatal("healthy booking failed")
	}
	led.commit = func(*kv.Batch) error { return errors.New("injected: disk full") }
	bad := ok
	bad.ID = "b"
	if led.BookSafe(bad) {
		t.Fatal("failed booking reported as booked")
	}
	if led.Failures() != 1 {
		t.Fatalf("failures = %d", led.Failures())
	}
	rep, _ := led.Report(1)
	if rep.Health != HealthIncomplete || rep.Failures != 1 || rep.Days[0].Health != HealthIncomplete || rep.Totals[Attributes].Events != 1 {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(logs.String(), "statistics marked incomplete") || !strings.Contains(logs.String(), "event=b") {
		t.Fatalf("log: %s", logs.String())
	}
	// The gap is remembered across a restart.
	db.Close()
	db = openDB(t, dir)
	defer db.Close()
	rep, _ = NewLedger(db, LedgerOptions{Now: clk.now}).Report(3)
	if rep.Health != HealthIncomplete || rep.Failures != 1 {
		t.Fatalf("after restart: %+v", rep)
	}
}

// Concurrent requests never overshoot the budget or the concurrency bound
// together: reservations count while requests run.
func TestConcurrentAcquire(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	p := NewPolicy(db, Writing, Limits{DailyTokens: 5000, Concurrency: 4}, newClock().now)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		running int
		peak    int
	)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				l, err := p.Acquire(context.Background(), "", 300)
				if errors.Is(err, ErrConcurrencyLimited) {
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					return // budget exhausted
				}
				mu.Lock()
				running++
				peak = max(peak, running)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
				l.Settle(300)
				return
			}
		}()
	}
	wg.Wait()
	st, _ := p.Status()
	if st.Tokens > 5000 || st.Tokens != 300*16 || peak > 4 || st.InFlight != 0 || st.Reserved != 0 {
		t.Fatalf("tokens %d peak %d status %+v", st.Tokens, peak, st)
	}
}

// Check refuses exactly what Acquire would refuse for the budget, the day
// and the minute, counts nothing, and ignores concurrency.
func TestCheckMatchesAcquireWithoutCounting(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	clk := newClock()
	ctx := context.Background()
	p := NewPolicy(db, Writing, Limits{DailyTokens: 1000, RequestsPerMinute: 2, Concurrency: 1}, clk.now)
	for range 5 {
		if err := p.Check("u1", 400); err != nil {
			t.Fatalf("Check on a fresh policy: %v", err)
		}
	}
	if st, _ := p.Status(); st.Requests != 0 || st.Reserved != 0 {
		t.Fatalf("Check counted: %+v", st)
	}
	if code(p.Check("u1", 1001)) != "writing_token_budget_exhausted" {
		t.Fatal("Check must refuse a request over the budget")
	}
	l1, err := p.Acquire(ctx, "u1", 400)
	if err != nil {
		t.Fatal(err)
	}
	// Concurrency is at its limit, but Check does not look at it.
	if err := p.Check("u2", 100); err != nil {
		t.Fatalf("Check refused on concurrency: %v", err)
	}
	l1.Settle(300)
	l2, err := p.Acquire(ctx, "u2", 100) // u1's share of the minute (1 of 2) is spent
	if err != nil {
		t.Fatal(err)
	}
	l2.Settle(100)
	// Two requests this minute: the window is full.
	err = p.Check("u1", 10)
	var qe *Error
	if code(err) != "writing_rate_limited" || !errors.As(err, &qe) || qe.RetryAfter <= 0 {
		t.Fatalf("Check with a full minute: %v", err)
	}
	clk.add(time.Minute)
	if err := p.Check("u1", 600); err != nil {
		t.Fatalf("Check in the next minute: %v", err)
	}
	if code(p.Check("u1", 601)) != "writing_token_budget_exhausted" {
		t.Fatal("400 tokens used: 601 more must be refused")
	}
}

func TestLedgerEventLookup(t *testing.T) {
	db := openDB(t, t.TempDir())
	defer db.Close()
	l := NewLedger(db, LedgerOptions{})
	ev := Event{ID: "t-1", Category: Writing, Provider: "local", Model: "m", Input: 3, Output: 4, Time: time.Date(2026, 3, 14, 22, 0, 0, 0, time.UTC)}
	if err := l.Book(ev); err != nil {
		t.Fatal(err)
	}
	got, ok, err := l.Event("t-1")
	if err != nil || !ok || got.Total != 7 || got.Provider != "local" {
		t.Fatalf("Event = %+v %v %v", got, ok, err)
	}
	if _, ok, err := l.Event("t-2"); ok || err != nil {
		t.Fatalf("missing event: %v %v", ok, err)
	}
}

// TestUsersShareTheMinute: a few users cannot spend a category's minute
// between them: each gets at most a quarter of it, and the last tenth is
// kept for users without a request in the window.
func TestUsersShareTheMinute(t *testing.T) {
	db := openDB(t, t.TempDir())
	clk := newClock()
	p := NewPolicy(db, Reading, Limits{RequestsPerMinute: 60}, clk.now)
	take := func(user string) error {
		l, err := p.Acquire(context.Background(), user, 0)
		if err == nil {
			l.Release()
		}
		return err
	}
	// Three addresses, as many requests as they can.
	for _, addr := range []string{"a1", "a2", "a3"} {
		n := 0
		for take(addr) == nil {
			n++
		}
		if n != 15 {
			t.Fatalf("%s started %d requests, want its share of 15", addr, n)
		}
		if err := p.Check(addr, 0); code(err) != "reading_rate_limited" {
			t.Fatalf("Check for %s past its share: %v", addr, err)
		}
	}
	// Everyone else still gets in; a fourth heavy user only up to the
	// reserve.
	n := 0
	for take("a4") == nil {
		n++
	}
	if n != 60-45-6 {
		t.Fatalf("a fourth address started %d, want %d (the last 6 are kept)", n, 60-45-6)
	}
	for i := 0; i < 6; i++ {
		if err := take("visitor" + string(rune('0'+i))); err != nil {
			t.Fatalf("newcomer %d was refused: %v", i, err)
		}
	}
	if err := take("late"); code(err) != "reading_rate_limited" {
		t.Fatalf("the whole minute is spent: %v", err)
	}
	clk.add(time.Minute)
	if err := take("a1"); err != nil {
		t.Fatalf("the next minute: %v", err)
	}
}
