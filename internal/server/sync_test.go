package server

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// liveEnv is a Server with the real sync service, serving on loopback.
type liveEnv struct {
	*env
	ws   string // ws://host:port/v1/sync
	errc chan error
}

func newLiveEnv(t *testing.T) *liveEnv {
	t.Helper()
	e := newEnv(t, func(c *Config) { c.NewSync = nil })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	le := &liveEnv{env: e, ws: "ws://" + ln.Addr().String() + "/v1/sync", errc: make(chan error, 1)}
	go func() { le.errc <- e.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
	})
	return le
}

func (le *liveEnv) dial(t *testing.T, token string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, le.ws, client.Options{Token: token, Subprotocol: syncproto.SubprotocolJSON})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseNow)
	return c
}

func closedWith(t *testing.T, c *client.Client, within time.Duration) *client.CloseError {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(within):
		t.Fatalf("connection still open after %v", within)
	}
	var ce *client.CloseError
	if !errors.As(c.Err(), &ce) {
		t.Fatalf("closed with %v, want a close code", c.Err())
	}
	return ce
}

func TestSyncRevokeClosesLiveSessions(t *testing.T) {
	le := newLiveEnv(t)
	ctx := context.Background()
	le.ok("POST", "/v1/docs", le.admin, CreateRequest{ID: "d1", Owner: "ann", Attrs: flowdoc.Attributes{Title: "T"}, Body: doc(para("p1", "a"))}, nil)
	var iss IssuedResponse
	le.ok("POST", "/v1/tokens", le.admin, TokenRequest{User: "ann"}, &iss)

	c1 := le.dial(t, iss.Token)
	c2 := le.dial(t, iss.Token)
	other := le.dial(t, le.ann) // ann's other token stays connected
	if _, err := c1.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	// bob cannot open ann's document: it looks missing.
	bob := le.dial(t, le.bob)
	if _, err := bob.Open(ctx, "d1"); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("bob opened ann's document: %v", err)
	}

	start := time.Now()
	le.ok("DELETE", "/v1/tokens/"+iss.Info.ID, le.admin, nil, nil)
	for _, c := range []*client.Client{c1, c2} {
		if ce := closedWith(t, c, time.Second); ce.Code != syncproto.CloseTokenRevoked {
			t.Fatalf("closed with %d %s, want %d", ce.Code, ce.Reason, syncproto.CloseTokenRevoked)
		}
	}
	t.Logf("revoked sessions closed in %v", time.Since(start))
	if _, err := other.Ping(ctx); err != nil {
		t.Fatalf("another token's session was closed: %v", err)
	}
	// The revoked token cannot come back.
	if c, err := client.Dial(ctx, le.ws, client.Options{Token: iss.Token}); err == nil {
		c.CloseNow()
		t.Fatal("a revoked token opened a sync session")
	}
	// A backup token reads but cannot save.
	bk := le.dial(t, le.backup)
	snap, err := bk.Open(ctx, "d1")
	if err != nil {
		t.Fatalf("backup token open: %v", err)
	}
	b := para("p1", "from a backup token")
	if _, err := bk.Save(ctx, "d1", snap.Seq, syncproto.Change{Op: "upsert", Block: &b}); err == nil || !strings.Contains(err.Error(), "read_only") {
		t.Fatalf("backup token save: %v", err)
	}
	// Deleting the user closes the rest of ann's sessions.
	le.ok("DELETE", "/v1/users/ann", le.admin, nil, nil)
	if ce := closedWith(t, other, time.Second); ce.Code != syncproto.CloseTokenRevoked {
		t.Fatalf("after user delete: %d %s", ce.Code, ce.Reason)
	}
}

func TestSyncShutdownSealsAndClosesResumably(t *testing.T) {
	le := newLiveEnv(t)
	ctx := context.Background()
	le.ok("POST", "/v1/docs", le.admin, CreateRequest{ID: "d1", Owner: "ann", Attrs: flowdoc.Attributes{Title: "T"}, Body: doc(para("p1", "a"))}, nil)
	c := le.dial(t, le.ann)
	snap, err := c.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	b := para("p1", "typed before shutdown")
	ack, err := c.Save(ctx, "d1", snap.Seq, syncproto.Change{Op: "upsert", Block: &b})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := le.srv.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if ce := closedWith(t, c, time.Second); !ce.Resumable() {
		t.Fatalf("shutdown close %d %s is not resumable", ce.Code, ce.Reason)
	}
	if err := <-le.errc; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	log, err := le.repo.Log(ctx, "d1", 1, 0)
	if err != nil || len(log) != 1 || log[0].Reason != "leave" {
		t.Fatalf("head after shutdown: %+v %v", log, err)
	}
	d, _ := le.repo.Draft(ctx, "d1")
	if d.Unsealed || d.Seq != ack.Seq {
		t.Fatalf("draft after shutdown: seq %d unsealed %v, acknowledged seq %d", d.Seq, d.Unsealed, ack.Seq)
	}
}
