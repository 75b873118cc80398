package task

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
)

// entry is a queued task in the scheduler's in-memory queue.
type entry struct {
	id    ID
	due   time.Time
	kind  string
	user  string
	index int // position in dueQueue, -1 when not in it
}

// dueQueue is a min-heap of entries by (due, id).
type dueQueue []*entry

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(i, j int) bool { return q.less(q[i], q[j]) }

func (dueQueue) less(a, b *entry) bool {
	if !a.due.Equal(b.due) {
		return a.due.Before(b.due)
	}
	return a.id < b.id
}
func (q dueQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *dueQueue) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *dueQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	e.index = -1
	return e
}

// observe keeps the in-memory queue in step with a committed transition.
// The caller holds the task's lock, so observations of one task arrive in
// commit order.
func (r *Runner) observe(old, t *Task, isNew bool) {
	wasQueued := !isNew && old.State == Queued
	if !wasQueued && t.State != Queued {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.queued[t.ID]
	switch {
	case t.State != Queued:
		if e != nil {
			r.removeLocked(e)
		}
		return
	case e != nil:
		e.due = t.RunAt
		heap.Fix(&r.queue, e.index)
	default:
		r.pushLocked(&entry{id: t.ID, due: t.RunAt, kind: t.Kind, user: t.User})
	}
	r.kick()
}

func (r *Runner) pushLocked(e *entry) {
	r.queued[e.id] = e
	heap.Push(&r.queue, e)
}

func (r *Runner) removeLocked(e *entry) {
	if e.index >= 0 {
		heap.Remove(&r.queue, e.index)
	}
	delete(r.queued, e.id)
}

// kick wakes the scheduler without blocking.
func (r *Runner) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start recovers tasks left running by a previous process (each goes back
// to queued, counting its attempt, with a recovered_after_restart event;
// one that was being cancelled ends cancelled), loads the queue and starts
// dispatching. The Runner's goroutines stop at Close, not when ctx ends;
// ctx bounds recovery only.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	if r.started {
		r.mu.Unlock()
		return fmt.Errorf("%w: runner already started", ErrInvalid)
	}
	r.started = true
	r.mu.Unlock()
	waiting, err := r.recover(ctx)
	if err != nil {
		return err
	}
	if err := r.loadQueue(ctx); err != nil {
		return err
	}
	r.wg.Add(1)
	go r.loop()
	r.waiting.Store(int64(waiting))
	if waiting > 0 {
		r.wg.Add(1)
		go r.recoverLater()
	}
	if r.opts.Retention > 0 {
		r.wg.Add(1)
		go r.trimLoop()
	}
	return nil
}

// recover moves every running task back to queued before any dispatch.
// Each move is a small write made once, so it may dip into the disk's
// reserve (kv.DB.ApplyReserved); the moves the reserve cannot hold are
// left for recoverLater, and their count returned.
func (r *Runner) recover(ctx context.Context) (waiting int, err error) {
	running, err := r.indexIDs(statePrefix(Running))
	if err != nil {
		return 0, fmt.Errorf("task: recover: %w", err)
	}
	for _, id := range running {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		_, err := r.update(id, func(t *Task, x *txn) error {
			x.reserved = true
			if err := expect(t, Running, -1); err != nil {
				return err
			}
			x.event(EventRecovered, EventDetail{Attempt: t.Attempt})
			if t.CancelRequested {
				t.State, t.FinishedAt = Cancelled, x.now
				x.event(EventCancelled, EventDetail{Attempt: t.Attempt})
				return nil
			}
			t.State, t.RunAt = Queued, x.now
			return nil
		})
		if kv.BelowReserve(err) {
			waiting++
			continue
		}
		if err != nil && !errors.Is(err, ErrStale) {
			return 0, fmt.Errorf("task: recover %s: %w", id, err)
		}
	}
	return waiting, nil
}

// RecoveryWaiting is how many tasks interrupted by the previous process
// wait for the disk to leave its reserve before they go back to the
// queue (0 once they are back).
func (r *Runner) RecoveryWaiting() int { return int(r.waiting.Load()) }

// recoverWait is how often recoverLater looks whether writes resumed.
const recoverWait = 2 * time.Second

