package assistant

import (
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/task"
)

// actorOf authenticates token as a transport does and makes the caller an
// Actor.
func actorOf(t *testing.T, as *auth.Store, token string) Actor {
	t.Helper()
	p, err := as.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	return Actor{UserID: p.UserID, User: p.User, Admin: p.Admin}
}

// A user deleted and added again under the same name is another user to
// the assistant: given the old one's article, the new one finds none of
// the old sessions, messages, runs or idempotency keys, and the
// conversation it starts carries nothing of the old one's.
func TestReaddedUserSeesNoneOfTheOldOnesSessions(t *testing.T) {
	w := newWorld(t)
	as := auth.New(w.db)
	_, first, err := as.AddUser(ctx, "author-b", false)
	if err != nil {
		t.Fatal(err)
	}
	old := actorOf(t, as, first.Secret)
	d := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("p1", "The first paragraph says a thing."), para("p2", "The second one too.")}}
	v, err := w.repo.CreateDoc(ctx, repo.CreateParams{Owner: old.UserID, Attrs: flowdoc.Attributes{Title: "Theirs"}, Body: d})
	if err != nil {
		t.Fatal(err)
	}
	doc := v.Doc
	q, err := w.svc.Assist(ctx, old, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"},
		Instruction: "a private instruction", IdempotencyKey: "req-1"})
	if err != nil {
		t.Fatal(err)
	}
	oldRun := w.wait(q.Run.ID)
	if oldRun.ActorID != old.UserID || oldRun.Actor != "author-b" {
		t.Fatalf("run records actor %q (%q), want author-b (%q)", oldRun.Actor, oldRun.ActorID, old.UserID)
	}
	if _, err := w.svc.StartSession(ctx, old, doc, "another private topic"); err != nil {
		t.Fatal(err)
	}
	if list, _ := w.svc.Sessions(ctx, old, doc); len(list) != 2 {
		t.Fatalf("the first author-b has %d sessions, want 2", len(list))
	}

	// Delete author-b, add author-b again, and give the new one the
	// old one's article.
	if _, err := as.DeleteUser(ctx, "author-b"); err != nil {
		t.Fatal(err)
	}
	_, second, err := as.AddUser(ctx, "author-b", false)
	if err != nil {
		t.Fatal(err)
	}
	readded := actorOf(t, as, second.Secret)
	if readded.User != old.User || readded.UserID == old.UserID {
		t.Fatalf("re-added user %q has id %q, the old one %q", readded.User, readded.UserID, old.UserID)
	}
	if _, err := w.repo.Chown(ctx, repo.ChownParams{Doc: doc, Owner: readded.UserID, OwnerName: "author-b", Actor: "admin"}); err != nil {
		t.Fatal(err)
	}

	if list, err := w.svc.Sessions(ctx, readded, doc); err != nil || len(list) != 0 {
		t.Fatalf("the re-added user lists %d sessions (%v), want none", len(list), err)
	}
	notFound := func(what string, err error) {
		t.Helper()
		if errs.KindOf(err) != errs.NotFound {
			t.Errorf("%s of the old user's: %v, want not_found", what, err)
		}
	}
	_, err = w.svc.Messages(ctx, readded, q.Session.ID, 0, 0)
	notFound("Messages", err)
	_, err = w.svc.MessageSource(ctx, readded, q.Session.ID, q.Message.Seq)
	notFound("MessageSource", err)
	_, err = w.svc.SwitchSession(ctx, readded, doc, q.Session.ID)
	notFound("SwitchSession", err)
	_, err = w.svc.Assist(ctx, readded, AssistRequest{Doc: doc, Session: q.Session.ID, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "x"})
	notFound("Assist into a session", err)
	_, err = w.svc.Run(ctx, readded, q.Run.ID)
	notFound("Run", err)
	_, err = w.svc.CancelRun(ctx, readded, q.Run.ID)
	notFound("CancelRun", err)
	// A missing session is answered in the same words.
	_, missing := w.svc.Messages(ctx, readded, "cnosuchsession", 0, 0)
	_, foreign := w.svc.Messages(ctx, readded, q.Session.ID, 0, 0)
	if missing == nil || foreign == nil || len(missing.Error()) != len(foreign.Error())-len(q.Session.ID)+len("cnosuchsession") {
		t.Errorf("a foreign session is answered %q, a missing one %q", foreign, missing)
	}

	cur, err := w.svc.CurrentSession(ctx, readded, doc)
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID == q.Session.ID || cur.Messages != 0 || cur.CreatorID != readded.UserID {
		t.Fatalf("the re-added user resumes %+v, want a new empty session of theirs", cur)
	}
	// The same idempotency key is a new request, in the new session, with
	// no conversation behind it.
	q2, err := w.svc.Assist(ctx, readded, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"},
		Instruction: "tighten", IdempotencyKey: "req-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !q2.Created || q2.Run.ID == q.Run.ID || q2.Session.ID != cur.ID || q2.Message.Seq != 1 {
		t.Fatalf("the re-added user's request: created %v run %s session %s seq %d", q2.Created, q2.Run.ID, q2.Session.ID, q2.Message.Seq)
	}
	if c := q2.Run.Context; c.Full+c.Summarized+c.Scanned+c.Omitted != 0 {
		t.Fatalf("the new request froze a conversation of the old user's: %+v", c)
	}
	// The per-user limits count the new user under their own id.
	tid, err := task.ParseID(q2.Run.Task)
	if err != nil {
		t.Fatal(err)
	}
	if tk, err := w.runner.Get(ctx, tid); err != nil || tk.User != readded.UserID {
		t.Fatalf("the run's task is the user %q's (%v), want %q", tk.User, err, readded.UserID)
	}
	w.wait(q2.Run.ID)

	// An admin still reaches the old run; a caller without a user id
	// reaches nothing.
	if r, err := w.svc.Run(ctx, admin, q.Run.ID); err != nil || r.ID != q.Run.ID {
		t.Fatalf("admin reading the old run: %v", err)
	}
	if _, err := w.svc.Sessions(ctx, Actor{User: "author-b"}, doc); errs.KindOf(err) != errs.Unauthenticated {
		t.Fatalf("a caller without a user id: %v, want unauthorized", err)
	}
}
