package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
)

// fakeSync records what the server asks of its sync service.
type fakeSync struct {
	mu       sync.Mutex
	revoked  []string
	shutdown bool
	failStop string // the reason FailStop was given
	served   int
}

func (f *fakeSync) FailStop(_ context.Context, reason string) error {
	f.mu.Lock()
	f.failStop = reason
	f.mu.Unlock()
	return nil
}

func (f *fakeSync) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.served++
	f.mu.Unlock()
	w.WriteHeader(http.StatusTeapot)
}

func (f *fakeSync) Shutdown(context.Context) error {
	f.mu.Lock()
	f.shutdown = true
	f.mu.Unlock()
	return nil
}

func (f *fakeSync) RevokeToken(id string) int {
	f.mu.Lock()
	f.revoked = append(f.revoked, id)
	f.mu.Unlock()
	return 1
}

type env struct {
	t      testing.TB
	srv    *Server
	ts     *httptest.Server
	repo   *repo.Repo
	auth   *auth.Store
	sync   *fakeSync
	admin  string // tokens
	ann    string
	bob    string
	backup string
}

func newEnv(t testing.TB, mod func(*Config)) *env {
	t.Helper()
	return newEnvRepo(t, repo.Options{}, mod)
}

// repoOf is the repository a test's Config serves.
func repoOf(c *Config) *repo.Repo { return c.Content.(*repo.Repo) }

