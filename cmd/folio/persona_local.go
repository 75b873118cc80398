package main

import (
	"context"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/index"
)

// Personas in direct mode: the persona service is built with the writing
// assistant (they share its task runner), and direct mode acts as the
// user FOLIO_USER names, so its personas are that user's.

// personas returns the direct-mode persona stack and the user id.
func (l *localBackend) personas(ctx context.Context) (*personaStack, string, error) {
	if _, err := l.assist(ctx); err != nil {
		return nil, "", err
	}
	a, err := l.me(ctx)
	if err != nil {
		return nil, "", err
	}
	return l.da.personas, a.UserID, nil
}

func (l *localBackend) CreatePersona(ctx context.Context, name string, sources []string) (persona.Persona, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return persona.Persona{}, err
	}
	return ps.svc.Create(ctx, user, name, sources)
}

func (l *localBackend) Personas(ctx context.Context) ([]persona.Persona, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return nil, err
	}
	return ps.svc.List(ctx, user)
}

func (l *localBackend) Persona(ctx context.Context, id string) (persona.Persona, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return persona.Persona{}, err
	}
	return ps.svc.Get(ctx, user, id)
}

func (l *localBackend) PersonaSources(ctx context.Context, id string) ([]server.PersonaSource, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return nil, err
	}
	return server.PersonaSources(ctx, ps.svc, ps.src, user, id)
}

func (l *localBackend) PersonaVersions(ctx context.Context, id string) ([]persona.Version, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return nil, err
	}
	return ps.svc.Versions(ctx, user, id)
}

func (l *localBackend) ActivatePersona(ctx context.Context, id string, version int) (persona.Persona, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return persona.Persona{}, err
	}
	return ps.svc.Activate(ctx, user, id, version)
}

func (l *localBackend) GeneratePersona(ctx context.Context, id string) (persona.Job, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return persona.Job{}, err
	}
	return ps.svc.StartGenerate(ctx, user, id)
}

// WaitPersonaJob runs the store's task runner until the job ends.
func (l *localBackend) WaitPersonaJob(ctx context.Context, id, job string) (persona.Job, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return persona.Job{}, err
	}
	j, err := ps.svc.Job(ctx, user, job)
	if err != nil || j.State.Terminal() {
		return j, err
	}
	if j.Persona != id {
		return persona.Job{}, errs.E(errs.NotFound, "persona: no generation job %q", job)
	}
	if err := l.startRunner(ctx); err != nil {
		return persona.Job{}, err
	}
	return ps.svc.WaitJob(ctx, user, job)
}

func (l *localBackend) PersonaStyle(ctx context.Context, id string, version int) (server.PersonaStyle, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return server.PersonaStyle{}, err
	}
	p, v, err := ps.svc.Style(ctx, user, id, version)
	return server.PersonaStyle{Version: v, Profile: p}, err
}

func (l *localBackend) PersonaMemory(ctx context.Context, id string, version int, query string, limit int) (server.PersonaMemory, error) {
	ps, user, err := l.personas(ctx)
	if err != nil {
		return server.PersonaMemory{}, err
	}
	return server.PersonaMemoryOf(ctx, ps.svc, user, id, version, query, limit)
}

// memoryIndex is the open memory index, or why there is none.
func (l *localBackend) memoryIndex(ctx context.Context) (*index.Index, error) {
	if _, err := l.assist(ctx); err != nil {
		return nil, err
	}
	if l.da.personas.idx == nil {
		return nil, errs.C(errs.Disabled, persona.CodeDisabled, "the memory index is not used: [persona] enabled or memory is off")
	}
	return l.da.personas.idx, nil
}

func (l *localBackend) IndexStatus(ctx context.Context) (index.Status, error) {
	idx, err := l.memoryIndex(ctx)
	if err != nil {
		return index.Status{}, err
	}
	return idx.Status(ctx)
}

func (l *localBackend) IndexRebuild(ctx context.Context) (index.Status, error) {
	// The document search index is rebuilt too, as the daemon does.
	sx, err := l.searchIndex(ctx)
	if err != nil {
		return index.Status{}, err
	}
	if err := sx.Rebuild(ctx); err != nil {
		return index.Status{}, err
	}
	idx, err := l.memoryIndex(ctx)
	if err != nil {
		return index.Status{}, err
	}
	if err := idx.Rebuild(ctx, "requested"); err != nil {
		return index.Status{}, err
	}
	return idx.Status(ctx)
}
