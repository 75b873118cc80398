package task

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
)

// Options configure a Runner. Zero fields take the defaults noted.
type Options struct {
	// Concurrency bounds running tasks in total; default 8.
	Concurrency int
	// PerUser bounds running tasks of one user (Spec.User non-empty);
	// 0 means no per-user bound.
	PerUser int
	// Clock is the source of time; default RealClock.
	Clock Clock
	// Retention is how long a finished task's event log is kept; 0 keeps
	// logs forever. Records are kept either way.
	Retention time.Duration
	// TrimEvery is how often the retention sweep runs; default 1 minute.
	TrimEvery time.Duration
	// Jitter maps a backoff delay d to the delay actually used; default
	// is a uniform pick in [d/2, d].
	Jitter func(d time.Duration) time.Duration
	// Logger receives errors no caller is waiting for (a failed outcome
	// commit, a failed retention sweep); default slog.Default().
	Logger *slog.Logger
	// Hub is woken after every commit on the task's stream and on the
	// streams an OnTransition hook names (Transition.Wake); nil means a
	// private hub. Share one with the other writers of the store so that
	// one reader serves every stream.
	Hub *stream.Hub
}

// lockStripes is the number of task locks; transitions of tasks on
// different stripes commit concurrently.
const lockStripes = 256

// Runner runs tasks stored in a kv.DB. Open one per store; it is safe for
// concurrent use. The DB stays owned by the caller and must outlive the Runner.
type Runner struct {
	db    *kv.DB
	opts  Options
	clock Clock
	hub   *stream.Hub
	seed  maphash.Seed

	locks  [lockStripes]sync.Mutex // serialize transitions of one task (striped by id)
	ulocks [lockStripes]sync.Mutex // serialize enqueues of one unique key (striped)
	lastID atomic.Uint64           // last allocated ID
	// waiting counts interrupted tasks whose recovery waits for the disk
	// to leave its reserve (recoverLater).
	waiting atomic.Int64

	mu     sync.Mutex // guards every field below
	kinds  map[string]*kind
	queue  dueQueue            // queued tasks not yet dispatched, by due time
	queued map[ID]*entry       // the entries of queue
	parked map[string][]*entry // due tasks of kinds with no handler, by kind
	active map[ID]*activeRun   // dispatched tasks until their last transition
	total  int
	byKind map[string]int
	byUser map[string]int
	// served is, per kind with FairUsers and user, the serial number of
	// the user's last task of the kind to start (serial counts them).
	served   map[string]uint64
	serial   uint64
	started  bool
	closed   bool
	ctx      context.Context // cancelled by Close; parent of handler contexts
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	wake     chan struct{}
	testHook func(point string, t Task) // called after each commit (tests only)
}

type kind struct {
	h    Handler
	opts KindOptions
}

type activeRun struct {
	cancel context.CancelFunc
}

// Open returns a Runner over db. It allocates nothing in the background
// until Start; Register handlers before Start and before Enqueue.
func Open(db *kv.DB, opts Options) (*Runner, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil db", ErrInvalid)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.TrimEvery <= 0 {
		opts.TrimEvery = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Jitter == nil {
		opts.Jitter = func(d time.Duration) time.Duration {
			if d <= 1 {
				return d
			}
			return d/2 + rand.N(d/2+1)
		}
	}
	r := &Runner{
		db: db, opts: opts, clock: opts.Clock, hub: opts.Hub, seed: maphash.MakeSeed(),
		kinds: map[string]*kind{}, queued: map[ID]*entry{}, parked: map[string][]*entry{}, active: map[ID]*activeRun{},
		byKind: map[string]int{}, byUser: map[string]int{}, wake: make(chan struct{}, 1),
	}
	if r.hub == nil {
		r.hub = stream.NewHub()
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	last, err := lastTaskID(db)
	if err != nil {
		return nil, err
	}
	r.lastID.Store(uint64(last))
	return r, nil
}

func lastTaskID(db *kv.DB) (ID, error) {
	p := kv.TableKey(tableTask, "")
	it, err := db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if it.Last() {
		return idFromKey(it.Key())
	}
	return 0, it.Error()
}

// Hub returns the broadcaster the Runner notifies after every commit, for
// readers that tail task streams themselves with stream.Read (Events does
// this for you). Only the Runner appends to "task:" streams; handlers add
// their events with Emit.
func (r *Runner) Hub() *stream.Hub { return r.hub }

// Register sets the handler of kind. Registering a kind twice replaces it.
func (r *Runner) Register(kindName string, h Handler, o KindOptions) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds[kindName] = &kind{h: h, opts: o.withDefaults()}
	for _, e := range r.parked[kindName] {
		if r.queued[e.id] == nil {
			r.pushLocked(e)
		}
	}
	delete(r.parked, kindName)
	r.kick()
}

