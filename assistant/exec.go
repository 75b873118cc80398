package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/task"
)

// ProgressEvery is how long answer text is coalesced before a progress
// event carries it.
const ProgressEvery = 100 * time.Millisecond

// execute runs one attempt of a writing run: the pinned preset version
// and the baseline version are read back, the prompt is built from the
// frozen payload, the model answers through the gateway (structured
// output, one generic repair), the answer is domain-repaired and checked,
// and the success — run outcome, suggestion, assistant message, usage —
// commits in the task's own success batch, under the document lock.
func (s *Service) execute(ctx context.Context, t *task.Task) error {
	var pl payload
	if err := kv.Unmarshal(t.Payload, &pl); err != nil {
		return task.Permanent(errs.E(errs.Corrupt, "assistant: task %s payload: %w", t.ID, err))
	}
	run, err := s.loadRun(s.db, pl.Run)
	if err != nil {
		return task.Permanent(err)
	}
	if run.State == RunSucceeded {
		return nil // done in an earlier attempt
	}
	s.point("handler-start")
	fail := func(err error) error {
		s.keepErr(t.ID, t.Attempt, err)
		return classify(err)
	}
	var pv *PresetVersion
	if pin := pl.Personalization.Preset; pin != nil {
		v, err := s.pinned(*pin)
		if err != nil {
			return fail(task.Permanent(err))
		}
		pv = &v
	}
	snap, err := s.repo.Show(ctx, pl.Doc, pl.Base.Label)
	if err != nil {
		if errors.Is(err, repo.ErrNotFound) {
			return fail(task.Permanent(repoErr(err)))
		}
		return fail(err)
	}
	if snap.Info.Hash != pl.Base.Version {
		return fail(task.Permanent(errs.E(errs.Corrupt, "baseline %s of run %s is not the version it recorded", pl.Base.Label, pl.Run)))
	}
	res, err := resolveScope(snap.Body, pl.Scope)
	if err != nil {
		return fail(task.Permanent(err))
	}
	if err := s.checkPrivate(pl.Persona); err != nil {
		return fail(task.Permanent(err))
	}
	p := promptFor(pl.Scope.Kind)
	if p.info.Hash != pl.Prompt.Hash {
		return fail(task.Permanent(errs.C(errs.Conflict, "prompt_changed",
			"the prompt files changed since run %s was queued (%s %s); ask again", pl.Run, pl.Prompt.Name, pl.Prompt.Version)))
	}
	prog := s.startProgress(t)
	var cand candidate
	req := Request{
		Category: quota.Writing, User: pl.ActorID, Messages: messages(p, pl, pv, res),
		Trace:  Trace{RunID: pl.Run, TaskID: t.ID.String(), Attempt: t.Attempt},
		OnText: prog.add, DeferBooking: true, Schema: answerSchema(pl.Scope.Kind), Task: editTask(pl, pv, res),
	}
	validate := func(obj json.RawMessage) error {
		var err error
		cand, err = parseAnswer(obj, snap.Body, res, s.limits, pl.Run)
		return err
	}
	out, err := s.gw.Structured(ctx, req, validate)
	var g *RunGrounding
	if err == nil && pl.Persona != nil {
		out, g, err = s.ground(ctx, req, validate, out, &cand, pl, res)
		if g != nil && !g.Pass && errs.CodeOf(err) == CodeGroundingFailed {
			s.keepGrounding(t.ID, *g)
		}
	}
	prog.stop()
	if err != nil {
		return fail(err)
	}
	s.point("model-answered")
	// The commit proceeds whatever ctx says: Complete refuses it when a
	// cancel was requested, and a finished answer is worth keeping after
	// a timeout.
	err = s.repo.Locked(context.WithoutCancel(ctx), pl.Doc, func(tx *repo.DocTx) error {
		return s.runner.Complete(ctx, t, func(b *kv.Batch) error {
			return s.writeSuccess(b, tx, pl, out, cand, g, snap.Body)
		})
	})
	if errors.Is(err, task.ErrCancelRequested) {
		return err
	}
	if err != nil {
		return fail(err)
	}
	s.repo.Hub().Notify(streamRun(pl.Run))
	s.point("success-committed")
	return nil
}