// newEnvRepo is newEnv with the repository opened with ro.
func newEnvRepo(t testing.TB, ro repo.Options, mod func(*Config)) *env {
	t.Helper()
	dir := t.TempDir()
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(dir, ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	as := auth.New(r.DB())
	fs := &fakeSync{}
	cfg := Config{Content: r, Auth: as, Publish: publish.New(r, nil), NewSync: func(SyncDeps) (SyncService, error) { return fs, nil }}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	e := &env{t: t, srv: s, ts: ts, repo: r, auth: as, sync: fs}
	ctx := context.Background()
	_, a, _ := as.AddUser(ctx, "root", true)
	_, b, _ := as.AddUser(ctx, "ann", false)
	_, c, _ := as.AddUser(ctx, "bob", false)
	bk, _ := as.AddToken(ctx, "ann", auth.KindBackup)
	e.admin, e.ann, e.bob, e.backup = a.Secret, b.Secret, c.Secret, bk.Secret
	return e
}

// call sends a request and returns the status and body.
func (e *env) call(method, path, token string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, e.ts.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func (e *env) ok(method, path, token string, body, out any) {
	e.t.Helper()
	st, data := e.call(method, path, token, body)
	if st/100 != 2 {
		e.t.Fatalf("%s %s: %d %s", method, path, st, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

// id returns the user id of user name.
func (e *env) id(name string) string {
	e.t.Helper()
	u, err := e.auth.GetUser(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.ID
}

func errOf(t testing.TB, data []byte) Error {
	t.Helper()
	var eb ErrorBody
	if err := json.Unmarshal(data, &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("not an error body: %s", data)
	}
	return eb.Error
}

func (e *env) wantErr(method, path, token string, body any, status int, code string) Error {
	e.t.Helper()
	st, data := e.call(method, path, token, body)
	if st != status {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, st, status, data)
	}
	er := errOf(e.t, data)
	if er.Code != code {
		e.t.Fatalf("%s %s: code %q, want %q: %s", method, path, er.Code, code, data)
	}
	// The kind is on the wire and decides the status.
	if k, ok := errs.KindFromName(er.Kind); !ok || k.HTTPStatus() != status {
		e.t.Fatalf("%s %s: kind %q does not give status %d: %s", method, path, er.Kind, status, data)
	}
	return er
}

func para(id, text string) flowdoc.Block {
	return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
}

func doc(blocks ...flowdoc.Block) json.RawMessage {
	return flowdoc.CanonicalJSON(flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: blocks})
}

func TestAuthFailures(t *testing.T) {
	e := newEnv(t, nil)
	want := `{"error":{"code":"unauthorized","kind":"unauthorized","message":` + strconv.Quote(auth.ErrUnauthenticated.Error()) + `}}` + "\n"
	it, _ := e.auth.AddToken(context.Background(), "ann", auth.KindFull)
	if _, err := e.auth.RevokeToken(context.Background(), it.ID); err != nil {
		t.Fatal(err)
	}
	wrong := e.ann[:len(e.ann)-2] + "xx"
	for name, tok := range map[string]string{"missing": "", "garbage": "nope", "wrong secret": wrong, "revoked": it.Secret} {
		for _, path := range []string{"/v1/docs", "/v1/fsck", "/v1/docs/x/log", "/v1/users"} {
			req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 401 || string(body) != want || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s token on %s: %d %q", name, path, resp.StatusCode, body)
			}
		}
	}
	// No auth needed for health and metrics.
	if st, _ := e.call("GET", "/healthz", "", nil); st != 200 {
		t.Fatalf("healthz: %d", st)
	}
	st, m := e.call("GET", "/metrics", "", nil)
	if st != 200 || !bytes.Contains(m, []byte("folio_auth_failures_total 16")) {
		t.Fatalf("metrics: %d\n%s", st, m)
	}
}

func TestOtherUsersDocumentLooksMissing(t *testing.T) {
	e := newEnv(t, nil)
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", e.ann, CreateRequest{Attrs: flowdoc.Attributes{Title: "Ann's"}, Body: doc(para("p1", "hello"))}, &v)
	if v.Author != "ann" || v.Label != "v1.r0" || len(v.Doc) != 16 {
		t.Fatalf("created %+v", v)
	}
	annsdoc := v.Doc
	paths := []struct{ method, suffix string }{
		{"GET", ""}, {"GET", "/draft"}, {"GET", "/log"}, {"GET", "/versions/head"}, {"GET", "/versions/v1.r0"},
		{"GET", "/diff?from=v1.r0&to=v1.r0"}, {"GET", "/blocks/p1/history"},
		{"POST", "/draft"}, {"POST", "/checkpoint"}, {"POST", "/restore"},
	}
	bodies := map[string]any{"/draft": SaveRequest{BaseSeq: 1, Body: doc(para("p1", "x"))}, "/checkpoint": CheckpointRequest{}, "/restore": RestoreRequest{Label: "v1.r0"}}
	for _, p := range paths {
		st1, b1 := e.call(p.method, "/v1/docs/"+annsdoc+p.suffix, e.bob, bodies[p.suffix])
		st2, b2 := e.call(p.method, "/v1/docs/nosuchdoc"+p.suffix, e.bob, bodies[p.suffix])
		b2 = bytes.ReplaceAll(b2, []byte("nosuchdoc"), []byte(annsdoc))
		if st1 != 404 || st1 != st2 || !bytes.Equal(b1, b2) {
			t.Errorf("%s %s: other's %d %s; missing %d %s", p.method, p.suffix, st1, b1, st2, b2)
		}
		// The owner and an admin can.
		if p.method == "GET" {
			e.ok("GET", "/v1/docs/"+annsdoc+p.suffix, e.ann, nil, nil)
			e.ok("GET", "/v1/docs/"+annsdoc+p.suffix, e.admin, nil, nil)
		}
	}
	// Lists: an author sees only their own, an admin all.
	var docs []repo.DocInfo
	e.ok("GET", "/v1/docs", e.bob, nil, &docs)
	if len(docs) != 0 {
		t.Fatalf("bob lists %v", docs)
	}
	e.ok("GET", "/v1/docs", e.admin, nil, &docs)
	if len(docs) != 1 || docs[0].Owner != e.id("ann") || docs[0].OwnerName != "ann" {
		t.Fatalf("admin lists %v", docs)
	}
	// Nothing bob sent changed ann's document.
	var d repo.Draft
	e.ok("GET", "/v1/docs/"+annsdoc+"/draft", e.ann, nil, &d)
	if d.Seq != 1 {
		t.Fatalf("ann's draft changed: seq %d", d.Seq)
	}
}

func TestDocumentEndpoints(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.ann
	// An admin chooses the id and the owner.
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: "d1", Owner: "ann", Attrs: flowdoc.Attributes{Title: "One"}, Body: doc(para("p1", "one"), para("p2", "two"))}, nil)
	er := e.wantErr("POST", "/v1/docs", e.admin, CreateRequest{ID: "d1", Attrs: flowdoc.Attributes{Title: "Again"}}, 409, "conflict")
	if !strings.Contains(er.Message, "already exists") {
		t.Fatalf("duplicate: %+v", er)
	}

	var info repo.DocInfo
	e.ok("GET", "/v1/docs/d1", tok, nil, &info)
	if info.Title != "One" || info.Head != "v1.r0" || info.Owner != e.id("ann") || info.OwnerName != "ann" {
		t.Fatalf("doc %+v", info)
	}
	var d repo.Draft
	e.ok("GET", "/v1/docs/d1/draft", tok, nil, &d)

	// Save by changes, then a stale change on the same block conflicts.
	var res repo.SaveResult
	b := para("p2", "two, edited")
	e.ok("POST", "/v1/docs/d1/draft", tok, SaveRequest{BaseSeq: d.Seq, Changes: []repo.DraftChange{{Op: "upsert", Block: &b}}}, &res)
	if !res.Unsealed || res.Seq != d.Seq+1 {
		t.Fatalf("save %+v", res)
	}
	b2 := para("p2", "stale")
	er = e.wantErr("POST", "/v1/docs/d1/draft", tok, SaveRequest{BaseSeq: d.Seq, Changes: []repo.DraftChange{{Op: "upsert", Block: &b2}}}, 409, "conflict")
	if er.Doc != "d1" || len(er.Blocks) != 1 || er.Blocks[0].ID != "p2" || er.Seq != res.Seq ||
		er.Check != folio.CheckBlocks || er.BaseSeq != d.Seq || er.Reason != "blocks changed since baseSeq" {
		t.Fatalf("conflict body %+v", er)
	}
	// A change naming a block the draft does not hold says which.
	anchor := "p9"
	er = e.wantErr("POST", "/v1/docs/d1/draft", tok, SaveRequest{BaseSeq: res.Seq,
		Changes: []repo.DraftChange{{Op: "upsert", Block: &b2, After: &anchor}}}, 409, "conflict")
	if er.Check != folio.CheckMissingBlock || er.Missing != "p9" || er.Seq != res.Seq {
		t.Fatalf("missing anchor: %+v", er)
	}
	// The same stale save with merge: the edits do not overlap, so the
	// answer names the merged block, as a sync save's ack does.
	b3 := para("p2", "At first, two")
	var mres repo.SaveResult
	e.ok("POST", "/v1/docs/d1/draft", tok, SaveRequest{BaseSeq: d.Seq, Merge: true, Changes: []repo.DraftChange{{Op: "upsert", Block: &b3}}}, &mres)
	if mres.Seq != res.Seq+1 || len(mres.Merged) != 1 || flowdoc.PlainText(mres.Merged[0].Block.RichText) != "At first, two, edited" {
		t.Fatalf("merging save %+v", mres)
	}
	res = mres
	// An invalid document names its problems and stores nothing.
	er = e.wantErr("POST", "/v1/docs/d1/draft", tok, `{"baseSeq":2,"body":{"schemaVersion":1,"blocks":[{"id":"p1","type":"nonsense"}]}}`, 400, "invalid")
	if len(er.Problems) == 0 || er.Problems[0].Path == "" {
		t.Fatalf("invalid body %+v", er)
	}
	e.wantErr("POST", "/v1/docs/d1/draft", tok, `{"baseSeq":2,"bogus":1}`, 400, "invalid")
	e.wantErr("POST", "/v1/docs/d1/draft", tok, `{"baseSeq":2}`, 400, "invalid")
	e.wantErr("POST", "/v1/docs/d1/draft", tok, `not json`, 400, "invalid")

	// Save with Seal seals in the same request.
	e.ok("POST", "/v1/docs/d1/draft", tok, SaveRequest{BaseSeq: res.Seq, Body: doc(para("p1", "one!"), para("p2", "two, edited")), Seal: "manual"}, &res)
	if res.Version == nil || res.Version.Label != "v1.r1" || res.Unsealed {
		t.Fatalf("sealed save %+v", res)
	}
	var cp CheckpointResponse
	e.ok("POST", "/v1/docs/d1/checkpoint", tok, CheckpointRequest{Message: "nothing new"}, &cp)
	if cp.Created || cp.Version.Label != "v1.r1" {
		t.Fatalf("empty checkpoint %+v", cp)
	}

	var log []repo.VersionInfo
	e.ok("GET", "/v1/docs/d1/log", tok, nil, &log)
	if len(log) != 2 || log[0].Label != "v1.r1" {
		t.Fatalf("log %+v", log)
	}
	e.ok("GET", "/v1/docs/d1/log?limit=1", tok, nil, &log)
	if len(log) != 1 {
		t.Fatalf("log limit %+v", log)
	}
	e.wantErr("GET", "/v1/docs/d1/log?limit=-1", tok, nil, 400, "invalid")

	var show ShowResponse
	e.ok("GET", "/v1/docs/d1/versions/v1.r0", tok, nil, &show)
	if body, err := flowdoc.Parse(show.Body); err != nil || body.Blocks[0].RichText[0].Text != "one" || show.Version.Label != "v1.r0" {
		t.Fatalf("show %+v %v", show, err)
	}
	er = e.wantErr("GET", "/v1/docs/d1/versions/v7.r0", tok, nil, 404, "not_found")
	if er.What != "version" || er.Latest != "v1.r1" || er.Name != "d1@v7.r0" {
		t.Fatalf("missing version %+v", er)
	}

	var diff DiffResponse
	e.ok("GET", "/v1/docs/d1/diff?from=v1.r0&to=v1.r1", tok, nil, &diff)
	if diff.From != "v1.r0" || diff.To != "v1.r1" || diff.Changes == nil {
		t.Fatalf("diff %+v", diff)
	}
	e.wantErr("GET", "/v1/docs/d1/diff?from=v1.r0", tok, nil, 400, "invalid")

	var hist []repo.BlockRevision
	e.ok("GET", "/v1/docs/d1/blocks/p1/history", tok, nil, &hist)
	if len(hist) != 2 || hist[0].Seq < hist[1].Seq { // newest first, as the log
		t.Fatalf("history %+v", hist)
	}
	if len(hist) != 2 {
		t.Fatalf("history %+v", hist)
	}

	var v repo.VersionInfo
	e.ok("POST", "/v1/docs/d1/restore", tok, RestoreRequest{Label: "v1.r0"}, &v)
	if v.Label != "v2.r0" || v.RestoredFrom != "v1.r0" {
		t.Fatalf("restore %+v", v)
	}
	e.ok("POST", "/v1/docs/d1/restore", tok, RestoreRequest{Label: "v1.r1", Block: "p1"}, &v)
	if v.Label != "v2.r1" {
		t.Fatalf("restore block %+v", v)
	}
	e.wantErr("POST", "/v1/docs/d1/restore", tok, RestoreRequest{}, 400, "invalid")
	e.wantErr("POST", "/v1/docs/d1/restore", tok, RestoreRequest{Label: "v9.r9"}, 404, "not_found")

	// fsck is for admins.
	e.wantErr("GET", "/v1/fsck", tok, nil, 403, "forbidden")
	var rep repo.FsckReport
	e.ok("GET", "/v1/fsck", e.admin, nil, &rep)
	if !rep.OK || rep.Docs != 1 {
		t.Fatalf("fsck %+v", rep)
	}
	// Unknown endpoints answer JSON.
	er = e.wantErr("GET", "/v1/nothing", tok, nil, 404, "not_found")
	if er.What != "endpoint" {
		t.Fatalf("unknown endpoint %+v", er)
	}
}

func TestReadOnlyAndLimits(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxBody = 4 << 10 })
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: "d1", Owner: "ann", Attrs: flowdoc.Attributes{Title: "T"}}, nil)
	// A backup token reads but never writes.
	e.ok("GET", "/v1/docs/d1/log", e.backup, nil, nil)
	e.wantErr("POST", "/v1/docs/d1/checkpoint", e.backup, CheckpointRequest{}, 403, "read_only")
	e.wantErr("POST", "/v1/docs", e.backup, CreateRequest{Attrs: flowdoc.Attributes{Title: "x"}}, 403, "read_only")
	// Bodies over the limit are refused and nothing is stored.
	big := doc(para("p1", strings.Repeat("x", 8<<10)))
	e.wantErr("POST", "/v1/docs/d1/draft", e.ann, SaveRequest{BaseSeq: 1, Body: big}, 413, "too_large")
	var d repo.Draft
	e.ok("GET", "/v1/docs/d1/draft", e.ann, nil, &d)
	if d.Seq != 1 {
		t.Fatalf("oversized save stored: seq %d", d.Seq)
	}
	// An author may not create for someone else, nor manage users.
	e.wantErr("POST", "/v1/docs", e.ann, CreateRequest{Owner: "bob", Attrs: flowdoc.Attributes{Title: "x"}}, 403, "forbidden")
	e.wantErr("POST", "/v1/users", e.ann, UserRequest{Name: "eve"}, 403, "forbidden")
}

