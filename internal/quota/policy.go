package quota

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

// Category is an AI feature with its own policy and counters.
type Category string

// Categories.
const (
	Writing    Category = "writing"
	Reading    Category = "reading"
	Attributes Category = "attributes"
)

// Categories lists every category in display order.
var Categories = []Category{Writing, Reading, Attributes}

// ParseCategory checks s names a category.
func ParseCategory(s string) (Category, error) {
	for _, c := range Categories {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("quota: unknown category %q (want writing, reading or attributes)", s)
}

// Kinds of refusal; an Error's code is "<category>_<kind>".
const (
	KindRateLimited        = "rate_limited"
	KindConcurrencyLimited = "concurrency_limited"
	KindBudgetExhausted    = "token_budget_exhausted"
)

// Sentinels matched by errors.Is against an *Error of the same kind, in
// any category.
var (
	ErrRateLimited        = errors.New("quota: rate limited")
	ErrConcurrencyLimited = errors.New("quota: concurrency limited")
	ErrBudgetExhausted    = errors.New("quota: token budget exhausted")
	// ErrSettled is returned when a lease is settled twice.
	ErrSettled = errors.New("quota: lease already settled")
	// ErrBadEvent is wrapped when a usage event is incomplete.
	ErrBadEvent = errors.New("quota: bad usage event")
)

// Error is a policy refusal.
type Error struct {
	Category Category
	Kind     string
	// Limit describes the limit reached, e.g. "60 requests per minute".
	Limit string
	// RetryAfter is when a retry can succeed; 0 when unknown.
	RetryAfter time.Duration
}

// Code is the stable error code, e.g. "writing_rate_limited".
func (e *Error) Code() string { return string(e.Category) + "_" + e.Kind }

func (e *Error) Error() string {
	s := fmt.Sprintf("quota: %s: %s reached", e.Code(), e.Limit)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf("; retry in %s", e.RetryAfter.Round(time.Second))
	}
	return s
}

// Is matches the kind's sentinel.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrRateLimited:
		return e.Kind == KindRateLimited
	case ErrConcurrencyLimited:
		return e.Kind == KindConcurrencyLimited
	case ErrBudgetExhausted:
		return e.Kind == KindBudgetExhausted
	}
	return false
}

// Retryable reports whether waiting can help: rate and concurrency limits
// pass; an exhausted daily budget does not retry (the task fails).
func (e *Error) Retryable() bool { return e.Kind != KindBudgetExhausted }

// ErrKind: every refusal is errs.RateLimited; its code names the case.
func (e *Error) ErrKind() errs.Kind { return errs.RateLimited }

// ErrCode is the specific wire code, e.g. "writing_rate_limited".
func (e *Error) ErrCode() string { return e.Code() }

// ErrRetryAfter is when a retry may succeed.
func (e *Error) ErrRetryAfter() time.Duration { return e.RetryAfter }

// Limits are a category's limits; zero means unlimited.
type Limits struct {
	RequestsPerMinute int
	RequestsPerDay    int
	UserConcurrency   int
	Concurrency       int
	DailyTokens       int64
}

// LimitsFrom takes the limits of resolved AI settings.
func LimitsFrom(s config.AISettings) Limits {
	return Limits{
		RequestsPerMinute: s.RequestsPerMinute,
		RequestsPerDay:    s.RequestsPerDay,
		UserConcurrency:   s.UserConcurrency,
		Concurrency:       s.Concurrency,
		DailyTokens:       s.DailyTokens,
	}
}

// counters are one category's persisted counters for one day.
type counters struct {
	Requests int64 `msgpack:"requests"`
	Tokens   int64 `msgpack:"tokens"`
}

