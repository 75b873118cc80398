package syncproto_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

func TestAuth(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) { c.HelloTimeout = 200 * time.Millisecond })
	ctx := ctxT(t)
	closeCode := func(err error) websocket.StatusCode {
		var ce *client.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		return -1
	}
	cases := []struct {
		name string
		o    client.Options
	}{
		{"missing token", client.Options{}},
		{"wrong token in header", client.Options{Token: "nope"}},
		{"wrong token in hello", client.Options{Token: "nope", TokenInHello: true, Subprotocol: syncproto.SubprotocolJSON}},
	}
	for _, c := range cases {
		_, err := client.Dial(ctx, e.URL, c.o)
		if code := closeCode(err); code != syncproto.CloseAuthFailed {
			t.Errorf("%s: got %v (code %d), want close %d", c.name, err, code, syncproto.CloseAuthFailed)
		}
	}
	// The token in hello works as well as the header.
	c, err := client.Dial(ctx, e.URL, client.Options{Token: "ta", TokenInHello: true})
	if err != nil {
		t.Fatalf("token in hello: %v", err)
	}
	c.Close()

	// A bearer header authenticates on upgrade: the welcome comes unasked.
	ws0, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolJSON},
		HTTPHeader: map[string][]string{"Authorization": {"Bearer ta"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, data, err := ws0.Read(ctx)
	if err != nil || !strings.Contains(string(data), `"type":"welcome"`) || !strings.Contains(string(data), `"user":"alice"`) {
		t.Fatalf("header auth: %s %v", data, err)
	}
	time.Sleep(300 * time.Millisecond) // past HelloTimeout: still open
	if err := ws0.Write(ctx, websocket.MessageText, []byte(`{"type":"ping","id":"p"}`)); err != nil {
		t.Fatal(err)
	}
	if _, data, err = ws0.Read(ctx); err != nil || !strings.Contains(string(data), `"pong"`) {
		t.Fatalf("header-authenticated connection without hello: %s %v", data, err)
	}
	ws0.Close(websocket.StatusNormalClosure, "")

	// No hello at all: closed after HelloTimeout.
	ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolJSON}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ws.Read(ctx)
	if websocket.CloseStatus(err) != syncproto.CloseAuthFailed {
		t.Errorf("silent connection: %v", err)
	}

	// No subprotocol: closed with a protocol error that says what to offer.
	ws, _, err = websocket.Dial(ctx, e.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != syncproto.CloseProtocolError || !strings.Contains(ce.Reason, "folio.v1.json") {
		t.Errorf("no subprotocol: %v", err)
	}
}

func TestRevokeClosesConnections(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	e.Auth.Add("ta2", "alice", false)
	a1 := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	a2 := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	other := dial(t, e, "ta2", syncproto.SubprotocolJSON, nil) // alice's other token
	if _, err := a1.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}

	id := e.Auth.Revoke("ta")
	start := time.Now()
	if n := e.Server.RevokeToken(id); n != 2 {
		t.Fatalf("RevokeToken closed %d connections, want 2", n)
	}
	for _, c := range []*client.Client{a1, a2} {
		select {
		case <-c.Done():
		case <-time.After(time.Second):
			t.Fatal("a connection outlived its revoked token by a second")
		}
		var ce *client.CloseError
		if !errors.As(c.Err(), &ce) || ce.Code != syncproto.CloseTokenRevoked || ce.Resumable() {
			t.Fatalf("revoked: %v", c.Err())
		}
	}
	t.Logf("closed %v after revocation", time.Since(start))
	if _, err := other.Ping(ctx); err != nil {
		t.Fatalf("another token of the same user was cut: %v", err)
	}
	if _, err := client.Dial(ctx, e.URL, client.Options{Token: "ta"}); err == nil {
		t.Fatal("a revoked token connected")
	}

	// Removing the user closes all of the user's connections.
	if n := e.Server.RevokeUser("alice"); n != 1 {
		t.Fatalf("RevokeUser closed %d, want 1", n)
	}
	<-other.Done()
}

