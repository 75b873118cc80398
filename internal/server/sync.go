package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server/syncrepo"
	"github.com/foliodev/folio/syncproto"
)

// SyncService is the WebSocket sync server mounted at /v1/sync (package
// syncproto implements it).
type SyncService interface {
	http.Handler
	// Shutdown stops accepting connections, seals leave checkpoints for
	// editors with unsealed changes and closes every socket with a
	// resumable close code, within ctx.
	Shutdown(ctx context.Context) error
	// FailStop is Shutdown after the store failed: requests in progress
	// finish (their writes fail at once), no checkpoint is sealed, and
	// every socket closes with syncproto.CloseStorageFailed and reason.
	FailStop(ctx context.Context, reason string) error
	// RevokeToken closes every connection authenticated with token id
	// and returns how many it closed.
	RevokeToken(tokenID string) int
}

var _ SyncService = (*syncproto.Server)(nil)

// rechecker is a SyncService that can withdraw a document from the
// connections that may no longer reach it (after its owner changed).
type rechecker interface {
	Recheck(doc string) int
}

var _ rechecker = (*syncproto.Server)(nil)

// SyncFactory builds the sync service from the daemon's parts. The
// Server calls it once in New; a nil service leaves /v1/sync answering
// 503 unavailable.
type SyncFactory func(SyncDeps) (SyncService, error)

// SyncDeps are what a sync service is built from.
type SyncDeps struct {
	Server *Server // Authenticate, CanAccess, Registerer, Logger, Content
}

// MountSync is the default SyncFactory: the WebSocket sync server of
// package syncproto over the server's content service (its drafts and
// event streams, through package syncrepo), authentication and access
// rules, with the configured limits. The checkpoint rules are the
// content service's (repo.Options).
// Revoking a token (auth.Store.OnRevoke, wired in New) closes its
// connections through RevokeToken.
func MountSync(d SyncDeps) (SyncService, error) {
	s := d.Server
	m, err := syncproto.NewMetrics(s.Registerer())
	if err != nil {
		return nil, fmt.Errorf("sync metrics: %w", err)
	}
	cfg := s.Config()
	c := s.Content()
	c.OnCheckpoint(func(v repo.VersionInfo) { m.Checkpoint(v.Reason) })
	return syncproto.New(syncproto.Config{
		Docs:              syncrepo.Docs{Content: c},
		Events:            syncrepo.Events{Streams: c, Logger: s.Logger().With("part", "sync")},
		Auth:              syncAuth{s},
		Access:            syncAuth{s},
		Attrs:             syncAttrs{s},
		Assistant:         syncAssist{s},
		Logger:            s.Logger().With("part", "sync"),
		Metrics:           m,
		MaxFrame:          cfg.MaxFrame,
		MessagesPerSecond: cfg.MessagesPerSecond,
		MaxSubscriptions:  cfg.MaxSubscriptions,
		OriginPatterns:    originPatterns(cfg.AllowedOrigins),
	})
}

// syncAuth adapts the server's authentication and access rules to the
// sync server's interfaces.
type syncAuth struct{ s *Server }

func principalOf(p auth.Principal) syncproto.Principal {
	return syncproto.Principal{User: p.User, UserID: p.UserID, Admin: p.Admin, TokenID: p.TokenID, ReadOnly: p.ReadOnly(), Agent: p.Agent()}
}

func authPrincipal(p syncproto.Principal) auth.Principal {
	ap := auth.Principal{User: p.User, UserID: p.UserID, Admin: p.Admin, TokenID: p.TokenID}
	switch {
	case p.ReadOnly:
		ap.Kind = auth.KindBackup
	case p.Agent:
		ap.Kind = auth.KindAgent
	}
	return ap
}

func (a syncAuth) Authenticate(ctx context.Context, token string) (syncproto.Principal, error) {
	p, err := a.s.Authenticate(ctx, token)
	if errors.Is(err, auth.ErrUnauthenticated) {
		return syncproto.Principal{}, fmt.Errorf("%w: %v", syncproto.ErrUnauthenticated, err)
	}
	if err != nil {
		return syncproto.Principal{}, err
	}
	return principalOf(p), nil
}

func (a syncAuth) CanAccess(ctx context.Context, p syncproto.Principal, doc string) bool {
	return a.s.CanAccess(ctx, authPrincipal(p), doc)
}

// CanReadStream answers streams other than documents': a run's stream
// "run:<id>" is readable by whoever may read the run (its requester, or
// an admin, while they reach its document); task streams are not offered.
func (a syncAuth) CanReadStream(ctx context.Context, p syncproto.Principal, name string) bool {
	if id, ok := runStreamID(name); ok {
		return syncAssist(a).canReadRun(ctx, p, id)
	}
	return false
}
