package assistant

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// An article resumes its most recently updated session; starting and
// switching change which one.
func TestSessionsResumeTheLatest(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	first, err := w.svc.CurrentSession(ctx, authorA, doc)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := w.svc.CurrentSession(ctx, authorA, doc)
	if again.ID != first.ID {
		t.Fatal("CurrentSession made a second session")
	}
	q1, _ := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "make it shorter please"})
	if q1.Session.ID != first.ID || q1.Session.Title != "make it shorter please" {
		t.Fatalf("the request went to %s (%q)", q1.Session.ID, q1.Session.Title)
	}
	second, err := w.svc.StartSession(ctx, authorA, doc, "second topic")
	if err != nil {
		t.Fatal(err)
	}
	if cur, _ := w.svc.CurrentSession(ctx, authorA, doc); cur.ID != second.ID {
		t.Fatal("a new session is not the current one")
	}
	q2, _ := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "x"})
	if q2.Session.ID != second.ID || q2.Message.Seq != 1 {
		t.Fatalf("request went to %s seq %d", q2.Session.ID, q2.Message.Seq)
	}
	if _, err := w.svc.SwitchSession(ctx, authorA, doc, first.ID); err != nil {
		t.Fatal(err)
	}
	list, _ := w.svc.Sessions(ctx, authorA, doc)
	if len(list) != 2 || list[0].ID != first.ID || list[1].ID != second.ID || list[0].Messages != 2 {
		t.Fatalf("sessions %+v", list)
	}
	// An explicit session wins over the current one.
	q3, _ := w.assist(AssistRequest{Doc: doc, Session: second.ID, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "y"})
	if q3.Session.ID != second.ID || q3.Message.Seq != 3 {
		t.Fatalf("explicit session: %s seq %d", q3.Session.ID, q3.Message.Seq)
	}
	// A run finishing in another session does not take "current" back:
	// the article still resumes the session switched to.
	w.wait(q3.Run.ID)
	if cur, _ := w.svc.CurrentSession(ctx, authorA, doc); cur.ID != first.ID {
		t.Fatalf("after a run finished in %s, the current session is %s, want %s (switched to)", second.ID, cur.ID, first.ID)
	}
	list, _ = w.svc.Sessions(ctx, authorA, doc)
	for _, ss := range list {
		if ss.Current != (ss.ID == first.ID) {
			t.Fatalf("sessions mark the wrong one current: %+v", list)
		}
	}
	q4, _ := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "z"})
	if q4.Session.ID != first.ID {
		t.Fatalf("a request without a session went to %s, want the current %s", q4.Session.ID, first.ID)
	}
	other := w.article(1, false)
	if _, err := w.svc.SwitchSession(ctx, authorA, other, first.ID); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("another article's session: %v", err)
	}
	if _, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: other, Session: first.ID, Scope: Scope{Kind: ScopeDocument}, Instruction: "x"}); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("a request into another article's session: %v", err)
	}
}

