package publish

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// manualClock is a clock the test moves.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestGuardQueueIsBoundedAndDropsGoneClients: with its one slot busy, the
// guard queues at most QueueLen checks, one per address, refuses more at
// once, and drops a waiting check whose request ended without running it.
func TestGuardQueueIsBoundedAndDropsGoneClients(t *testing.T) {
	g := newGuard(GuardLimits{Slots: 1, QueueLen: 2})
	queued := make(chan struct{}, 4)
	g.queued = func() { queued <- struct{}{} }
	release := make(chan struct{})
	running := make(chan struct{})
	done := make(chan error, 4)
	go func() { done <- g.check(ctx, "a1", func() { close(running); <-release }) }()
	<-queued
	<-running
	if err := g.check(ctx, "a1", func() { t.Error("a second check of a1 ran") }); errs.CodeOf(err) != CodePasswordBusy || errs.RetryAfterOf(err) <= 0 {
		t.Fatalf("second check of the same address: %v", err)
	}
	gone, leave := context.WithCancel(ctx)
	ran := make(chan string, 2)
	waiting := func(n int) {
		t.Helper()
		select {
		case <-queued:
		case err := <-done:
			t.Fatalf("a check ended early: %v", err)
		}
		if st := g.Stats(); st.Waiting != n {
			t.Fatalf("waiting %d, want %d", st.Waiting, n)
		}
	}
	go func() { done <- g.check(gone, "a2", func() { ran <- "a2" }) }()
	waiting(1)
	go func() { done <- g.check(ctx, "a3", func() { ran <- "a3" }) }()
	waiting(2)
	if err := g.check(ctx, "a4", func() { t.Error("a check beyond the queue ran") }); errs.CodeOf(err) != CodePasswordBusy {
		t.Fatalf("check beyond the queue: %v", err)
	}
	leave() // a2's client is gone
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("gone client's check: %v", err)
	}
	close(release)
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if who := <-ran; who != "a3" || len(ran) != 0 {
		t.Fatalf("ran %q", who)
	}
	st := g.Stats()
	if st.Ran != 2 || st.Dropped != 1 || st.Busy != 2 || st.MaxAhead != 2 || st.Waiting != 0 || st.Running != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestGuardBacksOff: failures back off per address and per slug, doubling
// up to the maximum, forgotten after a quiet while; a right password
// clears its address.
func TestGuardBacksOff(t *testing.T) {
	c := &manualClock{t: time.Unix(1e9, 0)}
	g := newGuard(GuardLimits{FreeAddr: 3, FreeSlug: 5, MaxAddr: 4 * time.Second, MaxSlug: 3 * time.Second, Forget: time.Hour})
	g.now = c.now
	retry := func(addr, slug string) time.Duration {
		t.Helper()
		err := g.open(addr, slug)
		if err == nil {
			return 0
		}
		if errs.CodeOf(err) != CodePasswordRateLimited || errs.KindOf(err) != errs.RateLimited {
			t.Fatalf("open: %v", err)
		}
		return errs.RetryAfterOf(err)
	}
	for i := 0; i < 3; i++ {
		g.fail("x", "s")
	}
	if d := retry("x", "s"); d != 0 {
		t.Fatalf("within the free failures: retry after %v", d)
	}
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		g.fail("x", "other")
		if d := retry("x", "s"); d != want {
			t.Fatalf("address back-off %v, want %v", d, want)
		}
		if d := retry("y", "other"); d != 0 {
			t.Fatalf("another address, another slug: retry after %v", d)
		}
		c.add(want)
		if d := retry("x", "s"); d != 0 {
			t.Fatalf("after the back-off: %v", d)
		}
	}
	g.succeed("x")
	if d := retry("x", "s"); d != 0 {
		t.Fatalf("after a right password: %v", d)
	}
	// Slug s has 3 failures; two more addresses' failures reach its free
	// ones, the next closes it for every address.
	g.fail("p", "s")
	g.fail("q", "s")
	if d := retry("z", "s"); d != 0 {
		t.Fatalf("slug within its free failures: %v", d)
	}
	g.fail("r", "s")
	if d := retry("z", "s"); d != time.Second {
		t.Fatalf("slug back-off for a fresh address: %v", d)
	}
	c.add(2 * time.Hour) // forgotten
	g.fail("r", "s")
	if d := retry("z", "s"); d != 0 {
		t.Fatalf("a failure after a quiet while starts over: %v", d)
	}
}

// TestGuardTableIsBounded: failures from ever new addresses keep the
// table within its size.
func TestGuardTableIsBounded(t *testing.T) {
	g := newGuard(GuardLimits{Entries: 100})
	for i := 0; i < 1000; i++ {
		g.fail(string(rune('a'+i%26))+time.Duration(i).String(), "s")
	}
	if n := len(g.fails); n > 100 {
		t.Fatalf("%d records kept, cap 100", n)
	}
}

