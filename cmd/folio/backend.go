package main

import (
	"context"
	"io"
	"sort"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/search"
	"github.com/foliodev/folio/internal/server"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/urfave/cli/v2"
)

// backend is what the verbs that read or change history need. Direct mode
// implements it on the data directory; --server mode on the daemon's HTTP
// API, so that both print the same output and fail with the same errors.
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
	// History is a block's revisions, oldest first.
	History(ctx context.Context, doc, block string) ([]repo.BlockRevision, error)
	Fsck(ctx context.Context, progress repo.Progress) (repo.FsckReport, error)
	GC(ctx context.Context, o repo.GCOptions) (repo.GCReport, error)

	// ExportPack writes a pack of the documents (all when docs is empty)
	// without what haves reach (docs/packs.md).
	ExportPack(ctx context.Context, docs []string, haves []objstore.ID, w io.Writer) (server.ExportStats, error)
	// Heads lists document heads and backup refs, sorted by name.
	Heads(ctx context.Context) ([]pack.Ref, error)
	// ExportGit writes a git fast-import stream of the documents.
	ExportGit(ctx context.Context, o pack.GitOptions, w io.Writer) (pack.GitStats, error)
	// Usage is the token usage report of the last days, with the settings
	// source of each category (the daemon's configuration in --server mode).
	Usage(ctx context.Context, days int) (*quota.Report, error)
	// AICheck runs `folio ai check` (assistant.Gateway.Check): in the
	// daemon, with its configuration, in --server mode.
	AICheck(ctx context.Context, cat quota.Category, prompt string, onText func(string)) (*assistant.CheckReport, error)

	// The writing assistant (assist.go).
	assistBackend
	// Personas and the memory index (persona.go).
	personaBackend
	// Images and files (asset.go).
	assetBackend
	// Soft delete (delete.go).
	deleteBackend
	// Full-text search (search.go).
	searchBackend

	Close() error
}

// newRemoteBackend is set by the file that implements --server mode.
var newRemoteBackend func(c *cli.Context, url, token string) (backend, error)

// openBackend opens the daemon (serverURL) or the data directory.
func openBackend(c *cli.Context) (backend, error) {
	return openBackendWith(c, repo.Options{})
}

// openBackendWith is openBackend with options for the data directory.
func openBackendWith(c *cli.Context, o repo.Options) (backend, error) {
	if url := serverURL(c); url != "" {
		if newRemoteBackend == nil {
			return nil, usagef("--server is not supported by this build")
		}
		return newRemoteBackend(c, url, c.String("token"))
	}
	r, err := openRepoWith(c, o)
	if err != nil {
		return nil, err
	}
	return &localBackend{r: r, dir: dataDir(c), auth: auth.New(r.DB()), actor: actor(), configPath: c.String("config")}, nil
}

// localBackend works directly on a data directory. Whoever holds the
// directory can read every document, so direct mode acts as an admin:
// it may choose document ids and owners, and reassign documents.
type localBackend struct {
	r          *repo.Repo
	dir        string // the data directory
	auth       *auth.Store
	actor      string
	configPath string
	da         *directAssist // the writing assistant, once a verb used it
	sx         *search.Index // the search index, once a verb used it
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
			return repo.VersionInfo{}, err
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
	return server.Chown(ctx, l.r, l.auth, doc, user, l.actor)
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

func (l *localBackend) Fsck(ctx context.Context, progress repo.Progress) (repo.FsckReport, error) {
	return l.r.Fsck(ctx, repo.FsckOptions{Progress: progress})
}

func (l *localBackend) GC(ctx context.Context, o repo.GCOptions) (repo.GCReport, error) {
	return l.r.GC(ctx, o)
}

func (l *localBackend) stores() pack.Stores {
	return pack.Stores{DB: l.r.DB(), Objects: l.r.Objects(), Refs: l.r.Refs()}
}

func (l *localBackend) ExportPack(ctx context.Context, docs []string, haves []objstore.ID, w io.Writer) (server.ExportStats, error) {
	// A document asked for by name that has no head is the repository's
	// not-found (as the daemon answers it), so both modes print the same.
	for _, d := range docs {
		if _, err := l.r.DocOwner(d); err != nil {
			return server.ExportStats{}, err
		}
	}
	st, err := pack.Export(ctx, l.stores(), w, pack.ExportOptions{Docs: docs, Haves: haves})
	return server.ExportStatsFrom(st), err
}

func (l *localBackend) Heads(ctx context.Context) ([]pack.Ref, error) {
	var out []pack.Ref
	for _, prefix := range []string{pack.DocPrefix, pack.BackupPrefix} {
		vals, names, err := l.r.Refs().List(prefix)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			out = append(out, pack.Ref{Name: n, ID: vals[n]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (l *localBackend) ExportGit(ctx context.Context, o pack.GitOptions, w io.Writer) (pack.GitStats, error) {
	return pack.ExportGit(ctx, l.stores(), w, o)
}

// config loads --config (none means defaults) with environment overrides.
func (l *localBackend) config() (*config.Config, error) {
	cfg, err := config.Load(l.configPath, nil)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err)
	}
	return cfg, nil
}

func (l *localBackend) Usage(ctx context.Context, days int) (*quota.Report, error) {
	cfg, err := l.config()
	if err != nil {
		return nil, err
	}
	return usageReport(cfg, quota.NewLedger(l.r.DB(), quota.LedgerOptions{}), days)
}

// usageReport is the ledger's report with the settings source of each
// category and the advice for those on the legacy [ai] section; the
// daemon serves the same.
func usageReport(cfg *config.Config, ledger *quota.Ledger, days int) (*quota.Report, error) {
	rep, err := ledger.Report(days)
	if err != nil {
		return nil, err
	}
	rep.Sources = map[quota.Category]string{}
	for _, cat := range quota.Categories {
		r, err := cfg.AICategory(string(cat))
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, err)
		}
		rep.Sources[cat] = string(r.Source)
	}
	rep.Warnings = cfg.LegacyAdvice()
	return rep, nil
}

func (l *localBackend) AICheck(ctx context.Context, cat quota.Category, prompt string, onText func(string)) (*assistant.CheckReport, error) {
	cfg, err := l.config()
	if err != nil {
		return nil, err
	}
	g, err := assistant.Open(cfg, l.r.DB(), quota.NewLedger(l.r.DB(), quota.LedgerOptions{}), nil)
	if err != nil {
		return nil, errs.E(errs.Invalid, "ai check %s: %w", cat, err)
	}
	return g.Check(ctx, cat, prompt, onText)
}

// Close stops the assistant's runner, if a verb started it, and closes
// the store. A runner whose handler outlived its deadline leaves the
// store open: every synced write is durable, and the process is exiting.
func (l *localBackend) Close() error {
	if !l.closeAssist() {
		return nil
	}
	if l.sx != nil {
		l.sx.Close(context.Background())
	}
	return l.r.Close()
}

// reasonManual is the checkpoint reason of CLI saves.
const reasonManual = objstore.ReasonManual
