package synctest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server/syncrepo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/syncproto"
)

// Env is a sync server on a loopback listener over a real repository in
// a data directory, with the in-memory Auth and Access.
type Env struct {
	Repo   *repo.Repo
	Auth   *Auth
	Access *Access
	Server *syncproto.Server
	HTTP   *httptest.Server
	// URL is the ws:// address of /v1/sync.
	URL string
	// Dir is the data directory.
	Dir string

	ownDir bool // Close removes Dir
}

// Options configure Start.
type Options struct {
	// Dir is the data directory; empty: a new temporary one, removed by
	// Close. An existing directory is opened as it is (a restart).
	Dir string
	// Repo options (retention, limits).
	Repo repo.Options
	// Configure, when set, may change the server's Config before the
	// server is created (Docs, Events, Auth and Access are set).
	Configure func(*syncproto.Config)
}

// Start opens (or creates) the repository and starts the server.
func Start(o Options) (*Env, error) {
	e := &Env{Dir: o.Dir, Auth: NewAuth()}
	if e.Dir == "" {
		dir, err := os.MkdirTemp("", "folio-synctest-")
		if err != nil {
			return nil, err
		}
		e.Dir, e.ownDir = dir, true
	}
	if _, err := os.Stat(e.Dir + "/FOLIO"); err != nil {
		if err := repo.Init(e.Dir); err != nil {
			e.cleanup()
			return nil, fmt.Errorf("synctest: init %s: %w", e.Dir, err)
		}
	}
	r, err := repo.Open(e.Dir, o.Repo)
	if err != nil {
		e.cleanup()
		return nil, fmt.Errorf("synctest: open %s: %w", e.Dir, err)
	}
	e.Repo = r
	e.Access = &Access{Repo: r}
	cfg := syncproto.Config{Docs: syncrepo.Docs{Content: r}, Events: e.Events(), Auth: e.Auth, Access: e.Access}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	if e.Server, err = syncproto.New(cfg); err != nil {
		r.Close()
		e.cleanup()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/sync", e.Server)
	e.HTTP = httptest.NewServer(mux)
	e.URL = "ws" + strings.TrimPrefix(e.HTTP.URL, "http") + "/v1/sync"
	return e, nil
}

func (e *Env) cleanup() {
	if e.ownDir {
		os.RemoveAll(e.Dir)
	}
}

// Events returns the stream reader of the repository.
func (e *Env) Events() syncproto.Events {
	return syncrepo.Events{Streams: e.Repo}
}

// Close shuts the server down gracefully, closes the repository and
// removes a temporary data directory.
func (e *Env) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.Server.Shutdown(ctx)
	e.HTTP.Close()
	e.Repo.Close()
	e.cleanup()
}

// CreateDoc creates document id of owner (a user of Auth: its name is
// its id here) with body.
func (e *Env) CreateDoc(id, owner string, body flowdoc.Document) error {
	_, err := e.Repo.CreateDoc(context.Background(), repo.CreateParams{ID: id, Owner: owner, Author: owner,
		Attrs: flowdoc.Attributes{Title: "Document " + id}, Body: body})
	return err
}

// Versions returns the log of doc, oldest first.
func (e *Env) Versions(doc string) []repo.VersionInfo {
	vs, err := e.Repo.Log(context.Background(), doc, 0, 0)
	if err != nil {
		return nil
	}
	for i, j := 0, len(vs)-1; i < j; i, j = i+1, j-1 {
		vs[i], vs[j] = vs[j], vs[i]
	}
	return vs
}

// Trim drops the events of a stream before keep, as retention does.
func (e *Env) Trim(name string, keep uint64) error {
	b := e.Repo.DB().NewBatch()
	defer b.Close()
	if err := stream.Trim(b, name, keep); err != nil {
		return err
	}
	if err := e.Repo.DB().Apply(b, kv.Sync); err != nil {
		return err
	}
	e.Repo.Hub().Notify(name) // the hub's tail may hold trimmed events
	return nil
}

// AppendEvent appends an event to a stream that is not a document's (a
// run's, in tests) and wakes its readers. Not safe for concurrent use on
// one stream.
func (e *Env) AppendEvent(name, typ string, data any) (uint64, error) {
	db := e.Repo.DB()
	last, err := stream.Last(db, name)
	if err != nil {
		return 0, err
	}
	b := db.NewBatch()
	defer b.Close()
	if err := stream.Append(b, name, last+1, typ, time.Now().UnixMilli(), data); err != nil {
		return 0, err
	}
	if err := db.Apply(b, kv.Sync); err != nil {
		return 0, err
	}
	e.Repo.Hub().Notify(name)
	return last + 1, nil
}
