package repo

import (
	"sync"
)

// The kinds of Event that are not a version's kind or ChangeDraft.
const (
	ChangeDeleteDoc   = "delete"   // DeleteDoc hid the document
	ChangeUndeleteDoc = "undelete" // UndeleteDoc brought it back
	ChangeChown       = "chown"    // Chown gave it another owner
	ChangePurge       = "purge"    // GC removed a deleted document for good
	// ChangeOverflow is not a change: the subscriber fell more than
	// MaxPending events behind and those were dropped; it should read
	// again what it keeps (every document may have changed).
	ChangeOverflow = "overflow"
)

// MaxPending is how many events a subscriber may fall behind before its
// queue is replaced by one ChangeOverflow event.
const MaxPending = 1 << 16

// Event is what a subscriber learns of one committed change of a
// document: a wake-up with enough to find what changed, not the change
// itself (read the store for that; DESIGN §3: change notification is a
// wake-up only).
type Event struct {
	Doc string
	// Kind is ChangeDraft for a draft save that sealed nothing, the
	// version's kind for a change that sealed one (create, checkpoint,
	// recovery, accept_suggestion, restore, import), or ChangeDeleteDoc,
	// ChangeUndeleteDoc, ChangeChown, ChangePurge, ChangeOverflow.
	Kind  string
	Actor string
	// Version is the label of the version the change sealed ("" if none).
	Version string
	// Changed lists the blocks the change added, changed or deleted
	// (draft saves and versions); BodyChanged whether the body's
	// fingerprint moved.
	Changed     []string
	BodyChanged bool
	// SuggestionID names the suggestion an accept_suggestion applied.
	SuggestionID string
	Time         int64 // Unix ms
}

// Subscribe calls fn with an Event for every change of a document
// committed from then on, in commit order (per document and across
// documents), on a goroutine of its own: the writer only appends the
// event to the subscriber's queue after its batch committed, under the
// document lock, and never waits for fn. fn may take as long as it needs
// and may call the Repo (read, or write: its own writes come back as
// events); it must not keep the Event's slices. A subscriber more than
// MaxPending events behind gets one ChangeOverflow event instead of the
// dropped ones. Any number of subscribers may be installed; cancel stops
// one (events queued for it are dropped) and waits for its fn to return,
// so fn must not call it.
// Close cancels every subscriber.
//
// A subscriber sees only committed changes, and sees each after the
// writer's caller may already have its answer; for records that must
// commit atomically with a change, use the ChangeHook (SetHook) or, per
// change, ChangeParams.Value.
func (r *Repo) Subscribe(fn func(Event)) (cancel func()) {
	s := &subscriber{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.subsMu.Lock()
	r.subs = append(r.subs, s)
	r.subsMu.Unlock()
	go s.run()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.subsMu.Lock()
			for i, x := range r.subs {
				if x == s {
					r.subs = append(r.subs[:i:i], r.subs[i+1:]...)
					break
				}
			}
			r.subsMu.Unlock()
			s.stop()
		})
	}
}

// notify queues e for every subscriber. It is called after a change
// committed, under the document's lock, so that events of one document
// are queued in commit order; it never blocks on a subscriber.
func (r *Repo) notify(e Event) {
	r.subsMu.Lock()
	subs := r.subs
	r.subsMu.Unlock()
	for _, s := range subs {
		s.push(e)
	}
}

// closeSubs cancels every subscriber (Close).
func (r *Repo) closeSubs() {
	r.subsMu.Lock()
	subs := r.subs
	r.subs = nil
	r.subsMu.Unlock()
	for _, s := range subs {
		s.stop()
	}
}

// subscriber is one Subscribe: a queue drained by its goroutine.
type subscriber struct {
	fn   func(Event)
	wake chan struct{} // a token when the queue became non-empty
	done chan struct{} // closed when run returned

	mu      sync.Mutex // guards the fields below
	queue   []Event
	stopped bool
}

func (s *subscriber) push(e Event) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= MaxPending {
		s.queue = append(s.queue[:0], Event{Kind: ChangeOverflow, Time: e.Time})
	} else {
		s.queue = append(s.queue, e)
	}
	select { // under mu: stop closes wake under it too
	case s.wake <- struct{}{}:
	default:
	}
	s.mu.Unlock()
}

func (s *subscriber) run() {
	defer close(s.done)
	for range s.wake {
		for {
			s.mu.Lock()
			if s.stopped || len(s.queue) == 0 {
				stopped := s.stopped
				s.mu.Unlock()
				if stopped {
					return
				}
				break
			}
			batch := s.queue
			s.queue = nil
			s.mu.Unlock()
			for _, e := range batch {
				s.fn(e)
			}
		}
	}
}

func (s *subscriber) stop() {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.wake)
	}
	s.mu.Unlock()
	<-s.done
}
