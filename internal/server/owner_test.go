package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server/syncrepo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// addAuthor adds an author and returns its token.
func (e *env) addAuthor(name string) string {
	e.t.Helper()
	var iss IssuedResponse
	e.ok("POST", "/v1/users", e.admin, UserRequest{Name: name}, &iss)
	return iss.Token
}

// TestCreateAnswerDoesNotDependOnOthersDocuments: an author asking for an
// id gets the same answer whether or not another user's document has it,
// and without one gets a fresh random id.
func TestCreateAnswerDoesNotDependOnOthersDocuments(t *testing.T) {
	e := newEnv(t, nil)
	a, b := e.addAuthor("author-a"), e.addAuthor("author-b")
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", a, CreateRequest{Attrs: flowdoc.Attributes{Title: "A's"}}, &v)
	taken := v.Doc
	free := "zz" + taken[2:]
	req := func(id string) CreateRequest { return CreateRequest{ID: id, Attrs: flowdoc.Attributes{Title: "B's"}} }
	st1, b1 := e.call("POST", "/v1/docs", b, req(taken))
	st2, b2 := e.call("POST", "/v1/docs", b, req(free))
	if st1 != st2 || !bytes.Equal(b1, bytes.ReplaceAll(b2, []byte(free), []byte(taken))) {
		t.Fatalf("the answer depends on another user's document:\ntaken: %d %s\nfree:  %d %s", st1, b1, st2, b2)
	}
	if st1 != 403 || errOf(t, b1).Code != "forbidden" {
		t.Fatalf("an author chose an id: %d %s", st1, b1)
	}
	// Nothing was created, and A's document is untouched.
	var docs []repo.DocInfo
	e.ok("GET", "/v1/docs", b, nil, &docs)
	if len(docs) != 0 {
		t.Fatalf("author-b has %v", docs)
	}
	// Server-assigned ids are random: two creations, two different ids.
	var v1, v2 repo.VersionInfo
	e.ok("POST", "/v1/docs", b, CreateRequest{Attrs: flowdoc.Attributes{Title: "1"}}, &v1)
	e.ok("POST", "/v1/docs", b, CreateRequest{Attrs: flowdoc.Attributes{Title: "2"}}, &v2)
	if v1.Doc == v2.Doc || len(v1.Doc) != 16 || !repo.ValidDocID(v1.Doc) {
		t.Fatalf("ids %q %q", v1.Doc, v2.Doc)
	}
	// An admin may choose one; a taken one is a conflict (admins see all).
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: "chosen", Owner: "author-b", Attrs: flowdoc.Attributes{Title: "c"}}, nil)
	e.wantErr("POST", "/v1/docs", e.admin, req(taken), 409, "conflict")
	e.ok("GET", "/v1/docs/chosen", b, nil, nil)
}

