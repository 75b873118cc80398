package main

import (
	"context"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
	"github.com/urfave/cli/v2"
)

// backend is what the history verbs need. Direct mode implements it on the
// data directory; --server mode on the daemon's HTTP API, so both print the
// same output.
type backend interface {
	CreateDoc(ctx context.Context, p repo.CreateParams) (repo.VersionInfo, error)
	ListDocs(ctx context.Context) ([]repo.DocInfo, error)
	Draft(ctx context.Context, doc string) (repo.Draft, error)
	SaveDraft(ctx context.Context, p repo.SaveParams) (repo.SaveResult, error)
	Checkpoint(ctx context.Context, doc, reason, message string) (repo.VersionInfo, bool, error)
	Log(ctx context.Context, doc string, limit int) ([]repo.VersionInfo, error)
	Show(ctx context.Context, doc, label string) (repo.Snapshot, error)
	Diff(ctx context.Context, doc, a, b string) ([]flowdoc.BlockChange, error)
	Restore(ctx context.Context, doc, label, block string) (repo.VersionInfo, error)
	History(ctx context.Context, doc, block string) ([]repo.BlockRevision, error)
	Fsck(ctx context.Context) (repo.FsckReport, error)
	GC(ctx context.Context, o repo.GCOptions) (repo.GCReport, error)
	Close() error
}

// newRemoteBackend is set by the file that implements --server mode.
var newRemoteBackend func(c *cli.Context, url, token string) (backend, error)

func openBackend(c *cli.Context) (backend, error) {
	if url := c.String("server"); url != "" {
		if newRemoteBackend == nil {
			return nil, exitf(exitUsage, "--server is not supported by this build")
		}
		return newRemoteBackend(c, url, c.String("token"))
	}
	r, err := openRepo(c)
	if err != nil {
		return nil, err
	}
	return &localBackend{r: r, actor: actor(), config: c.String("config")}, nil
}

// localBackend works directly on a data directory.
type localBackend struct {
	r      *repo.Repo
	actor  string
	config string // --config, for the verbs that run an assistant
}

var _ backend = (*localBackend)(nil)

func (l *localBackend) CreateDoc(ctx context.Context, p repo.CreateParams) (repo.VersionInfo, error) {
	if p.Owner == "" {
		p.Owner = l.actor
	}
	return l.r.CreateDoc(ctx, p)
}

func (l *localBackend) ListDocs(ctx context.Context) ([]repo.DocInfo, error) {
	return l.r.ListDocs(ctx, "")
}

func (l *localBackend) Draft(ctx context.Context, doc string) (repo.Draft, error) {
	return l.r.Draft(ctx, doc)
}

func (l *localBackend) SaveDraft(ctx context.Context, p repo.SaveParams) (repo.SaveResult, error) {
	p.Actor = l.actor
	return l.r.SaveDraft(ctx, p)
}

func (l *localBackend) Checkpoint(ctx context.Context, doc, reason, message string) (repo.VersionInfo, bool, error) {
	return l.r.Checkpoint(ctx, doc, reason, l.actor, message)
}

func (l *localBackend) Log(ctx context.Context, doc string, limit int) ([]repo.VersionInfo, error) {
	return l.r.Log(ctx, doc, limit, 0)
}

func (l *localBackend) Show(ctx context.Context, doc, label string) (repo.Snapshot, error) {
	return l.r.Show(ctx, doc, label)
}

func (l *localBackend) Diff(ctx context.Context, doc, a, b string) ([]flowdoc.BlockChange, error) {
	return l.r.Diff(ctx, doc, a, b)
}

func (l *localBackend) Restore(ctx context.Context, doc, label, block string) (repo.VersionInfo, error) {
	if block != "" {
		return l.r.RestoreBlock(ctx, doc, label, block, l.actor)
	}
	return l.r.Restore(ctx, doc, label, l.actor)
}

func (l *localBackend) History(ctx context.Context, doc, block string) ([]repo.BlockRevision, error) {
	return l.r.BlockHistory(ctx, doc, block)
}

func (l *localBackend) Fsck(ctx context.Context) (repo.FsckReport, error) {
	return l.r.Fsck(ctx)
}

func (l *localBackend) GC(ctx context.Context, o repo.GCOptions) (repo.GCReport, error) {
	return l.r.GC(ctx, o)
}

func (l *localBackend) Close() error { return l.r.Close() }

// reasonManual is the checkpoint reason of CLI saves.
const reasonManual = objstore.ReasonManual