func (r *Runner) lock(id ID) *sync.Mutex {
	return &r.locks[(uint64(id)*0x9E3779B97F4A7C15)>>56%lockStripes]
}

func (r *Runner) ulock(key string) *sync.Mutex {
	return &r.ulocks[maphash.String(r.seed, key)%lockStripes]
}

// newID allocates a strictly increasing id from the clock.
func (r *Runner) newID() ID {
	for {
		last := r.lastID.Load()
		n := max(last+1, uint64(max(r.clock.Now().UnixNano(), 0)))
		if r.lastID.CompareAndSwap(last, n) {
			return ID(n)
		}
	}
}

// update runs one transition of task id: under the task's lock it reads
// the record, lets fn change a copy and queue events, and commits record,
// index moves and events in one synced batch. If fn returns an error
// nothing is written and the stored task is returned with that error.
func (r *Runner) update(id ID, fn func(t *Task, x *txn) error) (Task, error) {
	mu := r.lock(id)
	mu.Lock()
	defer mu.Unlock()
	old, err := loadTask(r.db, id)
	if err != nil {
		return Task{}, err
	}
	t := old
	x := &txn{now: r.clock.Now()}
	if err := fn(&t, x); err != nil {
		return old, err
	}
	if err := r.commit(&old, &t, x, false); err != nil {
		return old, err
	}
	return t, nil
}

// commit writes one transition durably, then updates the in-memory queue
// and wakes tailers. The caller holds the task's lock.
func (r *Runner) commit(old, t *Task, x *txn, isNew bool) error {
	b := r.db.NewBatch()
	defer b.Close()
	if err := writeTransition(b, old, t, x, isNew); err != nil {
		return fmt.Errorf("task: %s: build transition: %w", t.ID, err)
	}
	if x.extra != nil {
		if err := x.extra(b); err != nil {
			return err
		}
	}
	if err := r.hook(b, old, t, x); err != nil {
		return err
	}
	apply := r.db.Apply
	if x.reserved {
		apply = r.db.ApplyReserved
	}
	if err := apply(b, kv.Sync); err != nil {
		return fmt.Errorf("task: %s: commit %s -> %s: %w", t.ID, old.State, t.State, err)
	}
	r.observe(old, t, isNew)
	r.hub.Notify(t.ID.Stream())
	for _, name := range x.wake {
		r.hub.Notify(name)
	}
	if h := r.testHook; h != nil && len(x.events) > 0 {
		h("commit:"+x.events[len(x.events)-1].typ, *t)
	}
	return nil
}

