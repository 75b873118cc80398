package publish

import (
	"context"
	"sync"
	"time"

	"github.com/foliodev/folio/internal/errs"
)

// Password checks cost argon2id's time and memory, so the visitors who ask
// for them must not be able to queue them without bound, keep slots busy
// for clients that already left, or guess at a rate of their choosing.
// guard admits the checks of the public reads:
//
//   - Only a password-protected article is checked; a missing, private or
//     public slug never queues a check (a wrong password for it counts as
//     a failure all the same, so the limits below answer alike).
//   - At most GuardLimits.Slots checks run at once and QueueLen wait; a
//     check beyond that, or a second one of an address that has one
//     waiting or running, is refused at once (429 password_busy).
//   - A waiting check whose request was cancelled (its client left) is
//     dropped before it runs.
//   - Failures back off per client address and per slug: after FreeAddr
//     (FreeSlug) failures within Forget of each other, each further
//     failure closes the address (slug) for 1 s, 2 s, 4 s … up to MaxAddr
//     (MaxSlug); a closed one is answered 429 password_rate_limited with
//     Retry-After, before any check. A right password clears its
//     address's failures (not the slug's).
//
// Timing tells a visitor who sends a password that a slug holds a
// password-protected article (the check takes tens of milliseconds); what
// it holds stays hidden.

// Error codes of the guard.
const (
	// CodePasswordRateLimited (rate_limited, 429): too many wrong
	// passwords from this address or for this article; retry after
	// Retry-After.
	CodePasswordRateLimited = "password_rate_limited"
	// CodePasswordBusy (rate_limited, 429): the password checks are all
	// taken; retry after Retry-After.
	CodePasswordBusy = "password_busy"
	// CodePasswordTooShort (invalid, 400): a password shorter than
	// MinPassword characters.
	CodePasswordTooShort = "password_too_short"
)

// MinPassword is the least number of characters (Unicode code points) of
// an article's password.
const MinPassword = 8

// GuardLimits configure the password guard; zero fields take the
// defaults of DefaultGuardLimits.
type GuardLimits struct {
	Slots    int           // checks running at once
	QueueLen int           // checks waiting for a slot
	FreeAddr int           // failures of an address before it backs off
	FreeSlug int           // failures for a slug before it backs off
	MaxAddr  time.Duration // longest back-off of an address
	MaxSlug  time.Duration // longest back-off of a slug
	Forget   time.Duration // a failure record is forgotten this long after its last failure
	Entries  int           // failure records kept (addresses and slugs)
}

// DefaultGuardLimits are the limits of a Store's guard.
var DefaultGuardLimits = GuardLimits{Slots: 2, QueueLen: 16, FreeAddr: 5, FreeSlug: 20,
	MaxAddr: 15 * time.Minute, MaxSlug: time.Minute, Forget: 15 * time.Minute, Entries: 100_000}

// GuardStats count what the guard did since it was made.
type GuardStats struct {
	Ran     int64 // checks that ran
	Dropped int64 // waiting checks dropped because their request ended
	Busy    int64 // checks refused because the slots and the queue were taken
	Limited int64 // requests refused by a back-off
	// MaxAhead is the most checks a check found waiting or running before
	// it when it joined the queue.
	MaxAhead int
	Waiting  int // checks waiting now
	Running  int // checks running now
}

// guard admits password checks; see above. Its zero value is not usable:
// newGuard.
type guard struct {
	lim   GuardLimits
	slots chan struct{}
	now   func() time.Time
	// queued, when set (tests), is told of each check that joined the
	// queue, before it waits.
	queued func()

	mu      sync.Mutex // guards the fields below
	waiting int
	running int
	addrs   map[string]int // checks waiting or running, per address
	fails   map[string]*failures
	stats   GuardStats
}

// failures is the back-off record of an address ("a:…") or slug ("s:…").
type failures struct {
	n     int
	last  time.Time // of the last failure
	until time.Time // closed until then
}

func newGuard(lim GuardLimits) *guard {
	d := DefaultGuardLimits
	for _, f := range []struct{ v, def *int }{{&lim.Slots, &d.Slots}, {&lim.QueueLen, &d.QueueLen},
		{&lim.FreeAddr, &d.FreeAddr}, {&lim.FreeSlug, &d.FreeSlug}, {&lim.Entries, &d.Entries}} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	for _, f := range []struct{ v, def *time.Duration }{{&lim.MaxAddr, &d.MaxAddr}, {&lim.MaxSlug, &d.MaxSlug}, {&lim.Forget, &d.Forget}} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return &guard{lim: lim, slots: make(chan struct{}, lim.Slots), now: time.Now,
		addrs: map[string]int{}, fails: map[string]*failures{}}
}

