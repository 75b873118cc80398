package task

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
)

var (
	// ErrNotFound is returned when no task has the given id.
	ErrNotFound error = errs.E(errs.NotFound, "task: not found")
	// ErrStale is returned when a transition's expected (state, attempt)
	// no longer matches the stored record: someone else moved the task.
	ErrStale error = errs.E(errs.Conflict, "task: stale transition")
	// ErrFinished is returned by Cancel and Emit for a task that already
	// reached a terminal state.
	ErrFinished error = errs.E(errs.Conflict, "task: already finished")
	// ErrUnknownKind is returned by Enqueue for a kind with no registered handler.
	ErrUnknownKind error = errs.E(errs.Invalid, "task: no handler registered for kind")
	// ErrClosed is returned after Close.
	ErrClosed error = errs.E(errs.Unavailable, "task: runner closed")
	// ErrInvalid is returned for a malformed Spec, ID or option.
	ErrInvalid error = errs.E(errs.Invalid, "task: invalid argument")
	// ErrCancelRequested is returned by Complete when a cancel was
	// requested for the running task: nothing was written, and the task
	// ends cancelled when its handler returns.
	ErrCancelRequested error = errs.E(errs.Canceled, "task: cancel requested")
)

// State is a task's place in its life cycle.
type State string

// The task states. Succeeded, Failed and Cancelled are terminal.
const (
	Queued    State = "queued"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// States lists every state in life-cycle order.
var States = []State{Queued, Running, Succeeded, Failed, Cancelled}

// Terminal reports whether s is a final state.
func (s State) Terminal() bool { return s == Succeeded || s == Failed || s == Cancelled }

// Valid reports whether s is one of the five states.
func (s State) Valid() bool {
	for _, v := range States {
		if s == v {
			return true
		}
	}
	return false
}

// ID identifies a task. IDs grow with creation time (they are allocated from
// the clock, strictly increasing within a store), so id order is enqueue order.
type ID uint64

// String is the 16-digit lowercase hex form used in keys and stream names.
func (id ID) String() string {
	const hex = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hex[id&0xf]
		id >>= 4
	}
	return string(b[:])
}

// Short is the last 8 hex digits, for logs.
func (id ID) Short() string { return id.String()[8:] }

// Stream is the name of the task's event stream.
func (id ID) Stream() string { return "task:" + id.String() }

// ParseID parses the String form of an ID.
func ParseID(s string) (ID, error) {
	if len(s) != 16 {
		return 0, fmt.Errorf("%w: task id %q must be 16 hex digits", ErrInvalid, s)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: task id %q must be 16 hex digits", ErrInvalid, s)
	}
	return ID(v), nil
}

// Task is a task record as stored under t/task/<id>.
type Task struct {
	ID        ID     `msgpack:"id" json:"id"`
	Kind      string `msgpack:"kind" json:"kind"`
	User      string `msgpack:"user,omitempty" json:"user,omitempty"`
	Payload   []byte `msgpack:"payload,omitempty" json:"payload,omitempty"`
	UniqueKey string `msgpack:"unique_key,omitempty" json:"unique_key,omitempty"`
	State     State  `msgpack:"state" json:"state"`
	// Attempt counts runs started (including runs interrupted by a crash).
	// It never decreases; transitions assert it.
	Attempt int `msgpack:"attempt" json:"attempt"`
	// Refunded counts runs that do not count against MaxAttempts.
	Refunded    int `msgpack:"refunded,omitempty" json:"refunded,omitempty"`
	MaxAttempts int `msgpack:"max_attempts" json:"max_attempts"`
	// RunAt is when a queued task becomes due.
	RunAt      time.Time `msgpack:"run_at" json:"run_at"`
	CreatedAt  time.Time `msgpack:"created_at" json:"created_at"`
	StartedAt  time.Time `msgpack:"started_at,omitempty" json:"started_at,omitzero"`
	FinishedAt time.Time `msgpack:"finished_at,omitempty" json:"finished_at,omitzero"`
	// LastError is the message of the last failed run.
	LastError       string `msgpack:"last_error,omitempty" json:"last_error,omitempty"`
	CancelRequested bool   `msgpack:"cancel_requested,omitempty" json:"cancel_requested,omitempty"`
	// LastSeq is the seq of the task's last event.
	LastSeq uint64 `msgpack:"last_seq" json:"last_seq"`
}