// classify tells the runner what a failed attempt means: quota and
// provider rate limits wait without spending an attempt, other retryable
// gateway errors retry after any Retry-After, the rest fail the run.
func classify(err error) error {
	var te *task.Error
	if errors.As(err, &te) {
		return err
	}
	var ge *Error
	if errors.As(err, &ge) {
		switch {
		case !ge.Retryable():
			return task.Permanent(err)
		case ge.Code == CodeRateLimited || strings.HasSuffix(ge.Code, "_rate_limited") || strings.HasSuffix(ge.Code, "_concurrency_limited"):
			return task.RateLimited(err, ge.RetryAfter)
		case ge.RetryAfter > 0:
			return task.RetryAfter(err, ge.RetryAfter)
		}
		return err
	}
	switch errs.KindOf(err) {
	case errs.Invalid, errs.NotFound, errs.Corrupt, errs.Conflict, errs.Forbidden, errs.Disabled:
		return task.Permanent(err)
	}
	return err
}

// writeSuccess adds a run's success to b: the run's outcome, the pending
// suggestion (conflicted at once when the baseline moved while the model
// answered), the assistant message, the usage events and the run and
// document events. It runs under the document lock and the task's lock.
func (s *Service) writeSuccess(b *kv.Batch, tx *repo.DocTx, pl payload, out *StructuredResult, cand candidate, g *RunGrounding, base flowdoc.Document) error {
	run, err := s.loadRun(s.db, pl.Run)
	if err != nil {
		return err
	}
	ss, err := s.loadSession(s.db, run.Session)
	if err != nil {
		return err
	}
	now := s.now().UnixMilli()
	seq := ss.Messages + 1
	msg := Message{Session: ss.ID, Seq: seq, Role: RoleAssistant, Actor: "assistant", Time: now, Doc: pl.Doc,
		Version: pl.Base.Version, Label: pl.Base.Label, Scope: pl.Scope, Run: pl.Run}
	run.Outcome, run.Summary = OutcomeNoChange, cand.summary
	var sg *Suggestion
	if !cand.noChange {
		sg = &Suggestion{ID: newID("s"), Doc: pl.Doc, Run: pl.Run, Session: ss.ID, Status: StatusPending,
			Scope: pl.Scope, Base: pl.Base, Ops: cand.ops, Summary: cand.summary,
			Personalization: pl.Personalization, Created: now, Closeness: closeness(pl.Persona, cand.ops), Agent: pl.Agent}
		for _, op := range cand.ops {
			if op.Op == flowdoc.DeleteBlock {
				sg.Deletes = true
			}
		}
		if pl.Scope.Kind != ScopeDocument {
			sg.Watch = watchOf(base, pl.Base, cand.ops)
		}
		if tx.Head != pl.Base.Version || tx.Fingerprint != pl.Base.Fingerprint {
			// The article changed while the model answered: a strict
			// suggestion is stale; a block-scoped one only when a block it
			// watches changed (it carries over otherwise).
			var hit []string
			if !sg.strict() {
				cur, err := tx.Blocks(sg.watchIDs())
				if err != nil {
					return err
				}
				hit = sg.changedWatched(cur)
			}
			if sg.strict() || len(hit) > 0 {
				sg.Status = StatusConflicted
				reason := fmt.Sprintf("the article changed after %s while the suggestion was generated", pl.Base.Label)
				if len(hit) > 0 {
					reason = fmt.Sprintf("its blocks %s changed while the suggestion was generated", strings.Join(hit, ", "))
				}
				sg.Conflict = &Conflict{Reason: reason, Blocks: hit, By: "generation", Time: now}
			}
		}
		run.Outcome, run.Suggestion, msg.Suggestion = OutcomeSuggestion, sg.ID, sg.ID
	}
	msg.Text = assistantText(cand, sg)
	if g != nil {
		run.Grounding = g
		msg.Text += "\n" + g.Line()
	}
	for _, ev := range out.Events {
		if err := s.ledger.BookInBatch(b, ev); err != nil {
			return err
		}
		run.UsageEvents = append(run.UsageEvents, ev.ID)
		run.UsageEstimated = run.UsageEstimated || ev.Estimated
	}
	run.State, run.Finished, run.Error = RunSucceeded, now, nil
	run.Provider, run.Model, run.Source, run.ResponseFormat = out.Provider, out.Model, out.Source, out.ResponseFormat
	run.Repaired, run.DomainRepairs, run.Usage = out.Repaired, cand.repairs, out.Usage
	run.AssistantMessage = seq
	old := ss
	ss.Messages, ss.Updated = seq, max(now, ss.Updated+1)
	if err := putSession(b, &old, ss); err != nil {
		return err
	}
	if err := kv.SetRecord(b, messageKey(ss.ID, seq), msg); err != nil {
		return err
	}
	if err := kv.SetRecord(b, runKey(run.ID), run); err != nil {
		return err
	}
	ev := RunEvent{Outcome: run.Outcome, Attempt: run.Attempts,
		Usage: &EventUsage{Input: run.Usage.Input, Output: run.Usage.Output, Total: run.Usage.Total}}
	if sg != nil {
		if err := kv.SetRecord(b, suggestionKey(sg.ID), sg); err != nil {
			return err
		}
		if err := b.Set(suggDocTimeKey(sg.Doc, sg.Created, sg.ID), nil); err != nil {
			return err
		}
		scope := sg.Scope
		created := SuggestionEvent{ID: sg.ID, Doc: sg.Doc, Run: sg.Run, Status: sg.Status, Scope: &scope,
			Base: sg.Base.Label, Ops: len(sg.Ops), Deletes: sg.Deletes, Summary: sg.Summary, Agent: eventAgent(sg.Agent)}
		if err := tx.Emit(b, EventSuggestionCreated, now, created); err != nil {
			return err
		}
		if sg.Status == StatusPending {
			s.pend.created()
			if err := indexPending(b, sg); err != nil {
				return err
			}
		} else if err := tx.Emit(b, EventSuggestionConflicted, now, SuggestionEvent{ID: sg.ID, Doc: sg.Doc, Run: sg.Run,
			Status: sg.Status, Reason: sg.Conflict.Reason, By: sg.Conflict.By}); err != nil {
			return err
		}
		ev.Suggestion, ev.Status = sg.ID, string(sg.Status)
	}
	return appendRun(b, s.db, run.ID, EventSucceeded, now, ev)
}

