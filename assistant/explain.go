package assistant

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/objstore"
)

// Explanation is the chain of facts behind one version (the seed's
// troubleshooting chain): transaction -> suggestion -> messages -> run ->
// task -> usage. For a version made by hand only the transaction is
// there (and its manual_edit observation, for a checkpoint of hand
// edits), and ByHand says so.
type Explanation struct {
	Doc     string           `json:"doc"`
	Version repo.VersionInfo `json:"version"`
	// ByHand is true for versions no suggestion made (checkpoints of
	// typing, recoveries, restores, imports, the first version).
	ByHand bool    `json:"byHand"`
	Note   string  `json:"note"`
	Txn    TxnInfo `json:"txn"`

	Suggestion *Suggestion `json:"suggestion,omitempty"`
	// Messages are the request's user message and the run's assistant
	// message.
	Messages []Message `json:"messages,omitempty"`
	Run      *Run      `json:"run,omitempty"`
	// Context is the conversation the run was given, as frozen in its
	// task's payload.
	Context *Context  `json:"context,omitempty"`
	Task    *TaskInfo `json:"task,omitempty"`
	// Usage are the booked usage events of the run's successful call(s).
	Usage        []quota.Event `json:"usage,omitempty"`
	Observations []Observation `json:"observations,omitempty"`
}

// TxnInfo is a version's edit transaction.
type TxnInfo struct {
	ID              objstore.ID         `json:"id"`
	Kind            string              `json:"kind"`
	Actor           string              `json:"actor"`
	Reason          string              `json:"reason,omitempty"`
	BaseVersion     objstore.ID         `json:"baseVersion,omitzero"`
	BaseFingerprint flowdoc.Fingerprint `json:"baseFingerprint,omitzero"`
	IdempotencyKey  string              `json:"idempotencyKey,omitempty"`
	SuggestionID    string              `json:"suggestion,omitempty"`
	// OrigBase and OrigBaseFingerprint are, for an accept carried over
	// to a newer baseline, the suggestion's own baseline; BaseVersion and
	// BaseFingerprint are then the carried-over one.
	OrigBase            objstore.ID         `json:"origBase,omitzero"`
	OrigBaseFingerprint flowdoc.Fingerprint `json:"origBaseFingerprint,omitzero"`
	Time                int64               `json:"time"`
	Events              []TxnEvent          `json:"events"`
}

// TxnEvent is one block-level change of a transaction.
type TxnEvent struct {
	Op     string      `json:"op"`
	Block  string      `json:"block"`
	Before objstore.ID `json:"before,omitzero"`
	After  objstore.ID `json:"after,omitzero"`
}

// TaskInfo is the execution record of a run's task.
type TaskInfo struct {
	ID          string    `json:"id"`
	State       string    `json:"state"`
	Attempt     int       `json:"attempt"`
	Refunded    int       `json:"refunded,omitempty"`
	MaxAttempts int       `json:"maxAttempts"`
	LastError   string    `json:"lastError,omitempty"`
	Created     time.Time `json:"created"`
	Finished    time.Time `json:"finished,omitzero"`
	// Retries counts retry_scheduled and rate_limited events, Recoveries
	// recovered_after_restart ones; Events lists the runner's events
	// (progress left out). EventsTrimmed says retention removed the log.
	Retries       int         `json:"retries"`
	Recoveries    int         `json:"recoveries"`
	Events        []TaskEvent `json:"events,omitempty"`
	EventsTrimmed bool        `json:"eventsTrimmed,omitempty"`
}

