package mcp

import (
	"context"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/persona"
)

// Backend is what the tools need, bound to one caller. It reads and
// proposes; it has no method that writes anything else. Errors carry
// their kinds (package errs); a document the caller may not reach is
// not_found.
type Backend interface {
	ListDocs(ctx context.Context) ([]repo.DocInfo, error)
	// Show returns version label of doc ("" : the head).
	Show(ctx context.Context, doc, label string) (repo.Snapshot, error)
	Log(ctx context.Context, doc string, limit int) ([]repo.VersionInfo, error)
	Diff(ctx context.Context, doc, from, to string) ([]flowdoc.BlockChange, error)
	History(ctx context.Context, doc, block string) ([]repo.BlockRevision, error)
	Presets(ctx context.Context, t assistant.PresetType) ([]assistant.Preset, error)
	Personas(ctx context.Context) ([]persona.Persona, error)
	Suggestions(ctx context.Context, doc string, status assistant.SuggestionStatus, limit int) ([]assistant.Suggestion, error)
	Preview(ctx context.Context, id string) (assistant.Preview, error)
	Explain(ctx context.Context, doc, label string) (assistant.Explanation, error)
	// Assist asks the writing assistant and waits for its run to end
	// (at most wait); the run is returned as it stands then.
	Assist(ctx context.Context, agent assistant.AgentSource, req assistant.AssistRequest, wait time.Duration) (assistant.Run, error)
	Propose(ctx context.Context, agent assistant.AgentSource, req assistant.ProposeRequest) (assistant.Suggestion, error)
}

// Local is the Backend over the services of one process: the daemon's
// (for /v1/mcp) or the data directory's (direct mode). Principal is the
// caller; what it may reach is what its user may (an admin every
// document, an author their own).
type Local struct {
	Repo      Docs
	Assistant *assistant.Service // nil: the assistant tools answer assistant_disabled
	People    *persona.Service   // the persona service; nil: no personas
	Principal auth.Principal
}

var _ Backend = (*Local)(nil)

// Docs is what Local reads of the content service (*repo.Repo).
type Docs interface {
	DocOwner(doc string) (string, error)
	ListDocs(ctx context.Context, owner string) ([]repo.DocInfo, error)
	Show(ctx context.Context, doc, label string) (repo.Snapshot, error)
	Log(ctx context.Context, doc string, limit int, before uint64) ([]repo.VersionInfo, error)
	Diff(ctx context.Context, doc, a, b string) ([]flowdoc.BlockChange, error)
	BlockHistory(ctx context.Context, doc, block string) ([]repo.BlockRevision, error)
}

var _ Docs = (*repo.Repo)(nil)

var errNoAssistant = errs.C(errs.Disabled, assistant.CodeDisabled, "this Folio runs no writing assistant")

// reach answers not_found for a document the caller may not see.
func (l *Local) reach(doc string) error {
	owner, err := l.Repo.DocOwner(doc)
	if err != nil {
		return err
	}
	if !l.Principal.Admin && (owner == "" || owner != l.Principal.UserID) {
		return &repo.NotFoundError{What: "document", Name: doc}
	}
	return nil
}

func (l *Local) actor(agent *assistant.AgentSource) assistant.Actor {
	a := assistant.Actor{UserID: l.Principal.UserID, User: l.Principal.User, Admin: l.Principal.Admin}
	if agent != nil {
		ag := *agent
		ag.Token, ag.User = l.Principal.TokenID, l.Principal.User
		a.Agent = &ag
	}
	return a
}

func (l *Local) svc() (*assistant.Service, error) {
	if l.Assistant == nil {
		return nil, errNoAssistant
	}
	return l.Assistant, nil
}

func (l *Local) ListDocs(ctx context.Context) ([]repo.DocInfo, error) {
	owner := l.Principal.UserID
	if l.Principal.Admin {
		owner = ""
	} else if owner == "" {
		return nil, nil
	}
	return l.Repo.ListDocs(ctx, owner)
}

