package repo

import (
	"sync"
	"time"
)

// Clock is the content service's source of time: the times versions and
// drafts record and the checkpoint policy's timers all go through it, so
// tests move time by hand (FakeClock) instead of sleeping.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f on its own goroutine once, d from now (a
	// FakeClock calls it on the goroutine that moves the clock).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call of Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call; it reports whether the call was pending.
	Stop() bool
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// nowClock is the wall clock's timers with another source of the time
// (Options.Now).
type nowClock struct{ now func() time.Time }

func (c nowClock) Now() time.Time                          { return c.now() }
func (nowClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// FakeClock is a Clock that moves only when Advance is called; the calls
// that come due run then, in order of their due time, on the goroutine
// that called Advance. It is safe for concurrent use.
type FakeClock struct {
	mu     sync.Mutex // guards now and timers
	now    time.Time
	timers []*fakeTimer
}

// NewFakeClock returns a FakeClock reading start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run when the clock reaches now+d (d <= 0: at
// the next Advance).
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(max(d, 0)), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock forward by d. Every call due by then runs before
// Advance returns, each with the clock reading its due time; calls that
// those calls register run too when they come due within d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			break
		}
		next.removeLocked()
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

// Pending returns the number of calls not yet run or stopped.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

type fakeTimer struct {
	c  *FakeClock
	at time.Time
	f  func()
}

// removeLocked removes t from its clock; it reports whether it was there.
func (t *fakeTimer) removeLocked() bool {
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.removeLocked()
}