// Policy enforces one category's limits. It is safe for concurrent use.
type Policy struct {
	cat Category
	lim Limits
	db  *kv.DB
	now func() time.Time

	mu       sync.Mutex     // guards the fields below
	minute   []time.Time    // start times of requests in the last minute, oldest first
	day      string         // UTC date of today; "" until loaded
	today    counters       // persisted counters of day
	reserved int64          // tokens reserved by unsettled leases
	inflight int            // unsettled leases
	perUser  map[string]int // unsettled leases per user
	// userMinute are the start times of each user's requests in the last
	// minute, oldest first (the users' shares of the window).
	userMinute map[string][]time.Time
}

// Shares of the per-minute window. One user (one visitor address for the
// reading assistant, one author for writing) may start at most 1/UserShare
// of the category's requests_per_minute in a minute (at least one), and
// the last 1/ReserveShare of the window (at least one request) is kept
// for users without a request in it, so that a few parties cannot spend
// the site's minute and lock everyone else out.
const (
	UserShare    = 4
	ReserveShare = 10
)

// maxShareUsers bounds the users whose minute windows are kept; beyond
// it, idle ones are forgotten.
const maxShareUsers = 100_000

// NewPolicy returns category cat's policy over db. now is the clock (nil
// for time.Now).
func NewPolicy(db *kv.DB, cat Category, lim Limits, now func() time.Time) *Policy {
	if now == nil {
		now = time.Now
	}
	return &Policy{cat: cat, lim: lim, db: db, now: now, perUser: map[string]int{}, userMinute: map[string][]time.Time{}}
}

// Category is the policy's category.
func (p *Policy) Category() Category { return p.cat }

// Limits are the policy's limits.
func (p *Policy) Limits() Limits { return p.lim }

func dayOf(t time.Time) string { return t.UTC().Format("2006-01-02") }

func untilTomorrow(t time.Time) time.Duration {
	t = t.UTC()
	next := time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
	return next.Sub(t)
}

func counterKey(cat Category, day string) []byte { return kv.TableKey("quota", string(cat), day) }

// loadDay makes p.today the counters of now's day. p.mu is held.
func (p *Policy) loadDay(now time.Time) error {
	d := dayOf(now)
	if d == p.day {
		return nil
	}
	var c counters
	v, err := kv.Get(p.db, counterKey(p.cat, d))
	switch {
	case errors.Is(err, kv.ErrNotFound):
	case err != nil:
		return fmt.Errorf("quota: read %s counters: %w", p.cat, err)
	default:
		if err := kv.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("quota: decode %s counters of %s: %w", p.cat, d, err)
		}
	}
	p.day, p.today = d, c
	return nil
}

// store persists c as the counters of p.day. p.mu is held.
func (p *Policy) store(c counters) error {
	v, err := kv.Marshal(c)
	if err != nil {
		return err
	}
	if err := p.db.Set(counterKey(p.cat, p.day), v, kv.Sync); err != nil {
		return fmt.Errorf("quota: write %s counters: %w", p.cat, err)
	}
	p.today = c
	return nil
}