// TestPasswordChecksOnlyForPasswordArticles: a password sent for a
// missing, private or public slug never queues a check; a short password
// is refused with a clear error.
func TestPasswordChecksOnlyForPasswordArticles(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "open", flowdoc.Attributes{Slug: "open"})
	newDoc(t, r, "priv", flowdoc.Attributes{Slug: "priv"})
	newDoc(t, r, "pw", flowdoc.Attributes{Slug: "pw"})
	if _, err := s.Publish(ctx, Params{Doc: "pw", Actor: "author-a", Visibility: Password, Password: "seven77"}); errs.CodeOf(err) != CodePasswordTooShort || errs.KindOf(err) != errs.Invalid {
		t.Fatalf("a 7-character password: %v", err)
	}
	for _, p := range []Params{{Doc: "open", Actor: "author-a"}, {Doc: "priv", Actor: "author-a", Visibility: Private},
		{Doc: "pw", Actor: "author-a", Visibility: Password, Password: "eight888"}} {
		if _, err := s.Publish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetVisibility(ctx, "pw", "author-a", Password, "x"); errs.CodeOf(err) != CodePasswordTooShort {
		t.Fatalf("set a 1-character password: %v", err)
	}
	for i, slug := range []string{"missing", "priv", "open", "Not A Slug"} {
		_, _, err := s.PublicationFor(ctx, slug, Reader{Password: "guess-guess", Addr: string(rune('a' + i))})
		if slug == "open" && err != nil || slug != "open" && errs.CodeOf(err) != CodeArticleNotFound {
			t.Fatalf("%s: %v", slug, err)
		}
	}
	if st := s.PasswordStats(); st.Ran != 0 {
		t.Fatalf("checks ran for articles without a password: %+v", st)
	}
	if _, vis, err := s.PublicationFor(ctx, "pw", Reader{Password: "eight888", Addr: "z"}); err != nil || vis != Password {
		t.Fatalf("right password: %v %v", vis, err)
	}
	if st := s.PasswordStats(); st.Ran != 1 {
		t.Fatalf("checks %+v, want 1", st)
	}
}

// TestTagBounds: a published article has at most MaxArticleTags tags,
// and one user's publishes create at most NewTagsPerDay tags a day; a
// refused publish creates none and seals nothing.
func TestTagBounds(t *testing.T) {
	r, s := newStore(t)
	many := func(prefix string, n int) []string {
		var ts []string
		for i := 0; i < n; i++ {
			ts = append(ts, fmt.Sprintf("%s-%d", prefix, i))
		}
		return ts
	}
	newDoc(t, r, "wide", flowdoc.Attributes{Slug: "wide", Tags: many("w", MaxArticleTags+1)})
	if _, err := s.Publish(ctx, Params{Doc: "wide", Actor: "author-a"}); errs.CodeOf(err) != CodeTooManyTags || errs.KindOf(err) != errs.Invalid {
		t.Fatalf("an article with %d tags: %v", MaxArticleTags+1, err)
	}
	made := 0
	for i := 0; made+MaxArticleTags <= NewTagsPerDay; i++ {
		doc := fmt.Sprint("d", i)
		newDoc(t, r, doc, flowdoc.Attributes{Slug: doc, Tags: many(doc, MaxArticleTags)})
		if _, err := s.Publish(ctx, Params{Doc: doc, Actor: "author-a"}); err != nil {
			t.Fatal(err)
		}
		made += MaxArticleTags
	}
	newDoc(t, r, "over", flowdoc.Attributes{Slug: "over", Tags: many("over", MaxArticleTags)})
	_, err := s.Publish(ctx, Params{Doc: "over", Actor: "author-a"})
	if errs.CodeOf(err) != CodeTagLimit || errs.KindOf(err) != errs.RateLimited || errs.RetryAfterOf(err) <= 0 {
		t.Fatalf("publish past the day's new tags: %v", err)
	}
	// Existing tags cost nothing; another user has a day of their own.
	newDoc(t, r, "reuse", flowdoc.Attributes{Slug: "reuse", Tags: many("d0", MaxArticleTags)})
	if _, err := s.Publish(ctx, Params{Doc: "reuse", Actor: "author-a"}); err != nil {
		t.Fatalf("existing tags: %v", err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "over", Actor: "author-b"}); err != nil {
		t.Fatalf("another user's publish: %v", err)
	}
	all, err := s.Tags(ctx)
	if err != nil || len(all) != made+MaxArticleTags {
		t.Fatalf("%d tags, want %d (%v)", len(all), made+MaxArticleTags, err)
	}
}