// assistantText is what the assistant says in the session.
func assistantText(c candidate, sg *Suggestion) string {
	summary := c.summary
	if sg == nil {
		if summary == "" {
			return "No change proposed."
		}
		return "No change proposed: " + summary
	}
	kinds := make([]string, len(sg.Ops))
	for i, op := range sg.Ops {
		kinds[i] = string(op.Op)
	}
	text := fmt.Sprintf("Suggestion %s (%s on %s).", sg.ID, strings.Join(kinds, ", "), sg.Scope.String())
	if summary != "" {
		text = summary + "\n" + text
	}
	return text
}

// progress coalesces answer text into progress events about every
// ProgressEvery.
type progress struct {
	s    *Service
	t    task.Task // a copy: Emit updates its LastSeq
	mu   sync.Mutex
	buf  strings.Builder
	done chan struct{}
	wg   sync.WaitGroup
}

func (s *Service) startProgress(t *task.Task) *progress {
	p := &progress{s: s, t: *t, done: make(chan struct{})}
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *progress) add(text string) {
	p.mu.Lock()
	p.buf.WriteString(text)
	p.mu.Unlock()
}

func (p *progress) loop() {
	defer p.wg.Done()
	tick := time.NewTicker(ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			p.flush()
		case <-p.done:
			p.flush()
			return
		}
	}
}

func (p *progress) flush() {
	p.mu.Lock()
	text := p.buf.String()
	p.buf.Reset()
	p.mu.Unlock()
	if text == "" {
		return
	}
	// Best effort: a progress event that cannot be written (the task was
	// cancelled meanwhile) loses nothing the run needs.
	_ = p.s.runner.Emit(context.Background(), &p.t, EventProgress, progressData{Text: text})
}

// stop flushes what is left and ends the loop.
func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
}