func TestUsersTokensAndRevokeHook(t *testing.T) {
	e := newEnv(t, nil)
	var iss IssuedResponse
	e.ok("POST", "/v1/users", e.admin, UserRequest{Name: "cy"}, &iss)
	if iss.User != "cy" || iss.Role != "author" || !strings.HasPrefix(iss.Token, "folio_") {
		t.Fatalf("issued %+v", iss)
	}
	e.wantErr("POST", "/v1/users", e.admin, UserRequest{Name: "cy"}, 409, "conflict")
	e.wantErr("POST", "/v1/users", e.admin, UserRequest{Name: "Not Valid"}, 400, "invalid")
	var who Whoami
	e.ok("GET", "/v1/whoami", iss.Token, nil, &who)
	if who.User != "cy" || who.Admin {
		t.Fatalf("whoami %+v", who)
	}
	var second IssuedResponse
	e.ok("POST", "/v1/tokens", e.admin, TokenRequest{User: "cy"}, &second)
	var toks []auth.Token
	e.ok("GET", "/v1/tokens?user=cy", e.admin, nil, &toks)
	if len(toks) != 2 {
		t.Fatalf("tokens %+v", toks)
	}
	// Revoking reaches the sync service at once and the token stops working.
	e.ok("DELETE", "/v1/tokens/"+iss.Info.ID[:6], e.admin, nil, nil)
	e.wantErr("GET", "/v1/whoami", iss.Token, nil, 401, "unauthorized")
	if er := e.wantErr("DELETE", "/v1/tokens/"+iss.Info.ID, e.admin, nil, 409, "conflict"); !strings.Contains(er.Message, "already revoked") {
		t.Fatalf("second revoke: %+v", er)
	}
	// Deleting the user revokes the rest.
	e.ok("DELETE", "/v1/users/cy", e.admin, nil, nil)
	e.wantErr("GET", "/v1/whoami", second.Token, nil, 401, "unauthorized")
	e.wantErr("DELETE", "/v1/users/cy", e.admin, nil, 404, "not_found")
	e.sync.mu.Lock()
	got := append([]string(nil), e.sync.revoked...)
	e.sync.mu.Unlock()
	if len(got) != 2 || got[0] != iss.Info.ID || got[1] != second.Info.ID {
		t.Fatalf("sync service told of %v, want [%s %s]", got, iss.Info.ID, second.Info.ID)
	}
	// A direct revocation through the store (the CLI in-process) notifies too.
	_, third, _ := e.auth.AddUser(context.Background(), "dee", false)
	if _, err := e.auth.RevokeToken(context.Background(), third.ID); err != nil {
		t.Fatal(err)
	}
	e.sync.mu.Lock()
	n := len(e.sync.revoked)
	e.sync.mu.Unlock()
	if n != 3 {
		t.Fatalf("sync service told of %d revocations, want 3", n)
	}
}

