package server

import (
	"context"
	"net/http"
)

// SyncService is the WebSocket sync server mounted at /v1/sync (package
// syncproto implements it).
type SyncService interface {
	http.Handler
	// Shutdown stops accepting connections, seals leave checkpoints for
	// editors with unsealed changes and closes every socket with a
	// resumable close code, within ctx.
	Shutdown(ctx context.Context) error
	// RevokeToken closes every connection authenticated with token id
	// and returns how many it closed.
	RevokeToken(tokenID string) int
}

// SyncFactory builds the sync service from the daemon's parts. The
// Server calls it once in New; a nil factory (or a nil service) leaves
// /v1/sync answering 503 unavailable.
type SyncFactory func(SyncDeps) (SyncService, error)

// SyncDeps are what a sync service is built from.
type SyncDeps struct {
	Server *Server // Authenticate, CanAccess, Registerer, Logger, Repo
}

// MountSync is the default SyncFactory: it builds the WebSocket sync
// server (package syncproto) for /v1/sync.
//
// TODO(wiring): package syncproto is not on main yet. When it is, return
// syncproto.New(syncproto.Config{Docs: d.Server.Repo(), Events:
// syncproto.StoreEvents{Store: repo.DB(), Hub: repo.Hub()}, Auth and
// Access adapters over d.Server.Authenticate / CanAccess, Logger,
// Metrics: syncproto.NewMetrics(d.Server.Registerer()), the limits and
// checkpoint rules of d.Server.Config()}). Until then /v1/sync answers 503.
func MountSync(d SyncDeps) (SyncService, error) { return nil, nil }
