package assistant

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona"
)

// TaskKind is the task kind of a writing run.
const TaskKind = "assistant.write"

// Actor is who calls the service. Transports authenticate and authorize
// document access before calling.
//
// UserID is the caller's immutable user id (auth.User.ID), and what the
// service keys the caller's own things by: their sessions on an article,
// their runs and idempotency keys, their share of the per-user limits of
// the quota and of the task runner. A user deleted and added again under
// the same name gets a new id, and so none of the old one's. User is the
// name recorded in history (messages, runs, sessions, versions), as a
// version's author is; it decides nothing. Admin gates the preset admin
// calls and lets an admin read and cancel any run.
type Actor struct {
	UserID string
	User   string
	Admin  bool
	// Agent is set when the caller is an outside agent (an agent token):
	// its proposals are limited per token (AgentRate) and record it.
	Agent *AgentSource
}

// identified refuses a caller without a user id: what is theirs could
// not be told from anyone else's.
func (a Actor) identified() error {
	if a.UserID == "" {
		return errs.E(errs.Unauthenticated, "the writing assistant needs an authenticated user (one with a user id); user %q has none", a.User)
	}
	if !validID(a.UserID) {
		return errs.E(errs.Invalid, "user id %q is not 1-64 of a-z 0-9 _ -", a.UserID)
	}
	return nil
}

// Options configure a Service.
type Options struct {
	Repo    *repo.Repo
	Runner  *task.Runner
	Gateway *Gateway
	// Ledger books the usage of successful runs in their batch; it must be
	// the gateway's ledger.
	Ledger *quota.Ledger
	// Switches are the [assistant] switches.
	Switches config.Assistant
	// AgentRate (proposals a minute) and AgentBurst bound each agent
	// token's proposals; zero: the defaults (AgentRate, AgentBurst);
	// a negative AgentRate: no per-token bound (benchmarks).
	AgentRate, AgentBurst int
	// Task tunes the writing task (attempts, backoff, timeout); zero
	// fields take the defaults of DefaultTaskOptions. OnTransition is the
	// service's own and is ignored here.
	Task task.KindOptions
	// Personas serves persona requests (nil: they answer
	// persona_unavailable); References lists their reference candidates
	// (nil: persona runs get none).
	Personas   *persona.Service
	References ReferenceSource
	// Language is the [site] language ("en", "zh" or ""): preset names
	// and descriptions are listed in it (presets.Localize), and it is the
	// default instruction's language for a document without text.
	Language string
	// Logger receives redacted integrity errors; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock of records; nil means time.Now.
	Now func() time.Time
}

// DefaultTaskOptions are the writing task's defaults: 3 attempts, backoff
// from 2 s to 1 min, 5 min per run, 4 runs at a time.
var DefaultTaskOptions = task.KindOptions{Concurrency: 4, MaxAttempts: 3, BackoffBase: 2 * time.Second,
	BackoffCap: time.Minute, Timeout: 5 * time.Minute}

// Service is the writing assistant: sessions and messages, requests and
// runs, suggestions and their decisions, presets, and the audit chain. It
// is safe for concurrent use. Every method that writes commits durably
// before it returns.
type Service struct {
	lang   string // the [site] language (Options.Language)
	repo   *repo.Repo
	db     *kv.DB
	runner *task.Runner
	gw     *Gateway
	ledger *quota.Ledger
	sw     config.Assistant
	log    *slog.Logger
	now    func() time.Time
	limits flowdoc.Limits

	personas *persona.Service // nil: no personas
	refs     ReferenceSource  // nil: no references

	presetMu sync.Mutex // serializes preset admin writes (order, counts)

	// errMu guards lastErr: the handler's error of a task's last run, by
	// task id, read by the transition that records it.
	errMu   sync.Mutex
	lastErr map[task.ID]runError
	// grounding holds a failed persona run's grounding record until the
	// transition that fails the run records it (guarded by errMu).
	grounding map[task.ID]RunGrounding

	// point is a test seam: called at named points of a run (crash tests).
	point func(name string)

	// pend remembers documents without pending suggestions, so that a
	// save of one does not scan for them (changeHook.DocChanged).
	pend pendingNone

	// agents limits the proposals of each agent token (AgentRate).
	agents agentLimiter
}