func TestSyncMountAndShutdown(t *testing.T) {
	e := newEnv(t, nil)
	if st, _ := e.call("GET", "/v1/sync", "", nil); st != http.StatusTeapot {
		t.Fatalf("sync mount: %d", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !e.sync.shutdown {
		t.Fatal("Shutdown did not shut the sync service down")
	}
	e.wantErr("GET", "/v1/sync", "", nil, 503, "unavailable")
	e.wantErr("POST", "/v1/docs", e.ann, CreateRequest{}, 503, "unavailable")
	if st, _ := e.call("GET", "/healthz", "", nil); st != 503 {
		t.Fatalf("healthz while closing: %d", st)
	}
	// Without a sync service /v1/sync says so.
	e2 := newEnv(t, func(c *Config) { c.NewSync = func(SyncDeps) (SyncService, error) { return nil, nil } })
	e2.wantErr("GET", "/v1/sync", "", nil, 503, "unavailable")
}

func TestRequestLogAndMetrics(t *testing.T) {
	var buf lockedBuf
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&buf, nil)) })
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: "d1", Owner: "ann", Attrs: flowdoc.Attributes{Title: "T"}, Body: doc(para("p1", "a"))}, nil)
	b := para("p1", "b")
	e.ok("POST", "/v1/docs/d1/draft", e.ann, SaveRequest{BaseSeq: 1, Changes: []repo.DraftChange{{Op: "upsert", Block: &b}}, Seal: "manual"}, nil)
	e.wantErr("POST", "/v1/docs/d1/draft", e.ann, SaveRequest{BaseSeq: 1, Changes: []repo.DraftChange{{Op: "upsert", Block: &b}}}, 409, "conflict")

	var line struct {
		Msg       string  `json:"msg"`
		RequestID string  `json:"request_id"`
		Method    string  `json:"method"`
		Path      string  `json:"path"`
		Status    int     `json:"status"`
		Duration  float64 `json:"duration"`
		User      string  `json:"user"`
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if line.Msg != "http request" || line.RequestID == "" || line.Method != "POST" || line.Path != "/v1/docs/d1/draft" ||
		line.Status != 409 || line.Duration <= 0 || line.User != "ann" {
		t.Fatalf("log line %+v", line)
	}
	_, m := e.call("GET", "/metrics", "", nil)
	for _, want := range []string{
		`folio_http_requests_total{code="200",method="POST",route="/v1/docs/{id}/draft"} 1`,
		`folio_http_requests_total{code="409",method="POST",route="/v1/docs/{id}/draft"} 1`,
		`folio_http_draft_saves_total{result="ok"} 1`,
		`folio_http_draft_saves_total{result="conflict"} 1`,
		`folio_http_checkpoints_total{reason="manual"} 1`,
		`folio_http_conflicts_total 1`,
		`go_goroutines`,
	} {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// lockedBuf is a log sink safe for the server's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