// recoverLater finishes the start-up recovery the disk's reserve could not
// hold, once writes resume: the tasks go back to the queue and run.
func (r *Runner) recoverLater() {
	defer r.wg.Done()
	for {
		t := r.clock.NewTimer(recoverWait)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if r.db.Writable() != nil {
			continue
		}
		waiting, err := r.recover(r.ctx)
		if err != nil {
			if r.ctx.Err() == nil {
				r.opts.Logger.Error("task: recovery after the disk had room again failed; it runs again at the next start", "err", err)
			}
			return
		}
		r.waiting.Store(int64(waiting))
		if waiting > 0 {
			continue
		}
		if err := r.loadQueue(r.ctx); err != nil {
			r.opts.Logger.Error("task: reload the queue after recovery", "err", err)
			return
		}
		r.opts.Logger.Info("task: writes resumed: interrupted tasks are back in the queue")
		r.kick()
		return
	}
}

func (r *Runner) indexIDs(p []byte) ([]ID, error) {
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var ids []ID
	for it.First(); it.Valid(); it.Next() {
		id, err := idFromKey(it.Key())
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, it.Error()
}

// loadQueue reads the due index (queued tasks only) into memory.
func (r *Runner) loadQueue(ctx context.Context) error {
	p := kv.TableKey(tableDue, "")
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		return err
	}
	defer it.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := it.Key()
		id, err := idFromKey(k)
		if err != nil {
			return fmt.Errorf("task: load queue: %w", err)
		}
		if r.queued[id] != nil || r.active[id] != nil {
			continue
		}
		var v dueValue
		if err := kv.Unmarshal(it.Value(), &v); err != nil {
			return fmt.Errorf("task: load queue: decode %s: %w", id, err)
		}
		due := time.Unix(0, int64(kv.ParseUint64(k[:len(k)-17])))
		r.pushLocked(&entry{id: id, due: due, kind: v.Kind, user: v.User})
	}
	r.kick()
	return it.Error()
}

// loop is the scheduler: it dispatches due tasks within the bounds and
// sleeps until the next due time or a kick.
func (r *Runner) loop() {
	defer r.wg.Done()
	var timer Timer
	for {
		next, ok := r.dispatchDue()
		var tc <-chan time.Time
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		if ok {
			timer = r.clock.NewTimer(next.Sub(r.clock.Now()))
			tc = timer.C()
		}
		select {
		case <-r.ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-r.wake:
		case <-tc:
		}
	}
}

// dispatchDue starts every due task the bounds allow, skipping tasks whose
// kind or user is at its bound, and returns the due time of the first task
// not yet due.
func (r *Runner) dispatchDue() (next time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return time.Time{}, false
	}
	now := r.clock.Now()
	var skipped []*entry
	for r.total < r.opts.Concurrency && r.queue.Len() > 0 {
		e := r.queue[0]
		if e.due.After(now) {
			next, ok = e.due, true
			break
		}
		heap.Pop(&r.queue)
		k := r.kinds[e.kind]
		if k == nil {
			// No handler yet: park it until its kind is registered.
			delete(r.queued, e.id)
			r.parked[e.kind] = append(r.parked[e.kind], e)
			continue
		}
		if k.opts.FairUsers && (k.opts.Concurrency <= 0 || r.byKind[e.kind] < k.opts.Concurrency) {
			e = r.fairestLocked(e, now)
		}
		if (k.opts.Concurrency > 0 && r.byKind[e.kind] >= k.opts.Concurrency) ||
			(r.opts.PerUser > 0 && e.user != "" && r.byUser[e.user] >= r.opts.PerUser) {
			skipped = append(skipped, e)
			continue
		}
		delete(r.queued, e.id)
		r.startLocked(e, k)
	}
	for _, e := range skipped {
		heap.Push(&r.queue, e)
	}
	return next, ok
}

// fairestLocked returns, of e (just popped) and the due queued tasks of
// e's kind, the one of the user served longest ago (KindOptions.FairUsers),
// taking it out of the queue and putting e back when it is another.
func (r *Runner) fairestLocked(e *entry, now time.Time) *entry {
	key := func(x *entry) uint64 { return r.served[x.kind+"\x00"+x.user] }
	best := e
	for _, x := range r.queue {
		if x.kind != e.kind || x.due.After(now) {
			continue
		}
		if kx, kb := key(x), key(best); kx < kb || kx == kb && r.queue.less(x, best) {
			best = x
		}
	}
	if best != e {
		heap.Remove(&r.queue, best.index)
		heap.Push(&r.queue, e)
	}
	return best
}

