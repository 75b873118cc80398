package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
	"net/http"
	"strings"
	"testing"
	"time"
)

// storeDigest hashes every key and value of the store: two equal digests
// mean nothing at all was written in between.
func storeDigest(t testing.TB, db *kv.DB) string {
	t.Helper()
	it, err := db.NewIter(&kv.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	h := sha256.New()
	for it.First(); it.Valid(); it.Next() {
		h.Write(it.Key())
		h.Write([]byte{0})
		h.Write(it.Value())
		h.Write([]byte{0})
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// agentAllowed are the routes an agent token may write to: proposals,
// and the POSTs that only read (packs). Public routes take no token.
var agentAllowed = map[string]string{
	"POST /v1/docs/{id}/assist":               "proposes",
	"POST /v1/docs/{id}/suggestions":          "proposes",
	"POST " + MCPPath:                         "proposes",
	"DELETE " + MCPPath:                       "proposes",
	"POST " + BackupPackPath:                  "reads",
	"POST " + ExportPackPath:                  "reads",
	"POST /v1/public/articles/{slug}/explain": "public",
	"POST /a/{slug}":                          "public",
}

// TestAgentTokenRefusedEveryWriteRoute walks the server's own route list:
// every route that is not a read (GET) nor in agentAllowed must refuse an
// agent token — an author's and an admin's — with the code forbidden,
// before its handler runs, and store nothing. A route added later is in
// the list by construction, so it cannot slip through.
func TestAgentTokenRefusedEveryWriteRoute(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", e.ann, CreateRequest{Attrs: flowdoc.Attributes{Title: "Mine"}, Body: doc(para("p1", "Hello."))}, &v)
	annAgent, err := e.auth.AddToken(ctx, "ann", auth.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	rootAgent, err := e.auth.AddToken(ctx, "root", auth.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	var who Whoami
	e.ok("GET", "/v1/whoami", annAgent.Secret, nil, &who)
	if who.Kind != auth.KindAgent || who.User != "ann" {
		t.Fatalf("whoami of an agent token: %+v", who)
	}
	// An agent reads what its user reads.
	e.ok("GET", "/v1/docs/"+v.Doc+"/versions/v1.r0", annAgent.Secret, nil, nil)
	before := storeDigest(t, e.repo.DB())
	values := map[string]string{"id": v.Doc, "label": "v1.r0", "block": "p1", "sugg": "s0123456789", "run": "r0123456789",
		"session": "c0123456789", "preset": "p0123456789", "n": "1", "name": "bob", "ref": "abcd", "hash": strings.Repeat("0", 64),
		"slug": "mine", "file": "x.js", "category": "c", "tag": "t"}
	refused := 0
	for _, pat := range e.srv.Routes() {
		method, path, ok := strings.Cut(pat, " ")
		if !ok || method == http.MethodGet || method == http.MethodHead {
			continue // any method: /v1/sync (its own test) and the site's fallback; reads
		}
		if _, ok := agentAllowed[pat]; ok {
			continue
		}
		for name, val := range values {
			path = strings.ReplaceAll(path, "{"+name+"}", val)
		}
		if strings.Contains(path, "{") {
			t.Fatalf("route %s has a path value the test does not fill", pat)
		}
		for _, tok := range []string{annAgent.Secret, rootAgent.Secret} {
			er := e.wantErr(method, path, tok, map[string]any{}, http.StatusForbidden, "forbidden")
			if !strings.Contains(er.Message, "agent token") {
				t.Errorf("%s: %q does not say an agent token may not", pat, er.Message)
			}
		}
		refused++
	}
	if refused < 30 {
		t.Fatalf("only %d write routes were tried; the route list is incomplete", refused)
	}
	if after := storeDigest(t, e.repo.DB()); after != before {
		t.Fatal("refused requests of an agent token changed the store")
	}
	// The same routes still work with the author's own token.
	e.ok("POST", "/v1/docs/"+v.Doc+"/checkpoint", e.ann, CheckpointRequest{}, nil)
}

// TestAgentTokenRefusedEveryWriteMessage sends every request type of the
// sync protocol that AgentMay does not allow on a connection with an
// agent token: each is answered forbidden and nothing is stored.
func TestAgentTokenRefusedEveryWriteMessage(t *testing.T) {
	le := newLiveEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var v repo.VersionInfo
	le.ok("POST", "/v1/docs", le.ann, CreateRequest{Attrs: flowdoc.Attributes{Title: "Mine"}, Body: doc(para("p1", "Hello."))}, &v)
	agent, err := le.auth.AddToken(ctx, "ann", auth.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	c := le.dial(t, agent.Secret)
	before := storeDigest(t, le.repo.DB())
	tried := 0
	for _, typ := range syncproto.RequestTypes() {
		if syncproto.AgentMay(typ) {
			continue
		}
		m, ok := syncproto.NewRequest(typ)
		if !ok {
			t.Fatalf("no message for request type %s", typ)
		}
		fillDoc(m, v.Doc)
		_, err := c.Request(ctx, m)
		var re *syncproto.RemoteError
		if !errors.As(err, &re) || re.Code != syncproto.CodeForbidden {
			t.Fatalf("%s with an agent token: %v, want code forbidden", typ, err)
		}
		tried++
	}
	// The real thing, fully formed: a save and a restore.
	if _, err := c.Save(ctx, v.Doc, 0, syncproto.Change{Op: "upsert", Block: ptr(para("p1", "Injected."))}); !isForbidden(err) {
		t.Fatalf("save with an agent token: %v", err)
	}
	if _, err := c.Restore(ctx, v.Doc, "v1.r0"); !isForbidden(err) {
		t.Fatalf("restore with an agent token: %v", err)
	}
	if tried < 10 {
		t.Fatalf("only %d request types tried", tried)
	}
	// Reads still answer.
	if _, err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if after := storeDigest(t, le.repo.DB()); after != before {
		t.Fatal("refused messages of an agent token changed the store")
	}
}

func isForbidden(err error) bool {
	var re *syncproto.RemoteError
	return errors.As(err, &re) && re.Code == syncproto.CodeForbidden
}

// fillDoc names doc in a request that names a document.
func fillDoc(m syncproto.Message, doc string) {
	switch m := m.(type) {
	case *syncproto.Open:
		m.Doc = doc
	case *syncproto.Leave:
		m.Doc = doc
	case *syncproto.Save:
		m.Doc = doc
	case *syncproto.Checkpoint:
		m.Doc = doc
	case *syncproto.Restore:
		m.Doc, m.Label = doc, "v1.r0"
	case *syncproto.AttrsSuggest:
		m.Doc = doc
	case *syncproto.SessionStart:
		m.Doc = doc
	}
}