// Enqueue stores a new queued task, durably, and returns it with
// created=true. With a UniqueKey it returns the existing queued, running or
// succeeded task with that key and created=false instead. It returns
// ErrUnknownKind when no handler is registered for s.Kind.
func (r *Runner) Enqueue(ctx context.Context, s Spec) (Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, false, err
	}
	if s.Kind == "" {
		return Task{}, false, fmt.Errorf("%w: task kind is empty", ErrInvalid)
	}
	r.mu.Lock()
	k, closed := r.kinds[s.Kind], r.closed
	r.mu.Unlock()
	if closed {
		return Task{}, false, ErrClosed
	}
	if k == nil {
		return Task{}, false, fmt.Errorf("%w %q: register it before enqueueing", ErrUnknownKind, s.Kind)
	}
	if s.UniqueKey == "" {
		t, err := r.create(s, k)
		return t, err == nil, err
	}
	mu := r.ulock(s.UniqueKey)
	mu.Lock()
	defer mu.Unlock()
	v, err := kv.Get(r.db, uniqKey(s.UniqueKey))
	switch {
	case err == nil:
		id, perr := ParseID(string(v))
		if perr != nil {
			return Task{}, false, fmt.Errorf("task: unique key %q: %w", s.UniqueKey, perr)
		}
		t, lerr := loadTask(r.db, id)
		if lerr == nil && (t.State == Queued || t.State == Running || t.State == Succeeded) {
			return t, false, nil
		}
		if lerr != nil && !errors.Is(lerr, ErrNotFound) {
			return Task{}, false, lerr
		}
	case !errors.Is(err, kv.ErrNotFound):
		return Task{}, false, fmt.Errorf("task: read unique key %q: %w", s.UniqueKey, err)
	}
	t, err := r.create(s, k)
	return t, err == nil, err
}

// newTask makes the record of a task to create from s.
func (r *Runner) newTask(s Spec, k *kind) Task {
	now := r.clock.Now()
	t := Task{
		ID: r.newID(), Kind: s.Kind, User: s.User, Payload: s.Payload, UniqueKey: s.UniqueKey,
		State: Queued, MaxAttempts: s.MaxAttempts, RunAt: s.RunAt, CreatedAt: now,
	}
	if t.MaxAttempts <= 0 {
		t.MaxAttempts = k.opts.MaxAttempts
	}
	if t.RunAt.IsZero() || t.RunAt.Before(now) {
		t.RunAt = now
	}
	return t
}

func (r *Runner) create(s Spec, k *kind) (Task, error) {
	t := r.newTask(s, k)
	x := &txn{now: t.CreatedAt}
	x.event(EventEnqueued, EventDetail{Kind: t.Kind, User: t.User, RunAt: t.RunAt.UnixMilli()})
	mu := r.lock(t.ID)
	mu.Lock()
	defer mu.Unlock()
	b := r.db.NewBatch()
	defer b.Close()
	if s.UniqueKey != "" {
		if err := b.Set(uniqKey(s.UniqueKey), []byte(t.ID.String())); err != nil {
			return Task{}, err
		}
	}
	if err := writeTransition(b, &Task{}, &t, x, true); err != nil {
		return Task{}, fmt.Errorf("task: enqueue %s: %w", s.Kind, err)
	}
	if err := r.hook(b, &Task{}, &t, x); err != nil {
		return Task{}, err
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		return Task{}, fmt.Errorf("task: enqueue %s: %w", s.Kind, err)
	}
	r.observe(&Task{}, &t, true)
	r.hub.Notify(t.ID.Stream())
	for _, name := range x.wake {
		r.hub.Notify(name)
	}
	if h := r.testHook; h != nil {
		h("commit:"+EventEnqueued, t)
	}
	return t, nil
}

// Get returns the task with id, or ErrNotFound.
func (r *Runner) Get(ctx context.Context, id ID) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	return loadTask(r.db, id)
}

// List returns up to limit tasks in state s with ids after the given one
// (0 to start), in id order. limit <= 0 means no limit.
func (r *Runner) List(ctx context.Context, s State, after ID, limit int) ([]Task, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("%w: state %q", ErrInvalid, s)
	}
	p := statePrefix(s)
	lower := p
	if after != 0 {
		lower = append(stateKey(s, after), 0)
	}
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: lower, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Task
	for it.First(); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id, err := idFromKey(it.Key())
		if err != nil {
			return nil, err
		}
		t, err := loadTask(r.db, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, it.Error()
}

