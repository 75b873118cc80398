package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/internal/task"
)

// agentRate overrides the per-token proposal rate (assistant.Options);
// 0 keeps the default. Only tests set it (benchmarks of proposals).
var agentRate int

// newAssistant builds the writing assistant over r: the task runner
// (sharing the repository's hub, so that run streams wake their readers)
// and the service with the configuration's switches, on the gateway and
// ledger given. The runner is not started. The daemon and direct mode
// build it the same way.
func newAssistant(ctx context.Context, r *repo.Repo, fc *config.Config, ledger *quota.Ledger, gw *assistant.Gateway, ps *personaStack, log *slog.Logger) (*task.Runner, *assistant.Service, error) {
	runner, err := task.Open(r.DB(), task.Options{Hub: r.Hub(), Logger: log.With("part", "task")})
	if err != nil {
		return nil, nil, errs.E(errs.Internal, "open the task runner: %v", err)
	}
	o := assistant.Options{Repo: r, Runner: runner, Gateway: gw, Ledger: ledger,
		Switches: fc.Assistant, Language: fc.Site.Language, Logger: log.With("part", "assistant"), AgentRate: agentRate}
	if ps != nil {
		o.Personas, o.References = ps.svc, ps.src
	}
	svc, err := assistant.NewService(ctx, o)
	if err != nil {
		return nil, nil, errs.E(errs.Internal, "start the writing assistant: %v", err)
	}
	if ps != nil {
		// The generation task runs on the same runner and learns from the
		// decisions the assistant records.
		ps.svc.Register(runner, ps.taskSources(), svc.LearningReader(), task.KindOptions{})
		// The writing provider, when it is not the local one, adds prose
		// to each new style profile.
		ps.svc.UseDescriber(svc.StyleProse())
		// Private sources are decided by the provider they reach: the
		// writing one (llm.PrivateAllowed).
		if rt, ok := gw.Route(quota.Writing); ok {
			ps.svc.UseProvider(rt.Provider)
		}
	}
	return runner, svc, nil
}

// directAssist is the writing assistant of a direct-mode command, built
// on first use. Its runner starts only for the commands that wait for a
// run (--wait, --follow): a run queued otherwise stays queued until a
// daemon or a later waiting command runs the store's runner.
type directAssist struct {
	runner   *task.Runner
	svc      *assistant.Service
	personas *personaStack
	started  bool
}

// assist returns the direct-mode service, building it on first use.
func (l *localBackend) assist(ctx context.Context) (*assistant.Service, error) {
	if l.da != nil {
		return l.da.svc, nil
	}
	fc, err := l.config()
	if err != nil {
		return nil, err
	}
	ledger := quota.NewLedger(l.r.DB(), quota.LedgerOptions{})
	gw, err := assistant.Open(fc, l.r.DB(), ledger, nil)
	if err != nil {
		return nil, errs.E(errs.Invalid, "model access: %w", err)
	}
	log := slog.New(slog.DiscardHandler)
	ps, err := openPersonas(ctx, l.r, l.dir, fc, true, log)
	if err != nil {
		return nil, err
	}
	runner, svc, err := newAssistant(ctx, l.r, fc, ledger, gw, ps, log)
	if err != nil {
		ps.close(ctx)
		return nil, err
	}
	l.da = &directAssist{runner: runner, svc: svc, personas: ps}
	return svc, nil
}

// startRunner starts the store's task runner in this process: runs left
// running by a crash are recovered first, then every due task runs,
// whoever queued it.
func (l *localBackend) startRunner(ctx context.Context) error {
	if _, err := l.assist(ctx); err != nil {
		return err
	}
	if l.da.started {
		return nil
	}
	if err := l.da.runner.Start(ctx); err != nil {
		return errs.E(errs.Internal, "start the task runner: %v", err)
	}
	l.da.started = true
	return nil
}

