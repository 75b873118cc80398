package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/content"
	"github.com/foliodev/folio/persona/index"
)

// personaStack is the persona service with what it runs on: the memory
// index beside the store (nil with [persona] enabled or memory off) and
// the content service it reads sources through.
type personaStack struct {
	svc *persona.Service
	idx *index.Index
	src *content.Sources
}

// generationSources, when set, wraps what the generation task reads
// sources through; nil leaves them as they are. The daemon tests set it
// to hold a generation in flight.
var generationSources func(persona.Sources) persona.Sources

// taskSources is what the generation task reads sources through.
func (ps *personaStack) taskSources() persona.Sources {
	if generationSources != nil {
		return generationSources(ps.src)
	}
	return ps.src
}

// indexDir is the memory index's directory beside the store.
func indexDir(dataDir string) string { return filepath.Join(dataDir, "index") }

// openPersonas builds the persona service of r, whose store is in dir,
// with the configuration's switches. The memory index is opened (and
// rebuilt when missing, corrupt or of an old mapping version) only when
// personas and memory are on; manual leaves its outbox to the readers
// (direct mode) instead of a background applier (the daemon).
func openPersonas(ctx context.Context, r *repo.Repo, dir string, fc *config.Config, manual bool, log *slog.Logger) (*personaStack, error) {
	sw := persona.SwitchesFrom(fc)
	ps := &personaStack{src: content.New(r, nil)}
	if sw.Enabled && sw.Memory {
		idx, err := index.Open(ctx, r.DB(), indexDir(dir), persona.IndexSource(), index.Options{Manual: manual, Logger: log.With("part", "index")})
		if err != nil {
			return nil, errs.E(errs.Internal, "open the memory index in %s: %v", indexDir(dir), err)
		}
		ps.idx = idx
	}
	ps.svc = persona.New(r.DB(), ps.idx, sw, persona.Options{Logger: log.With("part", "persona")})
	return ps, nil
}

// close closes the memory index.
func (ps *personaStack) close(ctx context.Context) error {
	if ps == nil || ps.idx == nil {
		return nil
	}
	return ps.idx.Close(ctx)
}
