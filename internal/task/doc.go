// Package task is Folio's durable task runner: a queue of work items kept in
// the Pebble store (package kv), executed by handlers registered by kind,
// that survives crashes and restarts.
//
// # States
//
// A task is queued, running, succeeded, failed or cancelled. The last three
// are terminal. Every transition is one Pebble batch committed with Sync that
// writes the new record, moves the task between state indexes and appends
// the transition's event to the task's stream ("task:<id>", package stream).
// A transition first reads the record under the task's lock and asserts the
// expected (state, attempt); a writer holding an older view gets ErrStale
// and changes nothing. Locks are striped by task id, so transitions of
// different tasks commit concurrently and share WAL syncs (group commit).
//
// # Keys
//
//	t/task/<id>                         record (msgpack Task)
//	t/taskstate/<state>\x00<id>         state index (empty value)
//	t/taskdue/<8-byte due ns>\x00<id>   queued tasks by due time (value: kind, user)
//	t/taskdone/<8-byte end ns>\x00<id>  finished tasks whose log is not yet trimmed
//	t/taskuniq/<unique key>             unique key -> task id
//	e/task:<id>\x00<8-byte seq>         the task's events (package stream)
//
// <id> is the 16-digit lowercase hex form of the ID, so byte order is id
// order. The due index is loaded into memory when the Runner starts; from
// then on the scheduler keeps that in-memory queue in step with every
// commit and never scans the store. Sequence numbers of a task's events are
// allocated from Task.LastSeq inside the transition that appends them, so
// they are contiguous and durable with the change they describe.
//
// # Attempts
//
// Attempt counts runs started and never decreases; it is the token a
// transition asserts. Refunded counts runs that do not count against
// MaxAttempts (rate-limited runs and runs interrupted by Close). A restart
// counts the interrupted attempt: every task found running goes back to
// queued with a recovered_after_restart event before anything is dispatched.
//
// # Retries
//
// A handler's error decides what happens (see Permanent, RetryAfter,
// RateLimited and IsRetryable; an error with a Retryable() bool method
// classifies itself): permanent errors fail the task; retryable ones
// requeue it after an exponential backoff with jitter (per-kind base, cap and
// MaxAttempts, never earlier than a Retry-After the error carries); a
// rate-limited run is requeued after the given delay without spending an
// attempt. Cancelling a running task cancels its context and the task ends
// cancelled whatever the handler returns.
//
// # Business records in the same batch
//
// Three seams let a caller keep its business records atomic with the task
// (the writing assistant's run is the business fact, the task the
// execution fact):
//
//   - EnqueueIn adds a task's creation to the caller's batch; Enqueued
//     schedules it once that batch committed (or Start finds it after a
//     crash).
//   - KindOptions.OnTransition adds the caller's writes to every
//     transition's batch (a run's status and its own event stream follow
//     the task's state exactly).
//   - Complete ends a running attempt as succeeded with the handler's
//     effect in the same batch, so a rerun after a crash never finds the
//     effect without the success.
//
// docs/tasks.md describes states, transitions, keys, retry rules and events
// for operators.
package task
