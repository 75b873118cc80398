package quota

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/internal/kv"
)

// Event is one booked model call. It never holds prompts, answers, request
// bodies or who asked.
type Event struct {
	// ID is stable across retries of the same call (e.g. derived from task
	// id, attempt and call number); booking an id twice books it once.
	ID       string    `msgpack:"id" json:"id"`
	Category Category  `msgpack:"category" json:"category"`
	Provider string    `msgpack:"provider" json:"provider"`
	Model    string    `msgpack:"model" json:"model"`
	Input    int64     `msgpack:"input" json:"input"`
	Output   int64     `msgpack:"output" json:"output"`
	Total    int64     `msgpack:"total" json:"total"`
	Time     time.Time `msgpack:"time" json:"time"`
	// Estimated is true when the provider reported no usage and the
	// reservation was charged instead.
	Estimated bool `msgpack:"estimated,omitempty" json:"estimated,omitempty"`
}

func (ev *Event) check() error {
	if ev.ID == "" || len(ev.ID) > 200 {
		return fmt.Errorf("%w: id must be 1-200 bytes", ErrBadEvent)
	}
	if _, err := ParseCategory(string(ev.Category)); err != nil {
		return fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if ev.Input < 0 || ev.Output < 0 || ev.Total < 0 {
		return fmt.Errorf("%w: negative token count", ErrBadEvent)
	}
	if ev.Time.IsZero() {
		return fmt.Errorf("%w: no time", ErrBadEvent)
	}
	return nil
}

func eventKey(day, id string) []byte { return kv.TableKey("usage", day, id) }
func idKey(id string) []byte         { return kv.TableKey("usageid", id) }
func healthKey(day string) []byte    { return kv.TableKey("usagehealth", day) }
func hitsKey(day string, cat Category) []byte {
	return kv.TableKey("usagehits", day, string(cat))
}

// Health values.
const (
	HealthOK         = "ok"
	HealthIncomplete = "incomplete"
)

// Ledger books usage events. It is safe for concurrent use.
type Ledger struct {
	db  *kv.DB
	log *slog.Logger
	now func() time.Time

	// commit commits a batch BookSafe built; a seam for fault tests.
	commit func(*kv.Batch) error

	failures atomic.Int64
	mu       sync.Mutex       // guards failed, and the read-modify-write of cache-hit counts
	failed   map[string]int64 // failures per day seen by this process
}

// LedgerOptions tune NewLedger.
type LedgerOptions struct {
	// Logger receives BookSafe warnings; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock for reports; nil means time.Now.
	Now func() time.Time
}

// NewLedger returns the ledger over db.
func NewLedger(db *kv.DB, o LedgerOptions) *Ledger {
	l := &Ledger{db: db, log: o.Logger, now: o.Now, failed: map[string]int64{}}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.now == nil {
		l.now = time.Now
	}
	l.commit = func(b *kv.Batch) error { return l.db.Apply(b, kv.Sync) }
	return l
}

// BookInBatch adds ev to the caller's batch b; it is booked when b commits.
// An event whose id is already booked (in the committed store) is skipped
// and nil returned, so a retried task that books again books once. It
// returns an error wrapping ErrBadEvent for an incomplete event.
func (l *Ledger) BookInBatch(b *kv.Batch, ev Event) error {
	if err := ev.check(); err != nil {
		return err
	}
	ev.Time = ev.Time.UTC().Truncate(time.Millisecond)
	if ev.Total == 0 {
		ev.Total = ev.Input + ev.Output
	}
	seen, err := kv.Has(l.db, idKey(ev.ID))
	if err != nil {
		return fmt.Errorf("quota: check usage event %s: %w", ev.ID, err)
	}
	if seen {
		return nil
	}
	v, err := kv.Marshal(ev)
	if err != nil {
		return err
	}
	day := dayOf(ev.Time)
	if err := b.Set(eventKey(day, ev.ID), v); err != nil {
		return err
	}
	return b.Set(idKey(ev.ID), []byte(day))
}

// Book books ev in a batch of its own, committed with Sync. A duplicate id
// is skipped.
func (l *Ledger) Book(ev Event) error {
	b := l.db.NewBatch()
	defer b.Close()
	if err := l.BookInBatch(b, ev); err != nil {
		return err
	}
	if b.Empty() {
		return nil
	}
	if err := l.commit(b); err != nil {
		return fmt.Errorf("quota: book usage event %s: %w", ev.ID, err)
	}
	return nil
}

// BookSafe books ev like Book but never fails the caller: on error it logs a
// warning (event id, category, provider, model and token counts only),
// counts the failure and marks the day's statistics incomplete. It reports
// whether the event was booked.
func (l *Ledger) BookSafe(ev Event) bool {
	err := l.Book(ev)
	if err == nil {
		return true
	}
	day := dayOf(l.now())
	if !ev.Time.IsZero() {
		day = dayOf(ev.Time)
	}
	l.failures.Add(1)
	l.mu.Lock()
	l.failed[day]++
	n := l.failed[day]
	l.mu.Unlock()
	l.log.Warn("usage booking failed; statistics marked incomplete",
		"event", ev.ID, "category", string(ev.Category), "provider", ev.Provider, "model", ev.Model,
		"input", ev.Input, "output", ev.Output, "total", ev.Total, "day", day, "err", err)
	// Best effort: remember the gap across restarts too.
	var persisted int64
	if v, err := kv.Get(l.db, healthKey(day)); err == nil {
		_ = kv.Unmarshal(v, &persisted)
	}
	if v, err := kv.Marshal(max(persisted+1, n)); err == nil {
		_ = l.db.Set(healthKey(day), v, kv.Sync)
	}
	return false
}

// Event returns the booked event with id; ok is false when none is booked.
func (l *Ledger) Event(id string) (ev Event, ok bool, err error) {
	day, err := kv.Get(l.db, idKey(id))
	if errors.Is(err, kv.ErrNotFound) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, fmt.Errorf("quota: read usage event %s: %w", id, err)
	}
	v, err := kv.Get(l.db, eventKey(string(day), id))
	if err != nil {
		return Event{}, false, fmt.Errorf("quota: read usage event %s of %s: %w", id, day, err)
	}
	if err := kv.Unmarshal(v, &ev); err != nil {
		return Event{}, false, fmt.Errorf("quota: decode usage event %s: %w", id, err)
	}
	return ev, true, nil
}