// Acquire admits one request by user ("" for none) that is expected to use
// about estimate tokens, or refuses it with an *Error. The request counts
// against the per-minute and per-day limits from now on; its estimate is
// reserved until the lease is settled. Every successful Acquire must be
// followed by exactly one Settle, SettleReservation or Release.
func (p *Policy) Acquire(ctx context.Context, user string, estimate int64) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if estimate < 0 {
		estimate = 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if err := p.loadDay(now); err != nil {
		return nil, err
	}
	refuse := func(kind, limit string, after time.Duration) error {
		return &Error{Category: p.cat, Kind: kind, Limit: limit, RetryAfter: after}
	}
	// Budget first: a day without tokens left is the most useful answer.
	if b := p.lim.DailyTokens; b > 0 && p.today.Tokens+p.reserved+estimate > b {
		left := b - p.today.Tokens - p.reserved
		if left < 0 {
			left = 0
		}
		return nil, refuse(KindBudgetExhausted, fmt.Sprintf("daily budget of %d tokens (%d left, request needs about %d)", b, left, estimate), untilTomorrow(now))
	}
	if n := p.lim.RequestsPerDay; n > 0 && p.today.Requests >= int64(n) {
		return nil, refuse(KindRateLimited, fmt.Sprintf("%d requests per day", n), untilTomorrow(now))
	}
	cut := 0
	for cut < len(p.minute) && now.Sub(p.minute[cut]) >= time.Minute {
		cut++
	}
	p.minute = p.minute[cut:]
	if n := p.lim.RequestsPerMinute; n > 0 && len(p.minute) >= n {
		return nil, refuse(KindRateLimited, fmt.Sprintf("%d requests per minute", n), p.minute[0].Add(time.Minute).Sub(now))
	}
	if e := p.shareLocked(user, now, len(p.minute)); e != nil {
		return nil, e
	}
	if n := p.lim.Concurrency; n > 0 && p.inflight >= n {
		return nil, refuse(KindConcurrencyLimited, fmt.Sprintf("%d concurrent requests", n), time.Second)
	}
	if n := p.lim.UserConcurrency; n > 0 && user != "" && p.perUser[user] >= n {
		return nil, refuse(KindConcurrencyLimited, fmt.Sprintf("%d concurrent requests per user", n), time.Second)
	}
	c := p.today
	c.Requests++
	if err := p.store(c); err != nil {
		return nil, err
	}
	p.minute = append(p.minute, now)
	if p.lim.RequestsPerMinute > 0 && user != "" {
		if len(p.userMinute) >= maxShareUsers {
			p.forgetIdleLocked(now)
		}
		p.userMinute[user] = append(p.userMinute[user], now)
	}
	p.reserved += estimate
	p.inflight++
	if user != "" {
		p.perUser[user]++
	}
	return &Lease{p: p, user: user, estimate: estimate}, nil
}

// Check reports whether Acquire would refuse a request by user expected to
// use about estimate tokens for a reason that waiting a little cannot
// cure: the daily token budget, the daily request cap or the per-minute
// window. It reserves and counts nothing. Concurrency limits are not
// checked: they clear as running requests end. A queue in front of the
// model (the writing assistant) refuses at request time with Check and
// acquires at run time.
func (p *Policy) Check(user string, estimate int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if err := p.loadDay(now); err != nil {
		return err
	}
	if b := p.lim.DailyTokens; b > 0 && p.today.Tokens+p.reserved+max(estimate, 0) > b {
		left := max(b-p.today.Tokens-p.reserved, 0)
		return &Error{Category: p.cat, Kind: KindBudgetExhausted, RetryAfter: untilTomorrow(now),
			Limit: fmt.Sprintf("daily budget of %d tokens (%d left, request needs about %d)", b, left, estimate)}
	}
	if n := p.lim.RequestsPerDay; n > 0 && p.today.Requests >= int64(n) {
		return &Error{Category: p.cat, Kind: KindRateLimited, Limit: fmt.Sprintf("%d requests per day", n), RetryAfter: untilTomorrow(now)}
	}
	if n := p.lim.RequestsPerMinute; n > 0 {
		recent := 0
		var first time.Time
		for _, t := range p.minute {
			if now.Sub(t) < time.Minute {
				if recent == 0 {
					first = t
				}
				recent++
			}
		}
		if recent >= n {
			return &Error{Category: p.cat, Kind: KindRateLimited, Limit: fmt.Sprintf("%d requests per minute", n), RetryAfter: first.Add(time.Minute).Sub(now)}
		}
		if e := p.shareLocked(user, now, recent); e != nil {
			return e
		}
	}
	return nil
}

