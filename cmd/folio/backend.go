package main

import (
	"context"
	"errors"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/objstore"
	"github.com/urfave/cli/v2"
)

// backend is what the history verbs need. Direct mode implements it on the
// data directory; --server mode on the daemon's HTTP API, so both print the
// same output.
//
// CreateDoc's p.Owner is a user *name* here ("" for the default owner);
// each backend turns it into the user id the repository records.
type backend interface {
	CreateDoc(ctx context.Context, p repo.CreateParams) (repo.VersionInfo, error)
	Chown(ctx context.Context, doc, user string) (server.ChownResponse, error)
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
	return &localBackend{r: r, auth: auth.New(r.DB()), actor: actor()}, nil
}

// localBackend works directly on a data directory. Whoever holds the
// directory can read every document, so direct mode acts as an admin:
// it may choose document ids and owners, and reassign documents.
type localBackend struct {
	r     *repo.Repo
	auth  *auth.Store
	actor string
}

var _ backend = (*localBackend)(nil)

// CreateDoc creates a document owned by the user p.Owner names, by
// default the user FOLIO_USER (or the login name) names; when no user has
// that name the document belongs to nobody until an admin reassigns it.
func (l *localBackend) CreateDoc(ctx context.Context, p repo.CreateParams) (repo.VersionInfo, error) {
	p.Author = l.actor
	if p.Owner != "" {
		u, err := l.auth.GetUser(ctx, p.Owner)
		if err != nil {
			return repo.VersionInfo{}, authError(err)
		}
		p.Owner = u.ID
	} else {
		id, err := userID(ctx, l.r, l.actor)
		if err != nil {
			return repo.VersionInfo{}, err
		}
		p.Owner = id
	}
	return l.r.CreateDoc(ctx, p)
}

func (l *localBackend) Chown(ctx context.Context, doc, user string) (server.ChownResponse, error) {
	res, err := server.Chown(ctx, l.r, l.auth, doc, user, l.actor)
	if errors.Is(err, auth.ErrNotFound) {
		return res, authError(err)
	}
	return res, err
}

func (l *localBackend) ListDocs(ctx context.Context) ([]repo.DocInfo, error) {
	docs, err := l.r.ListDocs(ctx, "")
	if err != nil || len(docs) == 0 {
		return docs, err
	}
	names, err := l.auth.Names(ctx)
	for i := range docs {
		docs[i].OwnerName = names[docs[i].Owner]
	}
	return docs, err
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
