package assistant

import (
	"context"
	"errors"
	"fmt"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/objstore"
)

// RunState is a run's place in its life; it follows its task's state.
type RunState string

// Run states. Succeeded, failed and cancelled are final.
const (
	RunQueued    RunState = "queued"
	RunRunning   RunState = "running"
	RunSucceeded RunState = "succeeded"
	RunFailed    RunState = "failed"
	RunCancelled RunState = "cancelled"
)

// Terminal reports whether s is final.
func (s RunState) Terminal() bool { return s == RunSucceeded || s == RunFailed || s == RunCancelled }

// Outcomes of a succeeded run.
const (
	OutcomeSuggestion = "suggestion" // a pending (or at once conflicted) suggestion
	OutcomeNoChange   = "no_change"  // the model proposed nothing that changes the text
)

// PersonalizationKind is what a request chose to personalize the answer.
type PersonalizationKind string

// The four choices; they are mutually exclusive.
const (
	PersonalizeNone    PersonalizationKind = "none"
	PersonalizeWriting PersonalizationKind = "writing_preset"
	PersonalizeEditing PersonalizationKind = "editing_preset"
	PersonalizePersona PersonalizationKind = "persona"
)

// Personalization is a run's choice and, for a preset, its pinned
// version; for a persona, what the run pinned of it.
type Personalization struct {
	Kind    PersonalizationKind `json:"kind" msgpack:"kind"`
	Preset  *PresetPin          `json:"preset,omitempty" msgpack:"preset,omitempty"`
	Persona *PersonaPin         `json:"persona,omitempty" msgpack:"persona,omitempty"`
}

// Baseline is the article state a run was generated against and a
// suggestion is accepted against (DESIGN.md §4: version, fingerprint,
// target blocks).
type Baseline struct {
	Version     objstore.ID         `json:"version" msgpack:"version"`
	Label       string              `json:"label" msgpack:"label"`
	Fingerprint flowdoc.Fingerprint `json:"fingerprint" msgpack:"fp"`
	// Targets are the top-level blocks in scope with their content ids.
	Targets []Target `json:"targets" msgpack:"targets"`
}

// Target is one anchor block of a baseline.
type Target struct {
	ID      string      `json:"id" msgpack:"id"`
	Content objstore.ID `json:"content" msgpack:"c"`
}

// PromptInfo names the prompt files a run used and their hash.
type PromptInfo struct {
	Name    string `json:"name" msgpack:"name"`       // "writing/block"
	Version string `json:"version" msgpack:"version"` // "v1"
	Hash    string `json:"hash" msgpack:"hash"`       // SHA-256 of the files, hex
}

// ContextSummary is what a run records of its frozen conversation (the
// conversation itself is in the task's payload).
type ContextSummary struct {
	Full       int `json:"full" msgpack:"full"`
	Truncated  int `json:"truncated" msgpack:"truncated"`
	Summarized int `json:"summarized" msgpack:"summarized"`
	Scanned    int `json:"scanned" msgpack:"scanned"`
	Omitted    int `json:"omitted" msgpack:"omitted"`
	// Statuses counts the assistant turns by suggestion status.
	Statuses map[SuggestionStatus]int `json:"statuses,omitempty" msgpack:"statuses,omitempty"`
}

// RunError is why a run failed, or why its last attempt did.
type RunError struct {
	Code    string `json:"code" msgpack:"code"`
	Message string `json:"message" msgpack:"msg"`
}

