package synctest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/foliodev/folio/syncproto"
)

// Env is a sync server on a loopback listener backed by the in-memory
// Docs, Auth and Access.
type Env struct {
	Docs   *Docs
	Auth   *Auth
	Access *Access
	Server *syncproto.Server
	HTTP   *httptest.Server
	// URL is the ws:// address of /v1/sync.
	URL string
}

// Start starts an Env; configure, when not nil, may change the server's
// Config before it is created (Docs, Events, Auth and Access are set).
func Start(configure func(*syncproto.Config)) (*Env, error) {
	docs, err := NewDocs()
	if err != nil {
		return nil, err
	}
	e := &Env{Docs: docs, Auth: NewAuth(), Access: &Access{Docs: docs}}
	cfg := syncproto.Config{Docs: docs, Events: docs.Events(), Auth: e.Auth, Access: e.Access}
	if configure != nil {
		configure(&cfg)
	}
	if e.Server, err = syncproto.New(cfg); err != nil {
		docs.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/sync", e.Server)
	e.HTTP = httptest.NewServer(mux)
	e.URL = "ws" + strings.TrimPrefix(e.HTTP.URL, "http") + "/v1/sync"
	return e, nil
}

// Close shuts the server down gracefully and frees everything.
func (e *Env) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.Server.Shutdown(ctx)
	e.HTTP.Close()
	e.Docs.Close()
}
