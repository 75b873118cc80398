package server

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// attrs.suggest over the socket answers what the HTTP endpoint answers.
func TestAttrsSuggestOverWebSocket(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.NewSync = nil; withAssistants(c) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go e.srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
	})
	e.newArticle("a", "", "Pebble is a storage engine. It keeps data in sorted tables.")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "ws://"+ln.Addr().String()+"/v1/sync", client.Options{Token: e.ann, Subprotocol: syncproto.SubprotocolJSON})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	m, err := c.Request(ctx, &syncproto.AttrsSuggest{Doc: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := m.(*syncproto.AttrsSuggestion)
	if !ok {
		t.Fatalf("reply %T", m)
	}
	var want struct {
		Summary, Slug string
	}
	e.ok("POST", "/v1/docs/a/attrs/suggest", e.ann, nil, &want)
	if got.Doc != "a" || got.Slug != want.Slug || got.Summary != want.Summary || got.Provider != "local" {
		t.Fatalf("socket %+v, HTTP %+v", got, want)
	}
	// Another user's document is missing, as everywhere.
	cb, err := client.Dial(ctx, "ws://"+ln.Addr().String()+"/v1/sync", client.Options{Token: e.bob, Subprotocol: syncproto.SubprotocolJSON})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.CloseNow()
	_, err = cb.Request(ctx, &syncproto.AttrsSuggest{Doc: "a"})
	var re *syncproto.RemoteError
	if !errors.As(err, &re) || re.Code != syncproto.CodeNotFound {
		t.Fatalf("bob's attrs.suggest: %v", err)
	}
	// A read-only backup token is refused as over HTTP.
	if st, body := e.call("POST", "/v1/docs/a/attrs/suggest", e.backup, nil); st != 403 || errOf(t, body).Code != "read_only" {
		t.Fatalf("HTTP with a backup token: %d %s", st, body)
	}
	ck, err := client.Dial(ctx, "ws://"+ln.Addr().String()+"/v1/sync", client.Options{Token: e.backup, Subprotocol: syncproto.SubprotocolJSON})
	if err != nil {
		t.Fatal(err)
	}
	defer ck.CloseNow()
	_, err = ck.Request(ctx, &syncproto.AttrsSuggest{Doc: "a"})
	if !errors.As(err, &re) || re.Code != syncproto.CodeReadOnly {
		t.Fatalf("a backup token's attrs.suggest over the socket: %v", err)
	}
}