// Run is the business fact of one assistant request: what it was asked,
// what it pinned, how it went and what it produced. It is written with its
// task in one batch and follows the task's state in the task's own
// transitions; once final it never changes.
type Run struct {
	ID          string `json:"id" msgpack:"id"`
	Doc         string `json:"doc" msgpack:"doc"`
	Session     string `json:"session" msgpack:"session"`
	UserMessage uint64 `json:"userMessage" msgpack:"umsg"`
	Actor       string `json:"actor" msgpack:"actor"`     // name, as recorded
	ActorID     string `json:"actorId" msgpack:"actorid"` // user id: whose run it is
	Scope       Scope  `json:"scope" msgpack:"scope"`
	Instruction string `json:"instruction" msgpack:"instr"`
	// DefaultInstruction is set when the instruction was filled in (an
	// editing preset with an empty instruction).
	DefaultInstruction bool            `json:"defaultInstruction,omitempty" msgpack:"definstr,omitempty"`
	Personalization    Personalization `json:"personalization" msgpack:"pers"`
	Base               Baseline        `json:"base" msgpack:"base"`
	Context            ContextSummary  `json:"context" msgpack:"ctx"`
	Prompt             PromptInfo      `json:"prompt" msgpack:"prompt"`
	IdempotencyKey     string          `json:"idempotencyKey,omitempty" msgpack:"idem,omitempty"`
	// Agent is the outside agent that asked for the run (nil: the author).
	Agent *AgentSource `json:"agent,omitempty" msgpack:"agent,omitempty"`

	State RunState `json:"state" msgpack:"state"`
	Task  string   `json:"task" msgpack:"task"`
	// Attempts counts runs started; Retries retries scheduled (rate limits
	// included); Recoveries restarts that found the run running.
	Attempts        int  `json:"attempts" msgpack:"attempts"`
	Retries         int  `json:"retries" msgpack:"retries"`
	Recoveries      int  `json:"recoveries" msgpack:"recoveries"`
	CancelRequested bool `json:"cancelRequested,omitempty" msgpack:"cancelreq,omitempty"`

	// The model call of the successful attempt.
	Provider       string    `json:"provider,omitempty" msgpack:"provider,omitempty"`
	Model          string    `json:"model,omitempty" msgpack:"model,omitempty"`
	Source         string    `json:"source,omitempty" msgpack:"source,omitempty"` // dedicated | compat | mixed
	ResponseFormat string    `json:"responseFormat,omitempty" msgpack:"rf,omitempty"`
	Repaired       bool      `json:"repaired,omitempty" msgpack:"repaired,omitempty"` // the generic JSON repair was used
	DomainRepairs  []string  `json:"domainRepairs,omitempty" msgpack:"drepairs,omitempty"`
	Usage          llm.Usage `json:"usage" msgpack:"usage"`
	UsageEstimated bool      `json:"usageEstimated,omitempty" msgpack:"uest,omitempty"`
	UsageEvents    []string  `json:"usageEvents,omitempty" msgpack:"uevents,omitempty"`

	Outcome          string    `json:"outcome,omitempty" msgpack:"outcome,omitempty"`
	Summary          string    `json:"summary,omitempty" msgpack:"summary,omitempty"`
	Suggestion       string    `json:"suggestion,omitempty" msgpack:"sugg,omitempty"`
	AssistantMessage uint64    `json:"assistantMessage,omitempty" msgpack:"amsg,omitempty"`
	Error            *RunError `json:"error,omitempty" msgpack:"error,omitempty"`
	// Grounding is a persona run's grounding record.
	Grounding *RunGrounding `json:"grounding,omitempty" msgpack:"ground,omitempty"`

	Created  int64 `json:"created" msgpack:"created"` // Unix ms
	Started  int64 `json:"started,omitempty" msgpack:"started,omitempty"`
	Finished int64 `json:"finished,omitempty" msgpack:"finished,omitempty"`
}

// Run stream event types ("run:<id>").
const (
	EventQueued          = "queued"
	EventStarted         = "started"
	EventProgress        = "progress"
	EventRetry           = "retry"
	EventRecovered       = "recovered_after_restart"
	EventInterrupted     = "interrupted"
	EventCancelRequested = "cancel_requested"
	EventSucceeded       = "succeeded"
	EventFailed          = "failed"
	EventCancelled       = "cancelled"
)

// RunEvent is the payload of every run stream event; fields that do not
// apply to a type are empty (docs/protocol.md lists them per type). The
// msgpack names are the JSON names, so a transport that decodes stored
// events generically puts them on the wire as specified.
type RunEvent struct {
	Run         string      `json:"run" msgpack:"run"`
	Doc         string      `json:"doc,omitempty" msgpack:"doc,omitempty"`
	Task        string      `json:"task,omitempty" msgpack:"task,omitempty"`
	Attempt     int         `json:"attempt,omitempty" msgpack:"attempt,omitempty"`
	Text        string      `json:"text,omitempty" msgpack:"text,omitempty"`
	DelayMs     int64       `json:"delayMs,omitempty" msgpack:"delayMs,omitempty"`
	RateLimited bool        `json:"rateLimited,omitempty" msgpack:"rateLimited,omitempty"`
	Code        string      `json:"code,omitempty" msgpack:"code,omitempty"`
	Message     string      `json:"message,omitempty" msgpack:"message,omitempty"`
	Outcome     string      `json:"outcome,omitempty" msgpack:"outcome,omitempty"`
	Suggestion  string      `json:"suggestion,omitempty" msgpack:"suggestion,omitempty"`
	Status      string      `json:"status,omitempty" msgpack:"status,omitempty"`
	Usage       *EventUsage `json:"usage,omitempty" msgpack:"usage,omitempty"`
}

