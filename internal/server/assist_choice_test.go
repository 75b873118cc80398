package server

import (
	"context"
	"strings"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/syncproto"
)

// On the offline local provider the selector says beforehand which
// presets edit: the editing preset six-rules does, a writing preset and
// an editing preset with rules the local engine lacks do not, each with
// the reason a run would give.
func TestPresetsOfflineNote(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	custom := assistant.PresetInput{Type: assistant.EditingPreset, Name: "mine", Prompt: "Edit.",
		Rules: []assistant.Rule{{ID: "rhyme", Name: "rhyme", Instruction: "Make it rhyme."}}}
	ae.ok("POST", "/v1/admin/presets", ae.admin, custom, nil)
	var ps []PresetView
	ae.ok("GET", "/v1/presets", ae.a, nil, &ps)
	seen := map[string]*assistant.OfflineNote{}
	for _, p := range ps {
		if p.Offline == nil {
			t.Fatalf("preset %s has no offline note on the local provider", p.ID)
		}
		seen[p.Name] = p.Offline
	}
	if n := seen["六条文章强化规则"]; n == nil || !n.Edits || n.Reason != "" {
		t.Errorf("six-rules: %+v, want edits", n)
	}
	if n := seen["清晰简洁"]; n == nil || n.Edits || !strings.Contains(n.Reason, "model provider") {
		t.Errorf("writing preset: %+v, want needs a model provider", n)
	}
	if n := seen["mine"]; n == nil || n.Edits || !strings.Contains(n.Reason, "rhyme") {
		t.Errorf("editing preset with an unknown rule: %+v", n)
	}
}

// A session remembers its personalization: set over HTTP, read in the
// session view and the listing, kept across a request on the session,
// refused when a request would refuse it, and another user's session is
// missing.
func TestSessionPersonalizationHTTP(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	q := ae.ask(ae.a, doc, "p1")
	if _, err := ae.svc.WaitRun(context.Background(), q.Run.ID); err != nil {
		t.Fatal(err)
	}
	path := "/v1/sessions/" + q.Session.ID + "/personalization"
	var before, ss assistant.Session
	ae.ok("GET", "/v1/sessions/"+q.Session.ID, ae.a, nil, &before)
	ae.ok("PUT", path, ae.a, assistant.Choice{Kind: assistant.PersonalizeEditing, ID: "six-rules"}, &ss)
	if ss.Choice == nil || ss.Choice.Kind != assistant.PersonalizeEditing || ss.Choice.ID != "six-rules" {
		t.Fatalf("answer %+v", ss.Choice)
	}
	if ss.Updated != before.Updated || ss.Messages != before.Messages {
		t.Fatalf("choosing changed the session's recency or messages: %+v, was %+v", ss, before)
	}
	ae.ok("GET", "/v1/sessions/"+q.Session.ID, ae.a, nil, &ss)
	if ss.Choice == nil || ss.Choice.ID != "six-rules" {
		t.Fatalf("session view %+v", ss)
	}
	ae.ask(ae.a, doc, "p2") // a request on the session keeps the choice
	var list []assistant.Session
	ae.ok("GET", "/v1/docs/"+doc+"/sessions", ae.a, nil, &list)
	if len(list) != 1 || list[0].Choice == nil || list[0].Choice.ID != "six-rules" || list[0].Messages < 3 {
		t.Fatalf("listing %+v", list)
	}
	ae.ok("PUT", path, ae.a, assistant.Choice{Kind: assistant.PersonalizeNone}, &ss)
	if ss.Choice == nil || ss.Choice.Kind != assistant.PersonalizeNone {
		t.Fatalf("none: %+v", ss.Choice)
	}
	ae.wantErr("PUT", path, ae.a, assistant.Choice{Kind: "poem"}, 400, "invalid")
	ae.wantErr("PUT", path, ae.a, assistant.Choice{Kind: assistant.PersonalizeEditing}, 400, "invalid")
	ae.wantErr("PUT", path, ae.a, assistant.Choice{Kind: assistant.PersonalizeNone, ID: "six-rules"}, 400, "invalid")
	ae.wantErr("PUT", path, ae.a, assistant.Choice{Kind: assistant.PersonalizeWriting, ID: "six-rules"}, 400, "invalid")
	ae.wantErr("PUT", path, ae.a, assistant.Choice{Kind: assistant.PersonalizeEditing, ID: "no-such"}, 404, "not_found")
	ae.wantErr("PUT", path, ae.a, map[string]any{"kind": "none", "persona": "x"}, 400, "invalid")
	ae.wantErr("PUT", path, ae.a, assistant.Choice{Kind: assistant.PersonalizePersona, ID: "pzzzzzzzzzzzzzzzz"}, 403, assistant.CodePersonaUnavailable)
	ae.wantErr("PUT", path, ae.b, assistant.Choice{Kind: assistant.PersonalizeNone}, 404, "not_found")
	ae.ok("GET", "/v1/sessions/"+q.Session.ID, ae.a, nil, &ss)
	if ss.Choice == nil || ss.Choice.Kind != assistant.PersonalizeNone {
		t.Fatalf("a refused choice changed the session: %+v", ss.Choice)
	}
}

// The same over the socket: session.personalize answers the session with
// its choice, session.list carries it, a session of another document is
// missing and a backup token is refused.
func TestSessionPersonalizationWebSocket(t *testing.T) {
	ae := newSyncAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	q := ae.ask(ae.a, doc, "p1")
	c := ae.dial(ae.a, syncproto.SubprotocolJSON, nil)
	choice := syncproto.SessionChoice{Kind: "editing_preset", ID: "six-rules"}
	done := request[*syncproto.SessionPersonalizeDone](t, c, &syncproto.SessionPersonalize{Doc: doc, Session: q.Session.ID, Personalization: choice})
	if p := done.Session.Personalization; p == nil || *p != choice {
		t.Fatalf("reply %+v", done.Session)
	}
	list := request[*syncproto.SessionListDone](t, c, &syncproto.SessionList{Doc: doc})
	if len(list.Sessions) != 1 || list.Sessions[0].Personalization == nil || *list.Sessions[0].Personalization != choice {
		t.Fatalf("list %+v", list.Sessions)
	}
	if re := remoteErr(t, c, &syncproto.SessionPersonalize{Doc: doc, Session: q.Session.ID,
		Personalization: syncproto.SessionChoice{Kind: "writing_preset", ID: "six-rules"}}); re.Code != syncproto.CodeInvalid {
		t.Errorf("an editing preset as a writing one: %+v", re)
	}
	other := ae.article(ae.a)
	if re := remoteErr(t, c, &syncproto.SessionPersonalize{Doc: other, Session: q.Session.ID, Personalization: choice}); re.Code != syncproto.CodeNotFound {
		t.Errorf("a session of another document: %+v", re)
	}
	tok, err := ae.auth.AddToken(context.Background(), "author-a", "backup")
	if err != nil {
		t.Fatal(err)
	}
	cr := ae.dial(tok.Secret, syncproto.SubprotocolJSON, nil)
	if re := remoteErr(t, cr, &syncproto.SessionPersonalize{Doc: doc, Session: q.Session.ID, Personalization: choice}); re.Code != syncproto.CodeReadOnly {
		t.Errorf("backup token: %+v", re)
	}
}