// CountCacheHit counts one answer of category cat served from a cache:
// no model call, no tokens, no event — a hit is not billed, but the usage
// view shows how many there were. The daily count is written without a
// sync (a crash may forget the last hits; it never invents any), so a
// burst of hits costs no disk flushes.
func (l *Ledger) CountCacheHit(cat Category) {
	day := dayOf(l.now())
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	if v, err := kv.Get(l.db, hitsKey(day, cat)); err == nil {
		_ = kv.Unmarshal(v, &n)
	}
	if v, err := kv.Marshal(n + 1); err == nil {
		_ = l.db.Set(hitsKey(day, cat), v, kv.NoSync)
	}
}

// Failures is the number of failed BookSafe calls since NewLedger.
func (l *Ledger) Failures() int64 { return l.failures.Load() }

// Totals are summed usage.
type Totals struct {
	Events    int64 `json:"events"`
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Total     int64 `json:"total"`
	Estimated int64 `json:"estimated_events"`
	// CacheHits counts answers served from a cache (CountCacheHit): not
	// billed, not in Events.
	CacheHits int64 `json:"cache_hits"`
}

func (t *Totals) add(ev Event) {
	t.Events++
	t.Input += ev.Input
	t.Output += ev.Output
	t.Total += ev.Total
	if ev.Estimated {
		t.Estimated++
	}
}

// Day is one UTC day of usage.
type Day struct {
	Date       string              `json:"date"`
	Categories map[Category]Totals `json:"categories"`
	// Failures counts bookings that failed that day.
	Failures int64  `json:"failed_bookings"`
	Health   string `json:"health"`
}

// Report is usage over a range of days.
type Report struct {
	From   string              `json:"from"`
	To     string              `json:"to"`
	Days   []Day               `json:"days"` // oldest first
	Totals map[Category]Totals `json:"totals"`
	// Health is "incomplete" when any booking in the range failed (the
	// totals then undercount), else "ok".
	Health   string `json:"health"`
	Failures int64  `json:"failed_bookings"`
	// Sources says, when known, whether each category runs on dedicated,
	// compat, mixed or default settings.
	Sources map[Category]string `json:"sources,omitempty"`
	// Warnings advise, one sentence each, the categories that run on the
	// legacy shared [ai] section to move to [ai.<category>].
	Warnings []string `json:"warnings,omitempty"`
}

// Report sums the events of the last days UTC days (today included).
func (l *Ledger) Report(days int) (*Report, error) {
	if days < 1 {
		days = 1
	}
	now := l.now().UTC()
	r := &Report{Totals: map[Category]Totals{}, Health: HealthOK}
	for _, c := range Categories {
		r.Totals[c] = Totals{}
	}
	seen := map[string]bool{}
	for i := days - 1; i >= 0; i-- {
		date := dayOf(now.AddDate(0, 0, -i))
		d := Day{Date: date, Categories: map[Category]Totals{}, Health: HealthOK}
		for _, c := range Categories {
			d.Categories[c] = Totals{}
		}
		p := kv.TableKey("usage", date, "")
		it, err := l.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
		if err != nil {
			return nil, err
		}
		for it.First(); it.Valid(); it.Next() {
			var ev Event
			if err := kv.Unmarshal(it.Value(), &ev); err != nil {
				it.Close()
				return nil, fmt.Errorf("quota: decode usage event %q: %w", it.Key(), err)
			}
			if seen[ev.ID] {
				continue
			}
			seen[ev.ID] = true
			t := d.Categories[ev.Category]
			t.add(ev)
			d.Categories[ev.Category] = t
			t = r.Totals[ev.Category]
			t.add(ev)
			r.Totals[ev.Category] = t
		}
		err = it.Error()
		it.Close()
		if err != nil {
			return nil, err
		}
		for _, c := range Categories {
			var n int64
			if v, err := kv.Get(l.db, hitsKey(date, c)); err == nil {
				_ = kv.Unmarshal(v, &n)
			}
			if n > 0 {
				t := d.Categories[c]
				t.CacheHits += n
				d.Categories[c] = t
				t = r.Totals[c]
				t.CacheHits += n
				r.Totals[c] = t
			}
		}
		if v, err := kv.Get(l.db, healthKey(date)); err == nil {
			_ = kv.Unmarshal(v, &d.Failures)
		}
		l.mu.Lock()
		d.Failures = max(d.Failures, l.failed[date])
		l.mu.Unlock()
		if d.Failures > 0 {
			d.Health = HealthIncomplete
			r.Health = HealthIncomplete
			r.Failures += d.Failures
		}
		r.Days = append(r.Days, d)
	}
	r.From, r.To = r.Days[0].Date, r.Days[len(r.Days)-1].Date
	return r, nil
}

// MaxReportDays bounds the days a report covers.
const MaxReportDays = 366