// Cancel cancels task id. A queued task ends cancelled at once. A running
// one records cancel_requested and gets its context cancelled; it ends
// cancelled when its handler returns, whatever it returns (or at the next
// start if the process dies first). Cancel returns the task as stored
// after the call, ErrFinished for a finished task, ErrNotFound.
func (r *Runner) Cancel(ctx context.Context, id ID) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	t, err := r.update(id, func(t *Task, x *txn) error {
		switch t.State {
		case Queued:
			t.State, t.FinishedAt, t.CancelRequested = Cancelled, x.now, true
			x.event(EventCancelled, EventDetail{Attempt: t.Attempt})
		case Running:
			if t.CancelRequested {
				return errNoChange
			}
			t.CancelRequested = true
			x.event(EventCancelRequested, EventDetail{Attempt: t.Attempt})
		default:
			return fmt.Errorf("%w: task %s is %s", ErrFinished, t.ID, t.State)
		}
		return nil
	})
	if errors.Is(err, errNoChange) {
		err = nil
	}
	if err != nil {
		return t, err
	}
	if t.State == Running {
		r.mu.Lock()
		if a := r.active[id]; a != nil {
			a.cancel()
		}
		r.mu.Unlock()
	}
	return t, nil
}

var errNoChange = errors.New("task: no change")

// hook calls the kind's OnTransition, if any, for the transition old -> t
// being built in b.
func (r *Runner) hook(b *kv.Batch, old, t *Task, x *txn) error {
	r.mu.Lock()
	k := r.kinds[t.Kind]
	r.mu.Unlock()
	if k == nil || k.opts.OnTransition == nil {
		return nil
	}
	tr := &Transition{Old: *old, New: *t, Events: append([]Appended(nil), x.appended...), Err: x.err}
	if err := k.opts.OnTransition(b, tr); err != nil {
		return fmt.Errorf("task: %s: %s hook: %w", t.ID, t.Kind, err)
	}
	x.wake = tr.wake
	return nil
}

// EnqueueIn adds the creation of a queued task to b, the caller's batch,
// so that the task and the caller's own records (a business fact the task
// executes) are created atomically. The task does not exist until b
// commits with Sync; after a successful commit the caller calls Enqueued
// with the returned task so that this process schedules it. A crash
// between the two loses nothing: Start loads the queue from the store. If
// b is never committed, nothing happened.
//
// Spec.UniqueKey is refused (ErrInvalid): inside its own batch the caller
// owns idempotency and keys its own records. The kind's OnTransition is
// not called: the caller writes its records in b itself. It returns
// ErrUnknownKind for a kind with no handler and ErrClosed after Close.
func (r *Runner) EnqueueIn(ctx context.Context, b *kv.Batch, s Spec) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	if s.Kind == "" {
		return Task{}, fmt.Errorf("%w: task kind is empty", ErrInvalid)
	}
	if s.UniqueKey != "" {
		return Task{}, fmt.Errorf("%w: EnqueueIn takes no unique key; key your own records in the batch", ErrInvalid)
	}
	r.mu.Lock()
	k, closed := r.kinds[s.Kind], r.closed
	r.mu.Unlock()
	if closed {
		return Task{}, ErrClosed
	}
	if k == nil {
		return Task{}, fmt.Errorf("%w %q: register it before enqueueing", ErrUnknownKind, s.Kind)
	}
	t := r.newTask(s, k)
	x := &txn{now: t.CreatedAt}
	x.event(EventEnqueued, EventDetail{Kind: t.Kind, User: t.User, RunAt: t.RunAt.UnixMilli()})
	if err := writeTransition(b, &Task{}, &t, x, true); err != nil {
		return Task{}, fmt.Errorf("task: enqueue %s: %w", s.Kind, err)
	}
	return t, nil
}

// Enqueued tells the Runner that the batch holding t's creation (see
// EnqueueIn) committed: t is scheduled and readers of its stream are
// woken. Calling it for a task that already left the queue (cancelled
// meanwhile) is harmless.
func (r *Runner) Enqueued(t Task) {
	mu := r.lock(t.ID)
	mu.Lock()
	defer mu.Unlock()
	cur, err := loadTask(r.db, t.ID)
	if err != nil {
		r.opts.Logger.Error("task: enqueued task not found after its commit", "task", t.ID.String(), "err", err)
		return
	}
	if cur.State == Queued {
		r.observe(&Task{}, &cur, true)
	}
	r.hub.Notify(t.ID.Stream())
	if h := r.testHook; h != nil {
		h("commit:"+EventEnqueued, cur)
	}
}