// EventUsage is a succeeded run's token usage in its event.
type EventUsage struct {
	Input  int64 `json:"input" msgpack:"input"`
	Output int64 `json:"output" msgpack:"output"`
	Total  int64 `json:"total" msgpack:"total"`
}

// runError is a handler's error kept for the transition that records it.
type runError struct {
	attempt int
	err     RunError
}

func (s *Service) loadRun(r kv.Reader, id string) (Run, error) {
	var run Run
	if !validID(id) {
		return run, errs.E(errs.NotFound, "run %q not found", id)
	}
	ok, err := kv.GetRecord(r, runKey(id), &run)
	if err != nil {
		return run, err
	}
	if !ok {
		return run, errs.E(errs.NotFound, "run %q not found", id)
	}
	return run, nil
}

// appendRun adds an event to run id's stream in b, numbered after the
// stream's last committed event. Every writer of a run stream holds the
// run's task lock (task transitions, Complete) or creates the run, so the
// numbering cannot race.
func appendRun(b *kv.Batch, r kv.Reader, id, typ string, timeMs int64, ev RunEvent) error {
	last, err := stream.Last(r, streamRun(id))
	if err != nil {
		return err
	}
	ev.Run = id
	return stream.Append(b, streamRun(id), last+1, typ, timeMs, ev)
}

// runOfTask reads the run id from a task's payload.
func runOfTask(t *task.Task) (string, error) {
	var p struct {
		Run string `msgpack:"run"`
	}
	if err := kv.Unmarshal(t.Payload, &p); err != nil || p.Run == "" {
		return "", fmt.Errorf("assistant: task %s has no run in its payload: %v", t.ID, err)
	}
	return p.Run, nil
}

