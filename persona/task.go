package persona

import (
	"context"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona/learning"
)

// TaskKind is the task kind of "generate persona version".
const TaskKind = "persona.generate"

// DefaultTaskOptions are the generation task's defaults: one generation
// at a time, shared fairly among users (the next to start is one of the
// user served longest ago), 3 attempts, backoff from 2 s to 1 min, 10 min
// per attempt.
var DefaultTaskOptions = task.KindOptions{Concurrency: 1, MaxAttempts: 3, BackoffBase: 2 * time.Second,
	BackoffCap: time.Minute, Timeout: 10 * time.Minute, FairUsers: true}

// Job is a "generate persona version" task as its requester sees it: the
// business record kept in step with the task (t/persjob/<task id>),
// written in the task's own transitions.
type Job struct {
	Task    string     `json:"task" msgpack:"task"`
	Persona string     `json:"persona" msgpack:"persona"`
	User    string     `json:"user" msgpack:"user"`
	State   task.State `json:"state" msgpack:"state"`
	// Attempts counts the runs started.
	Attempts int `json:"attempts" msgpack:"attempts"`
	// Version is the seq of the version the job made (succeeded only).
	Version int `json:"version,omitempty" msgpack:"version,omitempty"`
	// Error is why the job failed, or why its last attempt did.
	Error    *JobError `json:"error,omitempty" msgpack:"error,omitempty"`
	Created  int64     `json:"created" msgpack:"created"`
	Finished int64     `json:"finished,omitempty" msgpack:"finished,omitempty"`
}

// JobError is a failed attempt's stable code and message.
type JobError struct {
	Code    string `json:"code" msgpack:"code"`
	Message string `json:"message" msgpack:"msg"`
}

const tableJob = "persjob" // <task id>

func jobKey(id string) []byte { return kv.TableKey(tableJob, id) }

type jobPayload struct {
	User    string `msgpack:"user"`
	Persona string `msgpack:"persona"`
}