// Complete ends the running attempt t as succeeded together with the
// handler's business effect: write adds the effect's records to the batch
// that holds the success transition, so both commit or neither does. A
// crash can then never leave the effect without the success, nor run the
// handler again once the effect exists. write runs under the task's lock
// and must not call the Runner.
//
// It returns ErrStale when t is not the running attempt, and
// ErrCancelRequested, writing nothing, when a cancel was requested: the
// handler should return, and the task ends cancelled. After Complete
// returns nil, whatever the handler returns is ignored.
//
// ctx is not consulted: the handler's context is cancelled by a cancel,
// a timeout or Close, and only a cancel (read from the record under the
// lock) keeps the finished work from counting.
func (r *Runner) Complete(_ context.Context, t *Task, write func(b *kv.Batch) error) error {
	nt, err := r.update(t.ID, func(cur *Task, x *txn) error {
		if err := expect(cur, Running, t.Attempt); err != nil {
			return err
		}
		if cur.CancelRequested {
			return fmt.Errorf("%w: task %s", ErrCancelRequested, cur.ID)
		}
		cur.State, cur.FinishedAt, cur.LastError = Succeeded, x.now, ""
		x.event(EventSucceeded, EventDetail{Attempt: cur.Attempt})
		x.extra = write
		return nil
	})
	if err != nil {
		return err
	}
	*t = nt
	return nil
}

// Emit appends an event of type typ to the log of t, which must be the
// running attempt the handler was given (ErrStale otherwise). Types used
// by the runner itself are refused.
func (r *Runner) Emit(ctx context.Context, t *Task, typ string, data any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if typ == "" || reserved(typ) {
		return fmt.Errorf("%w: event type %q is reserved or empty", ErrInvalid, typ)
	}
	nt, err := r.update(t.ID, func(cur *Task, x *txn) error {
		if err := expect(cur, Running, t.Attempt); err != nil {
			return err
		}
		x.event(typ, data)
		return nil
	})
	if err == nil {
		t.LastSeq = nt.LastSeq
	}
	return err
}

// Events yields the events of task id with seq > after, in order: first
// those already stored, then new ones as they are committed. It stops
// after yielding the task's terminal event (succeeded, failed or
// cancelled), when ctx ends (yielding ctx.Err()) or on an error such as
// ErrNotFound or stream.ErrTrimmed (the cursor is older than retention).
func (r *Runner) Events(ctx context.Context, id ID, after uint64) iter.Seq2[stream.Event, error] {
	return func(yield func(stream.Event, error) bool) {
		name := id.Stream()
		cur := after
		// drain yields what the store holds after cur; stop means the
		// iteration is over (terminal event, consumer gone or error).
		drain := func() (n int, stop bool) {
			evs, err := stream.Read(r.db, name, cur, 256)
			if err != nil {
				yield(stream.Event{}, err)
				return 0, true
			}
			for _, e := range evs {
				if !yield(e, nil) {
					return 0, true
				}
				cur = e.Seq
				if terminalEvent(e.Type) {
					return 0, true
				}
			}
			return len(evs), false
		}
		for {
			if n, stop := drain(); stop {
				return
			} else if n > 0 {
				continue
			}
			t, err := loadTask(r.db, id)
			if err != nil {
				yield(stream.Event{}, err)
				return
			}
			if t.State.Terminal() && cur >= t.LastSeq {
				return
			}
			// Arm the wake-up only now, and read once more, so that no
			// event slips in between and finished tasks leave no waiter.
			wait := r.hub.Wait(name)
			if n, stop := drain(); stop {
				return
			} else if n > 0 {
				continue
			}
			select {
			case <-wait:
			case <-ctx.Done():
				yield(stream.Event{}, ctx.Err())
				return
			}
		}
	}
}
