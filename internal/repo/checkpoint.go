package repo

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/objstore"
)

// Default checkpoint rules (DESIGN.md §4).
const (
	DefaultCheckpointIdle = 30 * time.Second
	DefaultCheckpointMax  = 10 * time.Minute
)

// sealTimeout bounds one checkpoint the policy seals.
const sealTimeout = 30 * time.Second

// checkpointer is the checkpoint policy of the content service: a draft
// left unsealed is sealed as an "idle" checkpoint checkpoint.idle after
// the last save that changed it, or as a "max_duration" one
// checkpoint.max after it became unsealed, whichever comes first. It is
// fed by every draft save whatever the transport (SaveDraft calls saved)
// and by every version written (sealed), both under the document's lock,
// so its view of a document follows the order of its commits. Boundaries
// (an editor leaving, an AI request, publish, restore) seal through their
// own calls; a draft left unsealed when the process stops is sealed as a
// "recovery" checkpoint when it is next opened (OpenDraft).
//
// One timer per document with an unsealed draft saved by this process; a
// save does not touch the timer unless the document's next due time comes
// earlier: a timer that fires early (the draft was saved meanwhile) arms
// itself again for the time now due.
type checkpointer struct {
	r         *Repo
	clock     Clock
	idle, max time.Duration // <= 0: the rule is off
	log       *slog.Logger

	observe atomic.Pointer[func(VersionInfo)] // OnCheckpoint's function

	mu     sync.Mutex // guards docs and closed
	docs   map[string]*pendingSeal
	closed bool
	wg     sync.WaitGroup // seals in progress; Close waits for them
}

// pendingSeal is a document whose draft is unsealed. Its fields are
// guarded by checkpointer.mu.
type pendingSeal struct {
	actor string    // the last editor whose save changed the draft
	last  time.Time // that save
	since time.Time // the draft became unsealed
	timer Timer     // nil while a seal runs
	at    time.Time // when timer fires
}

func (c *checkpointer) on() bool { return c.idle > 0 || c.max > 0 }

// due is when the first rule seals p.
func (c *checkpointer) due(p *pendingSeal) time.Time {
	var at time.Time
	if c.idle > 0 {
		at = p.last.Add(c.idle)
	}
	if c.max > 0 {
		if m := p.since.Add(c.max); at.IsZero() || m.Before(at) {
			at = m
		}
	}
	return at
}

// saved records a committed save of doc by actor at now; unsealed and
// since are the draft's state after it. Called under the document lock.
func (c *checkpointer) saved(doc, actor string, now time.Time, unsealed bool, since time.Time) {
	if !c.on() {
		return
	}
	if !unsealed {
		c.sealed(doc) // the save went back to the sealed body
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	p := c.docs[doc]
	if p == nil {
		p = &pendingSeal{}
		c.docs[doc] = p
	}
	p.actor, p.last, p.since = actor, now, since
	if p.since.IsZero() || p.since.After(now) {
		p.since = now
	}
	c.armLocked(doc, p)
}

// armLocked makes p's timer fire at its due time unless it fires earlier
// (or a seal runs, which looks again when it ends).
func (c *checkpointer) armLocked(doc string, p *pendingSeal) {
	at := c.due(p)
	if p.timer != nil {
		if !at.Before(p.at) {
			return // fires early and arms itself again
		}
		p.timer.Stop()
	}
	p.at = at
	p.timer = c.clock.AfterFunc(at.Sub(c.clock.Now()), func() { c.fire(doc, p) })
}

// sealed forgets doc: a version was just written, so its draft is sealed.
// Called under the document lock.
func (c *checkpointer) sealed(doc string) {
	if !c.on() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.docs[doc]; p != nil {
		if p.timer != nil {
			p.timer.Stop()
		}
		delete(c.docs, doc)
	}
}

// fire seals doc when a rule is due, or arms the timer again.
func (c *checkpointer) fire(doc string, p *pendingSeal) {
	c.mu.Lock()
	if c.closed || c.docs[doc] != p {
		c.mu.Unlock()
		return
	}
	p.timer = nil
	now := c.clock.Now()
	var reason string
	switch {
	case c.max > 0 && !now.Before(p.since.Add(c.max)):
		reason = objstore.ReasonMaxDuration
	case c.idle > 0 && !now.Before(p.last.Add(c.idle)):
		reason = objstore.ReasonIdle
	default:
		c.armLocked(doc, p)
		c.mu.Unlock()
		return
	}
	actor := p.actor
	c.wg.Add(1)
	c.mu.Unlock()
	defer c.wg.Done()

	ctx, cancel := context.WithTimeout(context.Background(), sealTimeout)
	defer cancel()
	v, created, err := c.r.Seal(ctx, doc, reason, actor)
	switch {
	case err != nil:
		c.log.Warn("repo: checkpoint failed", "doc", doc, "reason", reason, "err", err)
	case created:
		c.log.Debug("repo: checkpoint", "doc", doc, "reason", reason, "label", v.Label)
		if f := c.observe.Load(); f != nil {
			(*f)(v)
		}
	}
	// A version written by the seal forgot p already (sealed); what is
	// left is a seal that found nothing to seal or failed. A save that
	// came meanwhile armed a new timer: keep that one.
	c.mu.Lock()
	if c.docs[doc] == p && p.timer == nil {
		delete(c.docs, doc)
	}
	c.mu.Unlock()
}

// close stops every timer and waits for the seals in progress.
func (c *checkpointer) close() {
	c.mu.Lock()
	c.closed = true
	for doc, p := range c.docs {
		if p.timer != nil {
			p.timer.Stop()
		}
		delete(c.docs, doc)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// PendingCheckpoints lists the documents whose drafts this process saved
// and has not sealed yet: those the checkpoint rules will seal.
func (r *Repo) PendingCheckpoints() []string {
	c := r.cp
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.docs))
	for doc := range c.docs {
		out = append(out, doc)
	}
	return out
}

// OnCheckpoint makes f learn of every checkpoint the rules seal (idle,
// max_duration), after it committed: for metrics. f must return quickly
// and must not call the Repo's write methods.
func (r *Repo) OnCheckpoint(f func(VersionInfo)) { r.cp.observe.Store(&f) }