// TestDeletedUsersDocumentsBelongToNobody: deleting a user and adding one
// of the same name does not hand the new one the old one's documents;
// an admin reassigns them with chown, which is logged and in the stream.
func TestDeletedUsersDocumentsBelongToNobody(t *testing.T) {
	var logs lockedBuf
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })
	old := e.addAuthor("author-a")
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", old, CreateRequest{Attrs: flowdoc.Attributes{Title: "Old"}, Body: doc(para("p1", "secret"))}, &v)
	d := v.Doc
	oldID := e.id("author-a")

	e.ok("DELETE", "/v1/users/author-a", e.admin, nil, nil)
	fresh := e.addAuthor("author-a")
	if e.id("author-a") == oldID {
		t.Fatal("the new user got the old user's id")
	}
	// The new author-a sees nothing of the old one's: the document looks
	// exactly like a missing one.
	st1, b1 := e.call("GET", "/v1/docs/"+d, fresh, nil)
	st2, b2 := e.call("GET", "/v1/docs/nosuchdocument", fresh, nil)
	if st1 != 404 || st1 != st2 || !bytes.Equal(b1, bytes.ReplaceAll(b2, []byte("nosuchdocument"), []byte(d))) {
		t.Fatalf("new author-a reads the old one's document: %d %s", st1, b1)
	}
	var docs []repo.DocInfo
	e.ok("GET", "/v1/docs", fresh, nil, &docs)
	if len(docs) != 0 {
		t.Fatalf("new author-a lists %v", docs)
	}
	// Admins see it as nobody's.
	var info repo.DocInfo
	e.ok("GET", "/v1/docs/"+d, e.admin, nil, &info)
	if info.Owner != oldID || info.OwnerName != "" {
		t.Fatalf("admin sees %+v", info)
	}
	// An author cannot chown — not their own, not another's, not a missing
	// one — and all three answers are alike.
	e.ok("POST", "/v1/docs", fresh, CreateRequest{Attrs: flowdoc.Attributes{Title: "Mine"}}, &v)
	mine := v.Doc
	var answers [][]byte
	for _, id := range []string{mine, d, "nosuchdocument"} {
		st, body := e.call("PUT", "/v1/docs/"+id+"/owner", fresh, ChownRequest{User: "author-a"})
		if st != 403 || errOf(t, body).Code != "forbidden" {
			t.Fatalf("author chown of %s: %d %s", id, st, body)
		}
		answers = append(answers, body)
	}
	if !bytes.Equal(answers[0], answers[1]) || !bytes.Equal(answers[1], answers[2]) {
		t.Fatalf("author chown answers differ: %s", answers)
	}
	// The admin gives it to the new author-a.
	var res ChownResponse
	e.ok("PUT", "/v1/docs/"+d+"/owner", e.admin, ChownRequest{User: "author-a"}, &res)
	if !res.Changed || res.Owner != e.id("author-a") || res.Previous != oldID || res.OwnerName != "author-a" {
		t.Fatalf("chown %+v", res)
	}
	var show ShowResponse
	e.ok("GET", "/v1/docs/"+d+"/versions/head", fresh, nil, &show)
	if !bytes.Contains(show.Body, []byte("secret")) {
		t.Fatalf("after chown: %s", show.Body)
	}
	// History is untouched: the first version still names its author.
	var log []repo.VersionInfo
	e.ok("GET", "/v1/docs/"+d+"/log", fresh, nil, &log)
	if len(log) != 1 || log[0].Author != "author-a" {
		t.Fatalf("log %+v", log)
	}
	// The reassignment is in the document's stream and in the log.
	evs, err := stream.Read(e.repo.DB(), repo.Stream(d), 0, 100)
	if err != nil || len(evs) == 0 {
		t.Fatalf("stream: %v %v", evs, err)
	}
	last := evs[len(evs)-1]
	data, err := syncrepo.Data(last)
	oc, ok := data.(*syncproto.OwnerChanged)
	if err != nil || last.Type != syncproto.TypeOwnerChanged || !ok || oc.From != oldID || oc.To != res.Owner ||
		oc.ToName != "author-a" || oc.Actor != "root" || oc.Doc != d {
		t.Fatalf("last event %s %+v %v", last.Type, data, err)
	}
	if !strings.Contains(logs.String(), `"msg":"document owner changed"`) || !strings.Contains(logs.String(), `"by":"root"`) {
		t.Fatalf("no log line for the chown:\n%s", logs.String())
	}
	// Chown again to the same user: nothing changes, no new event.
	e.ok("PUT", "/v1/docs/"+d+"/owner", e.admin, ChownRequest{User: "author-a"}, &res)
	if res.Changed {
		t.Fatalf("second chown %+v", res)
	}
	if again, _ := stream.Read(e.repo.DB(), repo.Stream(d), 0, 100); len(again) != len(evs) {
		t.Fatalf("a no-op chown appended an event")
	}
	e.wantErr("PUT", "/v1/docs/"+d+"/owner", e.admin, ChownRequest{User: "nobody-here"}, 404, "not_found")
	e.wantErr("PUT", "/v1/docs/nosuchdocument/owner", e.admin, ChownRequest{User: "author-a"}, 404, "not_found")
	e.wantErr("PUT", "/v1/docs/"+d+"/owner", e.admin, ChownRequest{}, 400, "invalid")
}

// TestChownWithdrawsLiveAccess: the previous owner's editor that has the
// document open is disconnected when an admin gives it away, and cannot
// open it again.
func TestChownWithdrawsLiveAccess(t *testing.T) {
	le := newLiveEnv(t)
	ctx := context.Background()
	le.ok("POST", "/v1/docs", le.admin, CreateRequest{ID: "d1", Owner: "ann", Attrs: flowdoc.Attributes{Title: "T"}, Body: doc(para("p1", "a"))}, nil)
	ann := le.dial(t, le.ann)
	if _, err := ann.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	var events []string
	evc := make(chan string, 16)
	adminc, err := client.Dial(ctx, le.ws, client.Options{Token: le.admin, Subprotocol: syncproto.SubprotocolJSON,
		OnEvent: func(ev *syncproto.Event) { evc <- ev.Type }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(adminc.CloseNow)
	if _, err := adminc.Subscribe(ctx, "doc:d1", nil); err != nil {
		t.Fatal(err)
	}
	le.ok("PUT", "/v1/docs/d1/owner", le.admin, ChownRequest{User: "bob"}, nil)
	if ce := closedWith(t, ann, 10*time.Second); ce.Code != syncproto.CloseAccessWithdrawn {
		t.Fatalf("ann's editor closed with %d %s", ce.Code, ce.Reason)
	}
	for len(events) == 0 || events[len(events)-1] != syncproto.TypeOwnerChanged {
		select {
		case typ := <-evc:
			events = append(events, typ)
		case <-time.After(10 * time.Second):
			t.Fatalf("the admin's subscription got %v, no owner.changed", events)
		}
	}
	if _, err := adminc.Ping(ctx); err != nil {
		t.Fatalf("the admin's connection was closed: %v", err)
	}
	again := le.dial(t, le.ann)
	if _, err := again.Open(ctx, "d1"); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Fatalf("ann opened d1 after it was given away: %v", err)
	}
	bob := le.dial(t, le.bob)
	if _, err := bob.Open(ctx, "d1"); err != nil {
		t.Fatalf("bob cannot open his document: %v", err)
	}
}