// Register installs the generation task's handler on r, reading sources
// through src and learning observations through obs (nil: none). Zero
// fields of o take DefaultTaskOptions; o.OnTransition is the service's.
// Call it before r starts.
func (s *Service) Register(r *task.Runner, src Sources, obs learning.Reader, o task.KindOptions) {
	d := DefaultTaskOptions
	if o.Concurrency <= 0 {
		o.Concurrency = d.Concurrency
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = d.MaxAttempts
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = d.BackoffBase
	}
	if o.BackoffCap <= 0 {
		o.BackoffCap = d.BackoffCap
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	o.FairUsers = true // one user's queue must not hold the slot from the others
	o.OnTransition = s.onTransition
	s.runner = r
	r.Register(TaskKind, func(ctx context.Context, t *task.Task) error {
		var pl jobPayload
		if err := kv.Unmarshal(t.Payload, &pl); err != nil {
			return task.Permanent(errs.E(errs.Corrupt, "persona: task %s payload: %w", t.ID, err))
		}
		_, err := s.Generate(ctx, GenerateRequest{User: pl.User, Persona: pl.Persona, Key: t.ID.String(), Attempt: t.Attempt}, src, obs)
		return classify(err)
	}, o)
}

// classify tells the runner what a failed generation means: a refusal
// (the switches, the sources, a conflict, a missing persona, damage)
// fails the job at once; anything else (I/O, a timeout) is retried.
func classify(err error) error {
	if err == nil {
		return nil
	}
	switch errs.KindOf(err) {
	case errs.Invalid, errs.NotFound, errs.Forbidden, errs.Conflict, errs.Disabled, errs.Corrupt, errs.TooLarge:
		return task.Permanent(err)
	}
	return err
}

// StartGenerate queues a generation of user's persona id as a durable
// task and returns its job. The sources and switches are checked when the
// task runs, not here: what counts is the state when it starts.
func (s *Service) StartGenerate(ctx context.Context, user, id string) (Job, error) {
	if err := s.enabled(); err != nil {
		return Job{}, err
	}
	if s.runner == nil {
		return Job{}, errs.E(errs.Unavailable, "persona: no task runner to generate versions on")
	}
	if _, err := s.load(user, id); err != nil {
		return Job{}, err
	}
	pl, err := kv.Marshal(jobPayload{User: user, Persona: id})
	if err != nil {
		return Job{}, err
	}
	b := s.db.NewBatch()
	defer b.Close()
	t, err := s.runner.EnqueueIn(ctx, b, task.Spec{Kind: TaskKind, User: user, Payload: pl})
	if err != nil {
		return Job{}, err
	}
	j := Job{Task: t.ID.String(), Persona: id, User: user, State: task.Queued, Created: s.now().UnixMilli()}
	if err := kv.SetRecord(b, jobKey(j.Task), j); err != nil {
		return Job{}, err
	}
	if err := s.db.Apply(b, kv.Sync); err != nil {
		return Job{}, err
	}
	s.runner.Enqueued(t)
	return j, nil
}

// onTransition keeps a job in step with its task, in the transition's
// batch.
func (s *Service) onTransition(b *kv.Batch, tr *task.Transition) error {
	id := tr.New.ID.String()
	var j Job
	ok, err := kv.GetRecord(s.db, jobKey(id), &j)
	if err != nil {
		return err
	}
	if !ok {
		return errs.E(errs.Corrupt, "persona: task %s has no job record", id)
	}
	j.State, j.Attempts = tr.New.State, tr.New.Attempt
	if tr.Err != nil {
		j.Error = jobError(tr.Err)
	}
	switch tr.New.State {
	case task.Succeeded:
		data, err := kv.Get(s.db, genKey(j.Persona, id))
		if err != nil {
			return errs.E(errs.Corrupt, "persona: job %s succeeded without a version: %w", id, err)
		}
		j.Version, _ = strconv.Atoi(string(data))
		j.Error = nil
		j.Finished = s.now().UnixMilli()
	case task.Failed, task.Cancelled:
		if j.Error == nil && tr.New.LastError != "" {
			j.Error = &JobError{Code: "attempts_exhausted", Message: tr.New.LastError}
		}
		j.Finished = s.now().UnixMilli()
	}
	return kv.SetRecord(b, jobKey(id), j)
}

func jobError(err error) *JobError {
	code := errs.CodeOf(err)
	if errors.Is(err, context.Canceled) {
		code = "cancelled"
	}
	msg := err.Error()
	if utf8.RuneCountInString(msg) > 500 {
		msg = string([]rune(msg)[:500])
	}
	return &JobError{Code: code, Message: msg}
}

// Job returns job id (a task id) of user; another user's is not found.
func (s *Service) Job(ctx context.Context, user, id string) (Job, error) {
	if err := s.enabled(); err != nil {
		return Job{}, err
	}
	var j Job
	ok, err := kv.GetRecord(s.db, jobKey(id), &j)
	if err != nil {
		return Job{}, err
	}
	if !ok || j.User != user {
		return Job{}, errs.E(errs.NotFound, "persona: no generation job %q", id)
	}
	return j, nil
}

// WaitJob waits until job id is final (or ctx ends) and returns it.
func (s *Service) WaitJob(ctx context.Context, user, id string) (Job, error) {
	if s.runner == nil {
		return Job{}, errs.E(errs.Unavailable, "persona: no task runner to generate versions on")
	}
	tid, err := task.ParseID(id)
	if err != nil {
		return Job{}, errs.E(errs.NotFound, "persona: no generation job %q", id)
	}
	for {
		wait := s.runner.Hub().Wait(tid.Stream())
		j, err := s.Job(ctx, user, id)
		if err != nil || j.State.Terminal() {
			return j, err
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return j, ctx.Err()
		}
	}
}