// onTransition keeps a run in step with its task: inside every task
// transition it updates the run's state and counters and appends the
// run stream's event, in the transition's batch.
func (s *Service) onTransition(b *kv.Batch, tr *task.Transition) error {
	id, err := runOfTask(&tr.New)
	if err != nil {
		return err
	}
	run, err := s.loadRun(s.db, id)
	if err != nil {
		return err
	}
	now := s.now().UnixMilli()
	changed := false
	emit := func(typ string, ev RunEvent) error {
		ev.Task = tr.New.ID.String()
		tr.Wake(streamRun(id))
		return appendRun(b, s.db, id, typ, now, ev)
	}
	for _, e := range tr.Events {
		d, _ := e.Data.(task.EventDetail)
		switch e.Type {
		case task.EventStarted:
			run.State, run.Attempts, changed = RunRunning, d.Attempt, true
			if run.Started == 0 {
				run.Started = now
			}
			err = emit(EventStarted, RunEvent{Attempt: d.Attempt})
		case task.EventRetryScheduled, task.EventRateLimited:
			run.State, changed = RunQueued, true
			run.Retries++
			re := s.takeErr(tr.New.ID, tr.Err)
			run.Error = &re
			err = emit(EventRetry, RunEvent{Attempt: d.Attempt, DelayMs: d.DelayMs, Code: re.Code, Message: re.Message,
				RateLimited: e.Type == task.EventRateLimited})
		case task.EventRecovered:
			if !run.State.Terminal() {
				run.State, changed = RunQueued, true
				run.Recoveries++
				err = emit(EventRecovered, RunEvent{Attempt: d.Attempt})
			}
		case task.EventInterrupted:
			s.takeErr(tr.New.ID, nil)
			run.State, changed = RunQueued, true
			err = emit(EventInterrupted, RunEvent{Attempt: d.Attempt})
		case task.EventCancelRequested:
			run.CancelRequested, changed = true, true
			err = emit(EventCancelRequested, RunEvent{Attempt: d.Attempt})
		case task.EventCancelled:
			s.takeErr(tr.New.ID, nil)
			if !run.State.Terminal() {
				run.State, run.Finished, changed = RunCancelled, now, true
				err = emit(EventCancelled, RunEvent{Attempt: d.Attempt})
			}
		case task.EventFailed:
			if !run.State.Terminal() {
				re := s.takeErr(tr.New.ID, tr.Err)
				if tr.Err == nil && tr.New.LastError != "" {
					re = RunError{Code: "attempts_exhausted", Message: tr.New.LastError}
				}
				run.State, run.Finished, run.Error, changed = RunFailed, now, &re, true
				run.Grounding = s.takeGrounding(tr.New.ID)
				err = emit(EventFailed, RunEvent{Attempt: d.Attempt, Code: re.Code, Message: re.Message})
			}
		case EventProgress:
			if p, ok := e.Data.(progressData); ok {
				err = emit(EventProgress, RunEvent{Attempt: tr.New.Attempt, Text: p.Text})
			}
		}
		// enqueued: the request's batch wrote the run and its queued event;
		// succeeded: Complete's write did the run's success.
		if err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	return kv.SetRecord(b, runKey(id), run)
}

// progressData is the payload of a progress event a run emits.
type progressData struct {
	Text string `msgpack:"text"`
}

// keepErr remembers a handler's error for the transition that records it.
func (s *Service) keepErr(t task.ID, attempt int, err error) {
	s.errMu.Lock()
	s.lastErr[t] = runError{attempt: attempt, err: runErrorOf(err)}
	s.errMu.Unlock()
}

// takeErr returns the kept error of task t (or one made from err).
func (s *Service) takeErr(t task.ID, err error) RunError {
	s.errMu.Lock()
	re, ok := s.lastErr[t]
	delete(s.lastErr, t)
	s.errMu.Unlock()
	if ok {
		return re.err
	}
	return runErrorOf(err)
}

// runErrorOf describes err for a run: its code and a bounded message.
func runErrorOf(err error) RunError {
	if err == nil {
		return RunError{Code: "unknown", Message: "the run stopped without an error (the process ended)"}
	}
	code := CodeOf(err)
	if code == "" {
		code = errs.CodeOf(err)
	}
	if errors.Is(err, context.Canceled) {
		code = CodeCancelled
	}
	msg, _ := clipRunes(err.Error(), 500)
	return RunError{Code: code, Message: msg}
}

// Run returns run id: a's own, or any for an admin. Another user's run is
// not found, in the same words as a missing one.
func (s *Service) Run(ctx context.Context, a Actor, id string) (Run, error) {
	if err := ctx.Err(); err != nil {
		return Run{}, err
	}
	return s.runOf(a, id)
}

// runOf loads run id for a (see Run).
func (s *Service) runOf(a Actor, id string) (Run, error) {
	if err := a.identified(); err != nil {
		return Run{}, err
	}
	run, err := s.loadRun(s.db, id)
	if err == nil && !a.Admin && run.ActorID != a.UserID {
		return Run{}, errs.E(errs.NotFound, "run %q not found", id)
	}
	return run, err
}

// CancelRun cancels run id: a queued run ends cancelled at once, a running
// one when its model call stops (its result, if it arrives first, is not
// kept). A finished run is returned as it is. a may cancel only its own
// runs; an admin any (see Run).
func (s *Service) CancelRun(ctx context.Context, a Actor, id string) (Run, error) {
	run, err := s.runOf(a, id)
	if err != nil {
		return Run{}, err
	}
	if run.State.Terminal() {
		return run, nil
	}
	tid, err := task.ParseID(run.Task)
	if err != nil {
		return Run{}, errs.E(errs.Corrupt, "run %s names task %q: %w", id, run.Task, err)
	}
	if _, err := s.runner.Cancel(ctx, tid); err != nil && !errors.Is(err, task.ErrFinished) {
		return Run{}, err
	}
	return s.loadRun(s.db, id)
}

// WaitRun waits until run id is final (or ctx ends) and returns it.
func (s *Service) WaitRun(ctx context.Context, id string) (Run, error) {
	for {
		wait := s.repo.Hub().Wait(streamRun(id))
		run, err := s.loadRun(s.db, id)
		if err != nil || run.State.Terminal() {
			return run, err
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return run, ctx.Err()
		}
	}
}

// RunEvents returns up to limit events of run id's stream after cursor
// (limit <= 0: all).
func (s *Service) RunEvents(ctx context.Context, id string, after uint64, limit int) ([]stream.Event, error) {
	if _, err := s.loadRun(s.db, id); err != nil {
		return nil, err
	}
	return stream.Read(s.db, streamRun(id), after, limit)
}