// closeAssist stops the runner: running tasks are cancelled and requeued
// without spending an attempt. It reports false when a handler outlived
// the deadline, and the store must then stay open.
func (l *localBackend) closeAssist() bool {
	if l.da == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if l.da.runner.Close(ctx) != nil {
		return false
	}
	return l.da.personas.close(ctx) == nil
}

// me is who direct mode acts as: the user FOLIO_USER (or the login name)
// names, with an admin's reach. The assistant keys sessions and runs by
// user id, so that user must exist.
func (l *localBackend) me(ctx context.Context) (assistant.Actor, error) {
	id, err := userID(ctx, l.r, l.actor)
	if err != nil {
		return assistant.Actor{}, err
	}
	if id == "" {
		return assistant.Actor{}, errs.E(errs.Unauthenticated,
			"direct mode acts as %q (FOLIO_USER, or the login name), and this store has no user of that name; the writing assistant keeps sessions and runs per user: "+
				"add one with `folio user add %s` or set FOLIO_USER to a user's name", l.actor, l.actor)
	}
	return assistant.Actor{UserID: id, User: l.actor, Admin: true}, nil
}

// anyone is who direct mode acts as for what needs no identity (preset
// listings, suggestions, explain): its name, with an admin's reach.
func (l *localBackend) anyone() assistant.Actor { return assistant.Actor{User: l.actor, Admin: true} }

// reach checks that doc exists, as the daemon's document check does
// before any assistant call (direct mode reaches every document).
func (l *localBackend) reach(doc string) error {
	_, err := l.r.DocOwner(doc)
	return err
}

// withDoc runs the service call fn after the document check, as the
// endpoint of a document does.
func (l *localBackend) withDoc(ctx context.Context, doc string, needsUser bool, fn func(*assistant.Service, assistant.Actor) error) error {
	if err := l.reach(doc); err != nil {
		return err
	}
	return l.call(ctx, needsUser, fn)
}

// call runs fn on the service as me (needsUser) or anyone.
func (l *localBackend) call(ctx context.Context, needsUser bool, fn func(*assistant.Service, assistant.Actor) error) error {
	svc, err := l.assist(ctx)
	if err != nil {
		return err
	}
	a := l.anyone()
	if needsUser {
		if a, err = l.me(ctx); err != nil {
			return err
		}
	}
	return fn(svc, a)
}

func (l *localBackend) Assist(ctx context.Context, req assistant.AssistRequest) (q assistant.Queued, err error) {
	err = l.withDoc(ctx, req.Doc, true, func(svc *assistant.Service, a assistant.Actor) error {
		q, err = svc.Assist(ctx, a, req)
		return err
	})
	return q, err
}

// run reads run id as the daemon's run endpoints do.
func (l *localBackend) run(ctx context.Context, svc *assistant.Service, a assistant.Actor, id string) (assistant.Run, error) {
	run, err := svc.Run(ctx, a, id)
	if err == nil {
		err = l.reach(run.Doc)
	}
	return run, hiddenErr(err, "run", id)
}

// hiddenErr gives a missing run, suggestion or session the daemon's words.
func hiddenErr(err error, what, id string) error {
	if err != nil && errs.KindOf(err) == errs.NotFound {
		return errs.E(errs.NotFound, "%s %q not found", what, id)
	}
	return err
}

func (l *localBackend) Run(ctx context.Context, id string) (run assistant.Run, err error) {
	err = l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		run, err = l.run(ctx, svc, a, id)
		return err
	})
	return run, err
}

func (l *localBackend) WaitRun(ctx context.Context, id string) (run assistant.Run, err error) {
	err = l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		if run, err = l.run(ctx, svc, a, id); err != nil || run.State.Terminal() {
			return err
		}
		if err := l.startRunner(ctx); err != nil {
			return err
		}
		run, err = svc.WaitRun(ctx, id)
		return err
	})
	return run, err
}