func (r *Runner) startLocked(e *entry, k *kind) {
	if k.opts.FairUsers {
		if r.served == nil {
			r.served = map[string]uint64{}
		}
		r.serial++
		r.served[e.kind+"\x00"+e.user] = r.serial
	}
	ctx, cancel := context.WithCancel(r.ctx)
	a := &activeRun{cancel: cancel}
	r.active[e.id] = a
	r.total++
	r.byKind[e.kind]++
	r.byUser[e.user]++
	r.wg.Add(1)
	go r.work(ctx, e, k, a)
}

// release returns a dispatched task's slot.
func (r *Runner) release(e *entry, a *activeRun) {
	r.mu.Lock()
	a.cancel()
	if r.active[e.id] == a {
		delete(r.active, e.id)
	}
	r.total--
	r.byKind[e.kind]--
	if r.byKind[e.kind] == 0 {
		delete(r.byKind, e.kind)
	}
	r.byUser[e.user]--
	if r.byUser[e.user] == 0 {
		delete(r.byUser, e.user)
	}
	r.kick()
	r.mu.Unlock()
}

// work runs one attempt of a dispatched task: start transition, handler,
// outcome transition.
func (r *Runner) work(ctx context.Context, e *entry, k *kind, a *activeRun) {
	defer r.wg.Done()
	defer r.release(e, a)
	t, err := r.update(e.id, func(t *Task, x *txn) error {
		if err := expect(t, Queued, -1); err != nil {
			return err
		}
		if t.Charged() >= t.MaxAttempts {
			t.State, t.FinishedAt = Failed, x.now
			t.LastError = fmt.Sprintf("attempts exhausted (%d of %d)", t.Charged(), t.MaxAttempts)
			x.event(EventFailed, EventDetail{Attempt: t.Attempt, Error: t.LastError})
			return nil
		}
		t.State, t.StartedAt = Running, x.now
		t.Attempt++
		x.event(EventStarted, EventDetail{Attempt: t.Attempt})
		return nil
	})
	if err != nil {
		if !errors.Is(err, ErrStale) && !errors.Is(err, ErrNotFound) {
			r.opts.Logger.Error("task: cannot start task, retrying in 1s", "task", e.id.String(), "kind", e.kind, "err", err)
			r.requeueAfterError(e)
		}
		return
	}
	if t.State != Running {
		return
	}
	herr := r.call(ctx, k, &t)
	closing := r.ctx.Err() != nil
	r.finish(t, k, herr, closing)
}

// requeueAfterError puts a task whose start could not be committed back
// into the in-memory queue, a little later, so a failing disk does not spin.
func (r *Runner) requeueAfterError(e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.queued[e.id] == nil && !r.closed {
		r.pushLocked(&entry{id: e.id, due: r.clock.Now().Add(time.Second), kind: e.kind, user: e.user})
	}
}

// call runs the handler with the kind's timeout, turning a panic into a
// retryable error.
func (r *Runner) call(ctx context.Context, k *kind, t *Task) (err error) {
	if k.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, k.opts.Timeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("task: %s handler panicked: %v\n%s", t.Kind, p, debug.Stack())
		}
	}()
	tc := *t
	return k.h(ctx, &tc)
}

