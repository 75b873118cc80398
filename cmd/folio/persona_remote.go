package main

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/index"
)

// Personas through the daemon's API (docs/api.md, "Personas").

func personaPath(id string, rest ...string) string {
	p := "/v1/personas/" + url.PathEscape(id)
	for _, s := range rest {
		p += "/" + s
	}
	return p
}

func (r *remote) CreatePersona(ctx context.Context, name string, sources []string) (persona.Persona, error) {
	var p persona.Persona
	err := r.do(ctx, http.MethodPost, "/v1/personas", nil, server.PersonaRequest{Name: name, Sources: sources}, &p)
	return p, err
}

func (r *remote) Personas(ctx context.Context) ([]persona.Persona, error) {
	var ps []persona.Persona
	err := r.do(ctx, http.MethodGet, "/v1/personas", nil, nil, &ps)
	return ps, err
}

func (r *remote) Persona(ctx context.Context, id string) (persona.Persona, error) {
	var p persona.Persona
	err := r.do(ctx, http.MethodGet, personaPath(id), nil, nil, &p)
	return p, err
}

func (r *remote) PersonaSources(ctx context.Context, id string) ([]server.PersonaSource, error) {
	var ss []server.PersonaSource
	err := r.do(ctx, http.MethodGet, personaPath(id, "sources"), nil, nil, &ss)
	return ss, err
}

func (r *remote) PersonaVersions(ctx context.Context, id string) ([]persona.Version, error) {
	var vs []persona.Version
	err := r.do(ctx, http.MethodGet, personaPath(id, "versions"), nil, nil, &vs)
	return vs, err
}

func (r *remote) ActivatePersona(ctx context.Context, id string, version int) (persona.Persona, error) {
	var p persona.Persona
	err := r.do(ctx, http.MethodPost, personaPath(id, "activate"), nil, server.PersonaActivateRequest{Version: version}, &p)
	return p, err
}

func (r *remote) GeneratePersona(ctx context.Context, id string) (persona.Job, error) {
	var j persona.Job
	err := r.do(ctx, http.MethodPost, personaPath(id, "generate"), nil, nil, &j)
	return j, err
}

// WaitPersonaJob asks for the job, waiting up to the daemon's bound each
// time, until it ends.
func (r *remote) WaitPersonaJob(ctx context.Context, id, job string) (persona.Job, error) {
	for {
		var j persona.Job
		if err := r.do(ctx, http.MethodGet, personaPath(id, "jobs", url.PathEscape(job)), url.Values{"wait": {"30"}}, nil, &j); err != nil {
			return j, err
		}
		if j.State.Terminal() || j.State == "" {
			return j, nil
		}
		if err := ctx.Err(); err != nil {
			return j, err
		}
	}
}

func versionQuery(version int) url.Values {
	q := url.Values{}
	if version > 0 {
		q.Set("version", strconv.Itoa(version))
	}
	return q
}

func (r *remote) PersonaStyle(ctx context.Context, id string, version int) (server.PersonaStyle, error) {
	var ps server.PersonaStyle
	err := r.do(ctx, http.MethodGet, personaPath(id, "style"), versionQuery(version), nil, &ps)
	return ps, err
}

func (r *remote) PersonaMemory(ctx context.Context, id string, version int, query string, limit int) (server.PersonaMemory, error) {
	q := versionQuery(version)
	if query != "" {
		q.Set("query", query)
	}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var m server.PersonaMemory
	err := r.do(ctx, http.MethodGet, personaPath(id, "memory"), q, nil, &m)
	return m, err
}

func (r *remote) IndexStatus(ctx context.Context) (index.Status, error) {
	var st index.Status
	err := r.do(ctx, http.MethodGet, "/v1/admin/index", nil, nil, &st)
	return st, err
}

func (r *remote) IndexRebuild(ctx context.Context) (index.Status, error) {
	var st index.Status
	err := r.do(ctx, http.MethodPost, "/v1/admin/index/rebuild", nil, nil, &st)
	return st, err
}