func (l *localBackend) CancelRun(ctx context.Context, id string) (run assistant.Run, err error) {
	err = l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		if _, err := l.run(ctx, svc, a, id); err != nil {
			return err
		}
		run, err = svc.CancelRun(ctx, a, id)
		return err
	})
	return run, err
}

func (l *localBackend) RunEvents(ctx context.Context, id string, after uint64, limit int) (page server.RunEventsPage, err error) {
	err = l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		run, err := l.run(ctx, svc, a, id)
		if err != nil {
			return err
		}
		page, err = server.ReadRunEvents(ctx, svc, run, after, limit)
		return err
	})
	return page, err
}

func (l *localBackend) FollowRun(ctx context.Context, id string, after uint64, fn func(server.RunEventView) error) error {
	return l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		run, err := l.run(ctx, svc, a, id)
		if err != nil {
			return err
		}
		if !run.State.Terminal() {
			if err := l.startRunner(ctx); err != nil {
				return err
			}
		}
		return server.FollowRun(ctx, svc, l.r, a, id, after, fn, nil)
	})
}

func (l *localBackend) Sessions(ctx context.Context, doc string) (ss []assistant.Session, err error) {
	err = l.withDoc(ctx, doc, true, func(svc *assistant.Service, a assistant.Actor) error {
		ss, err = svc.Sessions(ctx, a, doc)
		return err
	})
	return ss, err
}

func (l *localBackend) StartSession(ctx context.Context, doc, title string) (ss assistant.Session, err error) {
	err = l.withDoc(ctx, doc, true, func(svc *assistant.Service, a assistant.Actor) error {
		ss, err = svc.StartSession(ctx, a, doc, title)
		return err
	})
	return ss, err
}

func (l *localBackend) SwitchSession(ctx context.Context, doc, id string) (ss assistant.Session, err error) {
	err = l.withDoc(ctx, doc, true, func(svc *assistant.Service, a assistant.Actor) error {
		ss, err = svc.SwitchSession(ctx, a, doc, id)
		return hiddenErr(err, "session", id)
	})
	return ss, err
}

// session reads session id as the daemon's session endpoints do.
func (l *localBackend) session(ctx context.Context, svc *assistant.Service, a assistant.Actor, id string) (assistant.Session, error) {
	ss, err := svc.Session(ctx, a, id)
	if err == nil {
		err = l.reach(ss.Doc)
	}
	return ss, hiddenErr(err, "session", id)
}

func (l *localBackend) Session(ctx context.Context, id string) (ss assistant.Session, err error) {
	err = l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		ss, err = l.session(ctx, svc, a, id)
		return err
	})
	return ss, err
}

func (l *localBackend) Messages(ctx context.Context, session string, after uint64, limit int) (ms []assistant.MessagePreview, err error) {
	err = l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		if _, err := l.session(ctx, svc, a, session); err != nil {
			return err
		}
		ms, err = svc.Messages(ctx, a, session, after, limit)
		return err
	})
	return ms, err
}

func (l *localBackend) MessageSource(ctx context.Context, session string, seq uint64) (src assistant.MessageSource, err error) {
	err = l.call(ctx, true, func(svc *assistant.Service, a assistant.Actor) error {
		if _, err := l.session(ctx, svc, a, session); err != nil {
			return err
		}
		src, err = svc.MessageSource(ctx, a, session, seq)
		return err
	})
	return src, err
}

func (l *localBackend) Suggestions(ctx context.Context, doc string, status assistant.SuggestionStatus, limit int) (sgs []assistant.Suggestion, err error) {
	err = l.withDoc(ctx, doc, false, func(svc *assistant.Service, a assistant.Actor) error {
		sgs, err = svc.Suggestions(ctx, a, doc, status, limit)
		return err
	})
	return sgs, err
}

// suggestion reads suggestion id as the daemon's endpoints do.
func (l *localBackend) suggestion(ctx context.Context, svc *assistant.Service, a assistant.Actor, id string) (assistant.Suggestion, error) {
	sg, err := svc.Suggestion(ctx, a, id)
	if err == nil {
		err = l.reach(sg.Doc)
	}
	return sg, hiddenErr(err, "suggestion", id)
}

