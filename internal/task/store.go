package task

import (
	"errors"
	"fmt"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
)

// Tables under kv.PrefixTable (see package doc).
const (
	tableTask  = "task"
	tableState = "taskstate"
	tableDue   = "taskdue"
	tableDone  = "taskdone"
	tableUniq  = "taskuniq"
)

func recKey(id ID) []byte                { return kv.TableKey(tableTask, id.String()) }
func stateKey(s State, id ID) []byte     { return kv.TableKey(tableState, string(s), id.String()) }
func statePrefix(s State) []byte         { return kv.TableKey(tableState, string(s), "") }
func dueKey(at time.Time, id ID) []byte  { return kv.TableKey(tableDue, timePart(at), id.String()) }
func doneKey(at time.Time, id ID) []byte { return kv.TableKey(tableDone, timePart(at), id.String()) }
func uniqKey(key string) []byte          { return kv.TableKey(tableUniq, key) }

func timePart(t time.Time) string {
	ns := t.UnixNano()
	if ns < 0 {
		ns = 0
	}
	return string(kv.Uint64(nil, uint64(ns)))
}

// idFromKey parses the trailing 16 hex digits of an index key.
func idFromKey(k []byte) (ID, error) {
	if len(k) < 16 {
		return 0, fmt.Errorf("task: index key %q too short", k)
	}
	return ParseID(string(k[len(k)-16:]))
}

// dueValue is stored in the due index so that the scheduler can apply its
// bounds without reading records.
type dueValue struct {
	Kind string `msgpack:"k"`
	User string `msgpack:"u,omitempty"`
}

// Event types written by the runner. Handlers may append their own types
// with Runner.Emit; the names below are reserved.
const (
	EventEnqueued        = "enqueued"
	EventStarted         = "started"
	EventRetryScheduled  = "retry_scheduled"
	EventRateLimited     = "rate_limited"
	EventSucceeded       = "succeeded"
	EventFailed          = "failed"
	EventCancelRequested = "cancel_requested"
	EventCancelled       = "cancelled"
	EventRecovered       = "recovered_after_restart"
	EventInterrupted     = "interrupted"
)

// terminalEvent reports whether typ is the last event a task ever gets.
func terminalEvent(typ string) bool {
	return typ == EventSucceeded || typ == EventFailed || typ == EventCancelled
}

func reserved(typ string) bool {
	switch typ {
	case EventEnqueued, EventStarted, EventRetryScheduled, EventRateLimited, EventSucceeded,
		EventFailed, EventCancelRequested, EventCancelled, EventRecovered, EventInterrupted:
		return true
	}
	return false
}

// EventDetail is the Data of the runner's own events (decode with
// kv.Unmarshal). Fields that do not apply to an event type are zero.
type EventDetail struct {
	Kind    string `msgpack:"kind,omitempty" json:"kind,omitempty"`
	User    string `msgpack:"user,omitempty" json:"user,omitempty"`
	Attempt int    `msgpack:"attempt,omitempty" json:"attempt,omitempty"`
	Error   string `msgpack:"error,omitempty" json:"error,omitempty"`
	// DelayMs is the delay before the next run (retry_scheduled, rate_limited).
	DelayMs int64 `msgpack:"delay_ms,omitempty" json:"delay_ms,omitempty"`
	// RunAt is the next due time in Unix milliseconds.
	RunAt int64 `msgpack:"run_at,omitempty" json:"run_at,omitempty"`
}

func loadTask(r kv.Reader, id ID) (Task, error) {
	v, err := kv.Get(r, recKey(id))
	if errors.Is(err, kv.ErrNotFound) {
		return Task{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Task{}, fmt.Errorf("task: read %s: %w", id, err)
	}
	var t Task
	if err := kv.Unmarshal(v, &t); err != nil {
		return Task{}, fmt.Errorf("task: decode %s: %w", id, err)
	}
	return t, nil
}

// txn collects what one transition adds besides the record and index moves.
type txn struct {
	now    time.Time
	events []pendingEvent
	// err is the handler's error of an outcome transition (for OnTransition).
	err error
	// extra adds the caller's writes to the batch (Complete).
	extra func(b *kv.Batch) error
	// appended are the events written, with their seqs (set by writeTransition).
	appended []Appended
	// wake are streams to notify after the commit (OnTransition's).
	wake []string
	// reserved lets the commit dip into the disk's reserve (start-up
	// recovery: kv.DB.ApplyReserved).
	reserved bool
}

type pendingEvent struct {
	typ  string
	data any
}

func (x *txn) event(typ string, data any) { x.events = append(x.events, pendingEvent{typ, data}) }

// expect asserts the (state, attempt) a transition was computed from;
// attempt < 0 accepts any attempt.
func expect(t *Task, s State, attempt int) error {
	if t.State != s || (attempt >= 0 && t.Attempt != attempt) {
		return fmt.Errorf("%w: task %s is %s attempt %d, expected %s attempt %d",
			ErrStale, t.ID, t.State, t.Attempt, s, attempt)
	}
	return nil
}

// writeTransition adds to b everything that moves old to t: record, state
// index, due index, done index and the events, numbering them after
// old.LastSeq. It updates t.LastSeq.
func writeTransition(b *kv.Batch, old, t *Task, x *txn, isNew bool) error {
	id := t.ID
	if isNew || old.State != t.State {
		if !isNew {
			if err := b.Delete(stateKey(old.State, id)); err != nil {
				return err
			}
		}
		if err := b.Set(stateKey(t.State, id), nil); err != nil {
			return err
		}
	}
	wasQueued := !isNew && old.State == Queued
	isQueued := t.State == Queued
	if wasQueued && (!isQueued || !old.RunAt.Equal(t.RunAt)) {
		if err := b.Delete(dueKey(old.RunAt, id)); err != nil {
			return err
		}
	}
	if isQueued && (!wasQueued || !old.RunAt.Equal(t.RunAt)) {
		v, err := kv.Marshal(dueValue{Kind: t.Kind, User: t.User})
		if err != nil {
			return err
		}
		if err := b.Set(dueKey(t.RunAt, id), v); err != nil {
			return err
		}
	}
	if t.State.Terminal() && (isNew || !old.State.Terminal()) {
		if err := b.Set(doneKey(t.FinishedAt, id), nil); err != nil {
			return err
		}
	}
	ms := x.now.UnixMilli()
	x.appended = x.appended[:0]
	for _, e := range x.events {
		t.LastSeq++
		if err := stream.Append(b, id.Stream(), t.LastSeq, e.typ, ms, e.data); err != nil {
			return err
		}
		x.appended = append(x.appended, Appended{Type: e.typ, Seq: t.LastSeq, Data: e.data})
	}
	v, err := kv.Marshal(t)
	if err != nil {
		return fmt.Errorf("task: encode %s: %w", id, err)
	}
	return b.Set(recKey(id), v)
}