func (l *Local) Show(ctx context.Context, doc, label string) (repo.Snapshot, error) {
	if err := l.reach(doc); err != nil {
		return repo.Snapshot{}, err
	}
	return l.Repo.Show(ctx, doc, label)
}

func (l *Local) Log(ctx context.Context, doc string, limit int) ([]repo.VersionInfo, error) {
	if err := l.reach(doc); err != nil {
		return nil, err
	}
	return l.Repo.Log(ctx, doc, limit, 0)
}

func (l *Local) Diff(ctx context.Context, doc, from, to string) ([]flowdoc.BlockChange, error) {
	if err := l.reach(doc); err != nil {
		return nil, err
	}
	return l.Repo.Diff(ctx, doc, from, to)
}

func (l *Local) History(ctx context.Context, doc, block string) ([]repo.BlockRevision, error) {
	if err := l.reach(doc); err != nil {
		return nil, err
	}
	return l.Repo.BlockHistory(ctx, doc, block)
}

func (l *Local) Presets(ctx context.Context, t assistant.PresetType) ([]assistant.Preset, error) {
	svc, err := l.svc()
	if err != nil {
		return nil, err
	}
	return svc.Presets(ctx, t, false)
}

func (l *Local) Personas(ctx context.Context) ([]persona.Persona, error) {
	if l.People == nil {
		return nil, nil
	}
	return l.People.List(ctx, l.Principal.UserID)
}

func (l *Local) Suggestions(ctx context.Context, doc string, status assistant.SuggestionStatus, limit int) ([]assistant.Suggestion, error) {
	svc, err := l.svc()
	if err != nil {
		return nil, err
	}
	if err := l.reach(doc); err != nil {
		return nil, err
	}
	return svc.Suggestions(ctx, l.actor(nil), doc, status, limit)
}

func (l *Local) Preview(ctx context.Context, id string) (assistant.Preview, error) {
	svc, err := l.svc()
	if err != nil {
		return assistant.Preview{}, err
	}
	sg, err := svc.Suggestion(ctx, l.actor(nil), id)
	if err == nil && l.reach(sg.Doc) != nil {
		err = errs.E(errs.NotFound, "suggestion %q not found", id)
	}
	if err != nil {
		return assistant.Preview{}, err
	}
	return svc.Preview(ctx, l.actor(nil), id)
}

func (l *Local) Explain(ctx context.Context, doc, label string) (assistant.Explanation, error) {
	svc, err := l.svc()
	if err != nil {
		return assistant.Explanation{}, err
	}
	if err := l.reach(doc); err != nil {
		return assistant.Explanation{}, err
	}
	return svc.Explain(ctx, l.actor(nil), doc, label)
}

func (l *Local) Assist(ctx context.Context, agent assistant.AgentSource, req assistant.AssistRequest, wait time.Duration) (assistant.Run, error) {
	svc, err := l.svc()
	if err != nil {
		return assistant.Run{}, err
	}
	if err := l.reach(req.Doc); err != nil {
		return assistant.Run{}, err
	}
	q, err := svc.Assist(ctx, l.actor(&agent), req)
	if err != nil {
		return assistant.Run{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	run, err := svc.WaitRun(wctx, q.Run.ID)
	if err != nil && wctx.Err() != nil && ctx.Err() == nil {
		return run, nil // still running: the caller says so
	}
	return run, err
}

func (l *Local) Propose(ctx context.Context, agent assistant.AgentSource, req assistant.ProposeRequest) (assistant.Suggestion, error) {
	svc, err := l.svc()
	if err != nil {
		return assistant.Suggestion{}, err
	}
	if err := l.reach(req.Doc); err != nil {
		return assistant.Suggestion{}, err
	}
	return svc.Propose(ctx, l.actor(&agent), req)
}