// TestOtherUsersDocument: bob cannot tell alice's document from a missing one.
func TestOtherUsersDocument(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	b := dial(t, e, "tb", syncproto.SubprotocolJSON, nil)
	answer := func(err error) string {
		var re *syncproto.RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("not an error reply: %v", err)
		}
		return string(re.Code) + ": " + re.Message
	}
	// The messages name the id asked for; with it replaced they must match.
	same := func(what string, theirs, missing error) {
		t.Helper()
		a, m := answer(theirs), answer(missing)
		if strings.ReplaceAll(a, "d1", "X") != strings.ReplaceAll(m, "zz", "X") || !strings.HasPrefix(a, "not_found") {
			t.Errorf("%s: alice's document %q, missing %q", what, a, m)
		}
	}
	_, e1 := b.Open(ctx, "d1")
	_, e2 := b.Open(ctx, "zz")
	same("open", e1, e2)
	_, e1 = b.Subscribe(ctx, "doc:d1", nil)
	_, e2 = b.Subscribe(ctx, "doc:zz", nil)
	same("subscribe", e1, e2)
	_, e1 = b.Checkpoint(ctx, "d1", "", "")
	_, e2 = b.Checkpoint(ctx, "zz", "", "")
	same("checkpoint", e1, e2)
	_, e1 = b.Restore(ctx, "d1", "v1.r0")
	_, e2 = b.Restore(ctx, "zz", "v1.r0")
	same("restore", e1, e2)
	_, e1 = b.Save(ctx, "d1", 0, upsert("p1", "mine now"))
	_, e2 = b.Save(ctx, "zz", 0, upsert("p1", "mine now"))
	if answer(e1) == "" || strings.ReplaceAll(answer(e1), "d1", "X") != strings.ReplaceAll(answer(e2), "zz", "X") {
		t.Errorf("save: %v / %v", e1, e2)
	}
	if d, _ := e.Repo.Draft(context.Background(), "d1"); d.Seq != 1 || d.Unsealed {
		t.Fatal("bob changed alice's draft")
	}
}

func TestReadOnlyToken(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	e.Auth.AddReadOnly("backup", "alice")
	rec := newRecorder()
	r := dial(t, e, "backup", syncproto.SubprotocolJSON, rec)
	snap, err := r.Open(ctx, "d1")
	if err != nil {
		t.Fatalf("a read-only token cannot read: %v", err)
	}
	var re *syncproto.RemoteError
	if _, err := r.Save(ctx, "d1", snap.Seq, upsert("p1", "x")); !errors.As(err, &re) || re.Code != syncproto.CodeReadOnly {
		t.Fatalf("save with a read-only token: %v", err)
	}
	if _, err := r.Checkpoint(ctx, "d1", "", ""); !errors.As(err, &re) || re.Code != syncproto.CodeReadOnly {
		t.Fatalf("checkpoint with a read-only token: %v", err)
	}
	if _, err := r.Restore(ctx, "d1", "v1.r0"); !errors.As(err, &re) || re.Code != syncproto.CodeReadOnly {
		t.Fatalf("restore with a read-only token: %v", err)
	}
}

// TestKeepalive: a peer that stops answering pings is cut, and its
// unsealed changes get their leave checkpoint.
func TestKeepalive(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) { c.PingInterval = 100 * time.Millisecond })
	ctx := ctxT(t)
	ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolJSON},
		HTTPHeader: map[string][]string{"Authorization": {"Bearer ta"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	read := func() string {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	read() // welcome
	ws.Write(ctx, websocket.MessageText, []byte(`{"type":"open","id":"1","doc":"d1"}`))
	read()
	ws.Write(ctx, websocket.MessageText, []byte(`{"type":"draft.save","id":"2","doc":"d1","baseSeq":1,"changes":[{"op":"upsert","block":{"id":"p1","type":"paragraph","richText":[{"text":"typed"}]}}]}`))
	if s := read(); !strings.Contains(s, "draft.ack") {
		t.Fatal(s)
	}
	// A reading client answers the pings and stays; the raw one above no
	// longer reads, so its pings go unanswered.
	live := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	waitUntil(t, "the silent connection to be cut", func() bool { return len(e.Server.Conns()) == 1 })
	time.Sleep(300 * time.Millisecond) // three more intervals
	if _, err := live.Ping(ctx); err != nil || len(e.Server.Conns()) != 1 {
		t.Fatalf("a reading client was cut: %v", err)
	}
	vs := e.Versions("d1")
	if vs[len(vs)-1].Reason != "leave" {
		t.Fatalf("no leave checkpoint for the cut connection: %v", reasons(vs))
	}
}