// open returns nil when neither addr nor slug is backing off, and the
// rate-limited error otherwise.
func (g *guard) open(addr, slug string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	var wait time.Duration
	for _, k := range g.keys(addr, slug) {
		if f := g.fails[k]; f != nil && f.until.After(now) {
			wait = max(wait, f.until.Sub(now))
		}
	}
	if wait == 0 {
		return nil
	}
	g.stats.Limited++
	e := errs.C(errs.RateLimited, CodePasswordRateLimited, "too many wrong passwords from your address or for this article; retry in %s", wait.Round(time.Second))
	e.RetryAfter = wait
	return e
}

func (g *guard) keys(addr, slug string) []string {
	if addr == "" {
		return []string{"s:" + slug}
	}
	return []string{"a:" + addr, "s:" + slug}
}

// fail records a wrong password from addr for slug.
func (g *guard) fail(addr, slug string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.keys(addr, slug) {
		g.failLocked(k)
	}
}

// failAddr records a failure of addr alone.
func (g *guard) failAddr(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failLocked("a:" + addr)
}

func (g *guard) failLocked(k string) {
	now := g.now()
	free, most := g.lim.FreeSlug, g.lim.MaxSlug
	if k[0] == 'a' {
		free, most = g.lim.FreeAddr, g.lim.MaxAddr
	}
	f := g.fails[k]
	if f == nil || now.Sub(f.last) > g.lim.Forget {
		if f == nil && len(g.fails) >= g.lim.Entries {
			g.sweepLocked(now)
		}
		f = &failures{}
		g.fails[k] = f
	}
	f.n++
	f.last = now
	if over := f.n - free; over > 0 {
		d := most
		if over <= 30 {
			d = min(most, time.Second<<(over-1))
		}
		f.until = now.Add(d)
	}
}

// succeed clears addr's failures after a right password.
func (g *guard) succeed(addr string) {
	if addr == "" {
		return
	}
	g.mu.Lock()
	delete(g.fails, "a:"+addr)
	g.mu.Unlock()
}

// sweepLocked forgets old failure records, and when that frees nothing,
// any record: the table stays bounded whatever the number of addresses.
func (g *guard) sweepLocked(now time.Time) {
	for k, f := range g.fails {
		if now.Sub(f.last) > g.lim.Forget && !f.until.After(now) {
			delete(g.fails, k)
		}
	}
	for k := range g.fails {
		if len(g.fails) < g.lim.Entries {
			break
		}
		delete(g.fails, k)
	}
}

// check runs fn (one password check) in a slot, for a request from addr
// that ends with ctx. It refuses at once when the queue is full or addr
// has a check waiting or running, and gives up, without running fn,
// when ctx ends while it waits.
func (g *guard) check(ctx context.Context, addr string, fn func()) error {
	g.mu.Lock()
	if mine := addr != "" && g.addrs[addr] > 0; mine || g.waiting >= g.lim.QueueLen {
		g.stats.Busy++
		g.mu.Unlock()
		if mine { // guesses sent side by side count against their address
			g.failAddr(addr)
		}
		e := errs.C(errs.RateLimited, CodePasswordBusy, "the daemon is checking too many passwords (or one of yours); retry in a second")
		e.RetryAfter = time.Second
		return e
	}
	g.stats.MaxAhead = max(g.stats.MaxAhead, g.waiting+g.running)
	g.waiting++
	g.addrs[addr]++
	g.mu.Unlock()
	if g.queued != nil {
		g.queued()
	}
	defer func() {
		g.mu.Lock()
		if g.addrs[addr]--; g.addrs[addr] == 0 {
			delete(g.addrs, addr)
		}
		g.mu.Unlock()
	}()
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		g.mu.Lock()
		g.waiting--
		g.stats.Dropped++
		g.mu.Unlock()
		return ctx.Err()
	}
	g.mu.Lock()
	g.waiting--
	if err := ctx.Err(); err != nil { // it left while the slot was being taken
		g.stats.Dropped++
		g.mu.Unlock()
		<-g.slots
		return err
	}
	g.running++
	g.stats.Ran++
	g.mu.Unlock()
	fn()
	<-g.slots
	g.mu.Lock()
	g.running--
	g.mu.Unlock()
	return nil
}

// Stats returns what the guard did so far.
func (g *guard) Stats() GuardStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stats
	st.Waiting, st.Running = g.waiting, g.running
	return st
}