// Charged is the number of runs that count against MaxAttempts.
func (t *Task) Charged() int { return t.Attempt - t.Refunded }

// Spec describes a task to enqueue.
type Spec struct {
	Kind    string
	User    string // bounds per-user concurrency; may be empty
	Payload []byte
	// UniqueKey, when set, makes Enqueue idempotent: while a task with this
	// key is queued, running or succeeded, Enqueue returns it instead of
	// creating another. A failed or cancelled one is replaced.
	UniqueKey string
	// RunAt delays the first run; zero means now.
	RunAt time.Time
	// MaxAttempts overrides the kind's setting when > 0.
	MaxAttempts int
}

// Handler runs one attempt of a task. The context is cancelled when the
// task is cancelled, when the kind's Timeout passes and when the Runner
// closes. The Task is a copy of the running record. The returned error
// decides what happens next (see package doc); a handler that writes a
// business effect should key it by t.ID so that a rerun after a crash
// finds it already done.
type Handler func(ctx context.Context, t *Task) error

// KindOptions are per-kind settings. Zero fields take the defaults noted.
type KindOptions struct {
	// Concurrency bounds running tasks of this kind; 0 means only the
	// Runner's total bound applies.
	Concurrency int
	// MaxAttempts is the number of charged runs before the task fails; default 5.
	MaxAttempts int
	// BackoffBase is the delay before the first retry; default 1s. Each
	// further retry doubles it, up to BackoffCap (default 5m); jitter
	// spreads the delay over [d/2, d].
	BackoffBase time.Duration
	BackoffCap  time.Duration
	// Timeout bounds one run (wall-clock time, not the injected Clock); 0
	// means none. A timed-out run is retryable.
	Timeout time.Duration
	// FairUsers shares the kind's slots among users: of the due tasks of
	// the kind, the next to start is one of the user whose last task of
	// the kind started longest ago (never first), then by due time. One
	// user's queue then cannot keep another's task waiting behind all of
	// it. Off: due order alone.
	FairUsers bool
	// OnTransition, when set, is called for every transition of a task of
	// this kind, inside the transition: under the task's lock, with the
	// batch that holds the transition, before it commits. What it adds to
	// b commits atomically with the transition (a business record that
	// follows the task's state: a run's status, its own event stream); an
	// error aborts the transition, which then behaves like a failed commit
	// (nothing is written). It must not call the Runner. Creations by
	// EnqueueIn do not call it: their caller writes its records in the
	// same batch itself.
	OnTransition func(b *kv.Batch, tr *Transition) error
}

// Transition is what OnTransition learns about one transition.
type Transition struct {
	// Old is the record before the transition (zero for a creation), New
	// the record it writes.
	Old, New Task
	// Events are the task events the transition appends, in order.
	Events []Appended
	// Err is the handler's error for the transition that records a run's
	// outcome (retry_scheduled, rate_limited, failed, cancelled,
	// interrupted); nil otherwise.
	Err error

	wake []string
}

// Wake asks the Runner to wake the readers of stream (on its Hub) once
// the transition has committed: the hook appended events to it.
func (tr *Transition) Wake(stream string) { tr.wake = append(tr.wake, stream) }

// Appended is one event a transition appends to the task's stream.
type Appended struct {
	Type string
	Seq  uint64
	// Data is the event's payload: an EventDetail for the runner's own
	// types, the handler's value for Emit.
	Data any
}

func (o KindOptions) withDefaults() KindOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = time.Second
	}
	if o.BackoffCap <= 0 {
		o.BackoffCap = 5 * time.Minute
	}
	if o.BackoffCap < o.BackoffBase {
		o.BackoffCap = o.BackoffBase
	}
	return o
}

// backoff is the un-jittered delay after the n-th charged failure (n >= 1).
func (o KindOptions) backoff(n int) time.Duration {
	d := o.BackoffBase
	for i := 1; i < n && d < o.BackoffCap; i++ {
		d *= 2
	}
	return min(d, o.BackoffCap)
}