// finish commits the outcome of a run that started as t.
func (r *Runner) finish(t Task, k *kind, herr error, closing bool) {
	_, err := r.update(t.ID, func(cur *Task, x *txn) error {
		if err := expect(cur, Running, t.Attempt); err != nil {
			return err
		}
		d := EventDetail{Attempt: cur.Attempt}
		x.err = herr
		if herr != nil {
			d.Error = herr.Error()
			cur.LastError = herr.Error()
		}
		switch {
		case cur.CancelRequested:
			cur.State, cur.FinishedAt = Cancelled, x.now
			x.event(EventCancelled, d)
		case herr == nil:
			cur.State, cur.FinishedAt = Succeeded, x.now
			x.event(EventSucceeded, d)
		case closing:
			// Interrupted by Close: not the task's fault, run it again.
			cur.State, cur.RunAt = Queued, x.now
			cur.Refunded++
			x.event(EventInterrupted, d)
		default:
			o := classify(herr)
			switch {
			case o.permanent:
				cur.State, cur.FinishedAt = Failed, x.now
				x.event(EventFailed, d)
			case o.rateLimited:
				delay := o.after
				if delay <= 0 {
					delay = k.opts.BackoffBase
				}
				cur.State, cur.RunAt = Queued, x.now.Add(delay)
				cur.Refunded++
				d.DelayMs, d.RunAt = delay.Milliseconds(), cur.RunAt.UnixMilli()
				x.event(EventRateLimited, d)
			case cur.Charged() >= cur.MaxAttempts:
				cur.State, cur.FinishedAt = Failed, x.now
				d.Error = fmt.Sprintf("%s (attempts exhausted: %d of %d)", d.Error, cur.Charged(), cur.MaxAttempts)
				cur.LastError = d.Error
				x.event(EventFailed, d)
			default:
				delay := max(r.opts.Jitter(k.opts.backoff(cur.Charged())), o.after)
				cur.State, cur.RunAt = Queued, x.now.Add(delay)
				d.DelayMs, d.RunAt = delay.Milliseconds(), cur.RunAt.UnixMilli()
				x.event(EventRetryScheduled, d)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrStale) {
		// The outcome could not be stored (disk error). The task stays
		// running in the store and is recovered at the next start; this
		// process will not run it again.
		r.opts.Logger.Error("task: cannot record outcome; the task is recovered at the next start",
			"task", t.ID.String(), "kind", t.Kind, "attempt", t.Attempt, "err", err)
	}
}

// Close stops dispatching, cancels running handlers (their tasks go back to
// queued unless they succeed anyway) and waits for them until ctx ends.
// It does not close the DB.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("task: close: handlers still running: %w", ctx.Err())
	}
}

// trimLoop runs the retention sweep every TrimEvery.
func (r *Runner) trimLoop() {
	defer r.wg.Done()
	for {
		t := r.clock.NewTimer(r.opts.TrimEvery)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if _, err := r.TrimLogs(r.ctx); err != nil && r.ctx.Err() == nil {
			r.opts.Logger.Error("task: retention sweep failed", "err", err)
		}
	}
}

// TrimLogs deletes the event logs of tasks that finished more than
// Options.Retention ago (no-op when Retention is 0) and returns how many
// logs it trimmed. Records stay; reading a trimmed log from an older
// cursor gives stream.ErrTrimmed. It runs on its own every TrimEvery.
func (r *Runner) TrimLogs(ctx context.Context) (int, error) {
	if r.opts.Retention <= 0 {
		return 0, nil
	}
	cutoff := r.clock.Now().Add(-r.opts.Retention)
	total := 0
	for {
		n, err := r.trimSome(ctx, cutoff, 1024)
		total += n
		if err != nil || n < 1024 {
			return total, err
		}
	}
}

// trimSome trims up to limit logs of tasks finished before cutoff.
func (r *Runner) trimSome(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	p := kv.TableKey(tableDone, "")
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: doneKey(cutoff, 0)})
	if err != nil {
		return 0, err
	}
	var keys [][]byte
	for it.First(); it.Valid() && len(keys) < limit; it.Next() {
		keys = append(keys, append([]byte(nil), it.Key()...))
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("task: trim: %w", err)
	}
	n := 0
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		id, err := idFromKey(key)
		if err != nil {
			return n, err
		}
		if err := r.trimOne(id, key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (r *Runner) trimOne(id ID, key []byte) error {
	mu := r.lock(id)
	mu.Lock()
	defer mu.Unlock()
	b := r.db.NewBatch()
	defer b.Close()
	t, err := loadTask(r.db, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err == nil && t.State.Terminal() {
		if err := stream.Trim(b, id.Stream(), t.LastSeq+1); err != nil {
			return err
		}
	}
	if err := b.Delete(key); err != nil {
		return err
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		return fmt.Errorf("task: trim %s: %w", id, err)
	}
	return nil
}