// shareLocked refuses user's request when user has spent its share of
// the minute, or when the window has only the reserve left (used is the
// requests in it) and user already had a request in it. p.mu is held.
func (p *Policy) shareLocked(user string, now time.Time, used int) *Error {
	n := p.lim.RequestsPerMinute
	if n <= 0 || user == "" {
		return nil
	}
	w := p.userMinute[user]
	cut := 0
	for cut < len(w) && now.Sub(w[cut]) >= time.Minute {
		cut++
	}
	w = w[cut:]
	if len(w) == 0 {
		delete(p.userMinute, user)
		return nil // a newcomer may take the reserve
	}
	p.userMinute[user] = w
	share := max(1, n/UserShare)
	if len(w) >= share {
		return &Error{Category: p.cat, Kind: KindRateLimited, RetryAfter: w[0].Add(time.Minute).Sub(now),
			Limit: fmt.Sprintf("your share of %d of the %d requests per minute", share, n)}
	}
	if reserve := max(1, n/ReserveShare); n-used <= reserve {
		return &Error{Category: p.cat, Kind: KindRateLimited, RetryAfter: w[0].Add(time.Minute).Sub(now),
			Limit: fmt.Sprintf("the last %d of the %d requests per minute are kept for others", reserve, n)}
	}
	return nil
}

// forgetIdleLocked drops the minute windows of users with no request in
// the last minute, and when that frees nothing, any. p.mu is held.
func (p *Policy) forgetIdleLocked(now time.Time) {
	for u, w := range p.userMinute {
		if len(w) == 0 || now.Sub(w[len(w)-1]) >= time.Minute {
			delete(p.userMinute, u)
		}
	}
	for u := range p.userMinute {
		if len(p.userMinute) < maxShareUsers {
			break
		}
		delete(p.userMinute, u)
	}
}

// Status is a policy's state right now.
type Status struct {
	Category  Category `json:"category"`
	Day       string   `json:"day"`
	Requests  int64    `json:"requests"`
	Tokens    int64    `json:"tokens"`
	Reserved  int64    `json:"reserved"`
	InFlight  int      `json:"in_flight"`
	LastMin   int      `json:"last_minute"`
	Limits    Limits   `json:"limits"`
	TokenLeft int64    `json:"tokens_left"` // -1 when unlimited
}

// Status returns today's counters.
func (p *Policy) Status() (Status, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if err := p.loadDay(now); err != nil {
		return Status{}, err
	}
	n := 0
	for _, t := range p.minute {
		if now.Sub(t) < time.Minute {
			n++
		}
	}
	left := int64(-1)
	if p.lim.DailyTokens > 0 {
		left = max(p.lim.DailyTokens-p.today.Tokens-p.reserved, 0)
	}
	return Status{Category: p.cat, Day: p.day, Requests: p.today.Requests, Tokens: p.today.Tokens,
		Reserved: p.reserved, InFlight: p.inflight, LastMin: n, Limits: p.lim, TokenLeft: left}, nil
}

// Lease is one admitted request. Its methods are safe to call from any
// goroutine; only the first settlement counts.
type Lease struct {
	p        *Policy
	user     string
	estimate int64
	mu       sync.Mutex // guards done
	done     bool
}

// Estimate is the reserved token estimate.
func (l *Lease) Estimate() int64 { return l.estimate }

// Settle charges the tokens the provider reported and ends the lease.
func (l *Lease) Settle(tokens int64) error { return l.finish(tokens, true) }

// SettleReservation charges the reserved estimate (usage unknown, e.g. a
// stream cut before the usage chunk) and ends the lease.
func (l *Lease) SettleReservation() error { return l.finish(l.estimate, true) }

// Release ends the lease without charging tokens: the request never reached
// the model. A second call is a no-op.
func (l *Lease) Release() { _ = l.finish(0, false) }

func (l *Lease) finish(tokens int64, charge bool) error {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		if charge {
			return ErrSettled
		}
		return nil
	}
	l.done = true
	l.mu.Unlock()

	p := l.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved -= l.estimate
	p.inflight--
	if l.user != "" {
		if p.perUser[l.user]--; p.perUser[l.user] <= 0 {
			delete(p.perUser, l.user)
		}
	}
	if !charge || tokens <= 0 {
		return nil
	}
	if err := p.loadDay(p.now()); err != nil {
		return err
	}
	c := p.today
	c.Tokens += tokens
	return p.store(c)
}