func (l *localBackend) Suggestion(ctx context.Context, id string) (sg assistant.Suggestion, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		sg, err = l.suggestion(ctx, svc, a, id)
		return err
	})
	return sg, err
}

func (l *localBackend) Preview(ctx context.Context, id string) (pv assistant.Preview, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		if _, err := l.suggestion(ctx, svc, a, id); err != nil {
			return err
		}
		pv, err = svc.Preview(ctx, a, id)
		return err
	})
	return pv, err
}

func (l *localBackend) Accept(ctx context.Context, id string, o assistant.AcceptOptions) (acc assistant.Accepted, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		if _, err := l.suggestion(ctx, svc, a, id); err != nil {
			return err
		}
		acc, err = svc.Accept(ctx, a, id, o)
		return err
	})
	return acc, err
}

func (l *localBackend) Reject(ctx context.Context, id, reason string) (sg assistant.Suggestion, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		if _, err := l.suggestion(ctx, svc, a, id); err != nil {
			return err
		}
		sg, err = svc.Reject(ctx, a, id, reason)
		return err
	})
	return sg, err
}

func (l *localBackend) Presets(ctx context.Context, t assistant.PresetType, archived bool) (vs []server.PresetView, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, _ assistant.Actor) error {
		ps, err := svc.Presets(ctx, t, archived)
		if err != nil {
			return err
		}
		for _, p := range ps {
			note, err := svc.PresetOffline(p)
			if err != nil {
				return err
			}
			vs = append(vs, server.PresetView{Preset: p, Offline: note})
		}
		return nil
	})
	return vs, err
}

func (l *localBackend) PresetDetail(ctx context.Context, id string) (d assistant.PresetDetail, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		d, err = svc.PresetAdmin(ctx, a, id)
		return err
	})
	return d, err
}

func (l *localBackend) PresetVersion(ctx context.Context, id string, n int) (v assistant.PresetVersion, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		v, err = svc.PresetVersionAdmin(ctx, a, id, n)
		return err
	})
	return v, err
}

func (l *localBackend) CreatePreset(ctx context.Context, in assistant.PresetInput) (p assistant.Preset, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		p, err = svc.CreatePreset(ctx, a, in)
		return err
	})
	return p, err
}

func (l *localBackend) EditPreset(ctx context.Context, id string, in assistant.PresetInput) (p assistant.Preset, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		p, err = svc.EditPreset(ctx, a, id, in)
		return err
	})
	return p, err
}

func (l *localBackend) CopyPreset(ctx context.Context, id, name string) (p assistant.Preset, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		p, err = svc.CopyPreset(ctx, a, id, name)
		return err
	})
	return p, err
}

func (l *localBackend) ReorderPresets(ctx context.Context, t assistant.PresetType, ids []string) (ps []assistant.Preset, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		ps, err = svc.ReorderPresets(ctx, a, t, ids)
		return err
	})
	return ps, err
}

func (l *localBackend) ArchivePreset(ctx context.Context, id string) (p assistant.Preset, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		p, err = svc.ArchivePreset(ctx, a, id)
		return err
	})
	return p, err
}

func (l *localBackend) RestorePreset(ctx context.Context, id string) (p assistant.Preset, err error) {
	err = l.call(ctx, false, func(svc *assistant.Service, a assistant.Actor) error {
		p, err = svc.RestorePreset(ctx, a, id)
		return err
	})
	return p, err
}

func (l *localBackend) Explain(ctx context.Context, doc, label string) (e assistant.Explanation, err error) {
	err = l.withDoc(ctx, doc, false, func(svc *assistant.Service, a assistant.Actor) error {
		e, err = svc.Explain(ctx, a, doc, label)
		return err
	})
	return e, err
}