// TaskEvent is one of the runner's events of a task.
type TaskEvent struct {
	Seq     uint64 `json:"seq"`
	Type    string `json:"type"`
	Time    int64  `json:"time"`
	Attempt int    `json:"attempt,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Explain returns the chain behind version label of doc ("" or "head":
// the head).
func (s *Service) Explain(ctx context.Context, a Actor, doc, label string) (Explanation, error) {
	info, err := s.repo.ResolveLabel(ctx, doc, label)
	if err != nil {
		return Explanation{}, repoErr(err)
	}
	v, err := s.repo.Objects().GetVersion(info.Hash)
	if err != nil {
		return Explanation{}, errs.E(errs.Corrupt, "version %s of %s: %w", info.Label, doc, err)
	}
	tx, err := s.repo.Objects().GetTxn(v.Txn)
	if err != nil {
		return Explanation{}, errs.E(errs.Corrupt, "transaction of %s@%s: %w", doc, info.Label, err)
	}
	e := Explanation{Doc: doc, Version: info, Txn: TxnInfo{ID: v.Txn, Kind: tx.Kind, Actor: tx.Actor, Reason: tx.Reason,
		BaseVersion: tx.BaseVersion, BaseFingerprint: tx.BaseFingerprint, IdempotencyKey: tx.IdempotencyKey,
		SuggestionID: tx.SuggestionID, OrigBase: tx.OrigBase, OrigBaseFingerprint: tx.OrigBaseFP,
		Time: tx.Time, Events: []TxnEvent{}}}
	for _, ev := range tx.Events {
		e.Txn.Events = append(e.Txn.Events, TxnEvent{Op: ev.Op, Block: ev.BlockID, Before: ev.Before, After: ev.After})
	}
	if tx.SuggestionID == "" {
		e.ByHand = true
		e.Note = fmt.Sprintf("made by hand: %s", tx.Kind)
		if tx.Reason != "" {
			e.Note += " (" + tx.Reason + ")"
		}
		if tx.Actor != "" {
			e.Note += " by " + tx.Actor
		}
		if info.RestoredFrom != "" {
			e.Note += ", restored from " + info.RestoredFrom
		}
		o, ok, err := s.ManualObservation(ctx, doc, info.Label)
		if err != nil {
			return e, err
		}
		if ok {
			e.Observations = []Observation{o}
		}
		return e, nil
	}
	sg, err := s.loadSuggestion(s.db, tx.SuggestionID)
	if err != nil {
		return e, chainBroken(err, "suggestion %s named by %s@%s", tx.SuggestionID, doc, info.Label)
	}
	e.Suggestion = &sg
	e.Note = fmt.Sprintf("accepted suggestion %s by %s", sg.ID, tx.Actor)
	if sg.Agent != nil {
		what := "proposed by "
		if sg.Run != "" {
			what = "asked for by "
		}
		e.Note += ", " + what + sg.Agent.String()
	}
	if c := sg.Carried; c != nil {
		e.Note += fmt.Sprintf(", carried over from %s to %s (its blocks were unchanged; edits elsewhere kept)", c.From.Label, c.To.Label)
	}
	if sg.Run == "" {
		// Written by an agent: no run, model or usage behind it.
		obs, err := s.Observations(ctx, sg.ID)
		e.Observations = obs
		return e, err
	}
	run, err := s.loadRun(s.db, sg.Run)
	if err != nil {
		return e, chainBroken(err, "run %s of suggestion %s", sg.Run, sg.ID)
	}
	e.Run = &run
	for _, seq := range []uint64{run.UserMessage, run.AssistantMessage} {
		if seq == 0 {
			continue
		}
		m, err := s.loadMessage(s.db, run.Session, seq)
		if err != nil {
			return e, chainBroken(err, "message %d of session %s", seq, run.Session)
		}
		e.Messages = append(e.Messages, m)
	}
	if e.Task, e.Context, err = s.taskInfo(ctx, run); err != nil {
		return e, err
	}
	for _, id := range run.UsageEvents {
		ev, ok, err := s.ledger.Event(id)
		if err != nil {
			return e, err
		}
		if ok {
			e.Usage = append(e.Usage, ev)
		}
	}
	if e.Observations, err = s.Observations(ctx, sg.ID); err != nil {
		return e, err
	}
	return e, nil
}

// chainBroken is an integrity error: a record the chain names is missing.
func chainBroken(err error, format string, args ...any) error {
	if errors.Is(err, errs.NotFound) {
		return errs.E(errs.Corrupt, "the audit chain is broken: "+format+" is missing; run folio fsck", args...)
	}
	return err
}

// taskInfo reads a run's task record, its events and its frozen context.
func (s *Service) taskInfo(ctx context.Context, run Run) (*TaskInfo, *Context, error) {
	id, err := task.ParseID(run.Task)
	if err != nil {
		return nil, nil, errs.E(errs.Corrupt, "run %s names task %q", run.ID, run.Task)
	}
	t, err := s.runner.Get(ctx, id)
	if err != nil {
		return nil, nil, chainBroken(errs.Wrap(errs.NotFound, err), "task %s of run %s", run.Task, run.ID)
	}
	ti := &TaskInfo{ID: run.Task, State: string(t.State), Attempt: t.Attempt, Refunded: t.Refunded,
		MaxAttempts: t.MaxAttempts, LastError: t.LastError, Created: t.CreatedAt, Finished: t.FinishedAt}
	evs, err := stream.Read(s.db, id.Stream(), 0, 0)
	if errors.Is(err, stream.ErrTrimmed) {
		ti.EventsTrimmed = true
	} else if err != nil {
		return nil, nil, err
	}
	for _, ev := range evs {
		switch ev.Type {
		case EventProgress:
			continue
		case task.EventRetryScheduled, task.EventRateLimited:
			ti.Retries++
		case task.EventRecovered:
			ti.Recoveries++
		}
		te := TaskEvent{Seq: ev.Seq, Type: ev.Type, Time: ev.Time}
		var d task.EventDetail
		if kv.Unmarshal(ev.Data, &d) == nil {
			te.Attempt, te.Error = d.Attempt, d.Error
		}
		ti.Events = append(ti.Events, te)
	}
	if len(evs) == 0 && t.LastSeq > 0 {
		ti.EventsTrimmed = true
		ti.Retries, ti.Recoveries = run.Retries, run.Recoveries
	}
	var pl payload
	if err := kv.Unmarshal(t.Payload, &pl); err != nil {
		return ti, nil, errs.E(errs.Corrupt, "task %s payload: %w", run.Task, err)
	}
	return ti, &pl.Context, nil
}