// pendingNone remembers the documents whose last scan found no pending
// suggestion. Every new pending suggestion, on any document, starts a new
// generation and so voids what was remembered: a scan that raced with it
// cannot leave a wrong "none" behind, whatever the locks.
type pendingNone struct {
	mu   sync.Mutex
	gen  uint64
	none map[string]uint64 // document → the generation its scan began in
}

// maxPendingNone bounds pendingNone; over it, it starts again empty.
const maxPendingNone = 1 << 16

// created voids what is remembered; call it before a batch that adds a
// pending suggestion commits.
func (p *pendingNone) created() {
	p.mu.Lock()
	p.gen++
	p.mu.Unlock()
}

// scanning returns the generation a scan of doc begins in, and whether
// doc is known to have no pending suggestion (no scan needed).
func (p *pendingNone) scanning(doc string) (gen uint64, none bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.none[doc]
	return p.gen, ok && g == p.gen
}

// found records that a scan of doc begun in generation gen found none.
func (p *pendingNone) found(doc string, gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen != p.gen {
		return
	}
	if p.none == nil || len(p.none) >= maxPendingNone {
		p.none = map[string]uint64{}
	}
	p.none[doc] = gen
}

// NewService seeds the built-in presets (once), registers the writing
// task's handler on the runner and installs the service's change hook on
// the repo. Call it before the runner starts and before the repo serves
// writers.
func NewService(ctx context.Context, o Options) (*Service, error) {
	if o.Repo == nil || o.Runner == nil || o.Gateway == nil || o.Ledger == nil {
		return nil, errors.New("assistant: NewService needs a repo, a runner, a gateway and a ledger")
	}
	if o.Runner.Hub() != o.Repo.Hub() {
		return nil, errors.New("assistant: the runner must share the repo's hub (task.Options.Hub = repo.Hub()) so that run streams wake their readers")
	}
	s := &Service{
		repo: o.Repo, db: o.Repo.DB(), runner: o.Runner, gw: o.Gateway, ledger: o.Ledger,
		sw: o.Switches, log: o.Logger, now: o.Now, limits: o.Repo.Limits(),
		lastErr: map[task.ID]runError{}, point: func(string) {}, personas: o.Personas, refs: o.References,
		grounding: map[task.ID]RunGrounding{}, agents: agentLimiter{rate: o.AgentRate, burst: o.AgentBurst},
		lang: o.Language,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.seedPresets(ctx); err != nil {
		return nil, err
	}
	if err := s.migrateWatch(ctx); err != nil {
		return nil, err
	}
	ko := o.Task
	d := DefaultTaskOptions
	if ko.MaxAttempts <= 0 {
		ko.MaxAttempts = d.MaxAttempts
	}
	if ko.BackoffBase <= 0 {
		ko.BackoffBase = d.BackoffBase
	}
	if ko.BackoffCap <= 0 {
		ko.BackoffCap = d.BackoffCap
	}
	if ko.Timeout <= 0 {
		ko.Timeout = d.Timeout
	}
	if ko.Concurrency <= 0 {
		ko.Concurrency = d.Concurrency
	}
	ko.OnTransition = s.onTransition
	s.runner.Register(TaskKind, s.execute, ko)
	s.repo.SetHook(changeHook{s})
	return s, nil
}

// WatchSuggestions installs on r the change hook that keeps the
// assistant's suggestions true to the article (changeHook.DocChanged),
// for a process that writes documents without running the assistant —
// the direct-mode CLI: a `folio doc save` that changes a block a pending
// suggestion watches conflicts it at once, as a save through the daemon
// does. NewService installs the same hook.
func WatchSuggestions(ctx context.Context, r *repo.Repo, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	s := &Service{repo: r, db: r.DB(), log: log, now: time.Now, limits: r.Limits(), point: func(string) {}}
	if err := s.migrateWatch(ctx); err != nil {
		return err
	}
	r.SetHook(changeHook{s})
	return nil
}

// Switches are the switches in force.
func (s *Service) Switches() config.Assistant { return s.sw }