// The original text of a message is rebuilt from the version it recorded
// even after the article moved on; a broken reference is
// history_source_corrupt with a redacted log line, never an empty text.
func TestMessageSourceRebuildAndCorruption(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, false)
	q, _ := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeSelection, Block: "p2", Start: 0, End: 11}, Instruction: "punchier"})
	// The article moves on: p2 is rewritten and sealed.
	w.save(doc, para("p2", "Completely different words now."))
	if _, _, err := w.repo.Checkpoint(ctx, doc, objstore.ReasonManual, "author-a", ""); err != nil {
		t.Fatal(err)
	}
	src, err := w.svc.MessageSource(ctx, authorA, q.Session.ID, q.Message.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if src.Text != "Paragraph 2" || src.Message.Label != "v1.r0" || src.Message.Text != "punchier" || len(src.Blocks) != 1 {
		t.Fatalf("source %q of %s", src.Text, src.Message.Label)
	}
	asst, err := w.svc.MessageSource(ctx, authorA, q.Session.ID, q.Message.Seq+1)
	if err != nil || asst.Text != "Paragraph 2" || asst.Message.Role != RoleAssistant {
		t.Fatalf("assistant message source %q %v", asst.Text, err)
	}
	list, err := w.svc.Messages(ctx, authorA, q.Session.ID, 0, 0)
	if err != nil || len(list) != 2 || list[0].Source.Text != "Paragraph 2" || list[1].Status != StatusConflicted {
		t.Fatalf("listing %+v %v", list, err)
	}

	// Break the reference: the message names a version that is not the
	// one its label resolves to.
	m := q.Message
	m.Version = objstore.Sum(objstore.KindVersion, []byte("not a version"))
	b := w.db.NewBatch()
	kv.SetRecord(b, messageKey(m.Session, m.Seq), m)
	w.db.Apply(b, kv.Sync)
	b.Close()
	_, err = w.svc.MessageSource(ctx, authorA, q.Session.ID, q.Message.Seq)
	if codeOf(err) != CodeHistoryCorrupt || errs.KindOf(err) != errs.Corrupt {
		t.Fatalf("broken reference: %v (code %q)", err, codeOf(err))
	}
	logs := w.logs.String()
	if !strings.Contains(logs, "history source corrupt") || !strings.Contains(logs, q.Session.ID) {
		t.Fatalf("no log line for the broken reference:\n%s", logs)
	}
	if strings.Contains(logs, "Paragraph 2") || strings.Contains(logs, "punchier") {
		t.Fatalf("the log line is not redacted:\n%s", logs)
	}
	list, err = w.svc.Messages(ctx, authorA, q.Session.ID, 0, 0)
	if err != nil || list[0].Source.Error != CodeHistoryCorrupt || list[0].Source.Text != "" || list[1].Source.Error != "" {
		t.Fatalf("listing with a broken message: %+v %v", list, err)
	}

	// A scope that does not resolve in its version is corrupt too.
	m = q.Message
	m.Scope = Scope{Kind: ScopeBlock, Block: "gone"}
	b = w.db.NewBatch()
	kv.SetRecord(b, messageKey(m.Session, m.Seq), m)
	w.db.Apply(b, kv.Sync)
	b.Close()
	if _, err := w.svc.MessageSource(ctx, authorA, q.Session.ID, q.Message.Seq); codeOf(err) != CodeHistoryCorrupt {
		t.Fatalf("unresolvable scope: %v", err)
	}
}

// Previews are bounded; the full text is in MessageSource.
func TestMessagePreviewsAreBounded(t *testing.T) {
	w := newWorld(t)
	doc := w.article(1, false)
	long := strings.Repeat("长", PreviewChars+50)
	q, _ := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeDocument}, Instruction: long})
	list, _ := w.svc.Messages(ctx, authorA, q.Session.ID, 0, 1)
	if len(list) != 1 || !list[0].TextTruncated || len([]rune(list[0].Text)) != PreviewChars {
		t.Fatalf("preview %d runes, truncated %v", len([]rune(list[0].Text)), list[0].TextTruncated)
	}
	src, _ := w.svc.MessageSource(ctx, authorA, q.Session.ID, 1)
	if src.Message.Text != long {
		t.Fatal("the full message is not returned in full")
	}
}

// A session is its creator's alone: an admin, who reaches every document
// and run, lists only their own sessions on an author's article and
// cannot switch to, or ask in, the author's (docs/protocol.md "Who
// reaches what").
func TestAdminsDoNotReachAuthorsSessions(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	mine, err := w.svc.StartSession(ctx, authorA, doc, "the author's")
	if err != nil {
		t.Fatal(err)
	}
	list, err := w.svc.Sessions(ctx, admin, doc)
	if err != nil || len(list) != 0 {
		t.Fatalf("an admin lists %d sessions on the author's article (%v), want none", len(list), err)
	}
	if _, err := w.svc.SwitchSession(ctx, admin, doc, mine.ID); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("an admin switching to the author's session: %v, want not_found", err)
	}
	if _, err := w.svc.Session(ctx, admin, mine.ID); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("an admin reading the author's session: %v, want not_found", err)
	}
	if _, err := w.svc.Assist(ctx, admin, AssistRequest{Doc: doc, Session: mine.ID, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "x"}); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("an admin asking in the author's session: %v, want not_found", err)
	}
}
