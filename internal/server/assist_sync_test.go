package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// codecs are the two subprotocols every socket test runs with.
var codecs = []string{syncproto.SubprotocolJSON, syncproto.SubprotocolMsgpack}

// events collects what a connection's streams deliver.
type events struct {
	mu   sync.Mutex
	evs  []*syncproto.Event
	more chan struct{} // closed and replaced on every event
}

func newEvents() *events { return &events{more: make(chan struct{})} }

func (e *events) add(ev *syncproto.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	close(e.more)
	e.more = make(chan struct{})
	e.mu.Unlock()
}

// wait returns the events of stream once one satisfies done; it fails the
// test if none does within a safety limit (a hung run, not a timing
// assertion).
func (e *events) wait(t testing.TB, stream string, done func(*syncproto.Event) bool) []*syncproto.Event {
	t.Helper()
	limit := time.After(20 * time.Second)
	for {
		e.mu.Lock()
		var out []*syncproto.Event
		hit := false
		for _, ev := range e.evs {
			if ev.Stream == stream {
				out = append(out, ev)
				hit = hit || done(ev)
			}
		}
		more := e.more
		e.mu.Unlock()
		if hit {
			return out
		}
		select {
		case <-more:
		case <-limit:
			t.Fatalf("stream %s: the awaited event never came; got %v", stream, evTypes(out))
		}
	}
}

func evTypes(evs []*syncproto.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// isType matches events of type typ.
func isType(typ string) func(*syncproto.Event) bool {
	return func(ev *syncproto.Event) bool { return ev.Type == typ }
}

// suggestionEvent matches a suggestion event of type typ about id.
func suggestionEvent(t testing.TB, typ, id string) func(*syncproto.Event) bool {
	return func(ev *syncproto.Event) bool {
		if ev.Type != typ {
			return false
		}
		var d syncproto.SuggestionEventData
		if err := ev.DecodeData(&d); err != nil {
			t.Errorf("%s data: %v", typ, err)
			return false
		}
		return d.ID == id
	}
}

// syncEnv is an assistant environment with the real sync server.
func newSyncAssistEnv(t testing.TB, o assistOpts) *assistEnv {
	t.Helper()
	o.realSync = true
	ae := newAssistEnv(t, o)
	t.Cleanup(func() {
		// The connections end (and seal their leave checkpoints) before
		// the runner and the store close.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ae.srv.Shutdown(ctx)
	})
	return ae
}

// dial opens a sync connection with token in the given subprotocol.
func (ae *assistEnv) dial(token, subprotocol string, evs *events) *client.Client {
	ae.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := client.Options{Token: token, Subprotocol: subprotocol}
	if evs != nil {
		o.OnEvent = evs.add
	}
	c, err := client.Dial(ctx, "ws"+strings.TrimPrefix(ae.ts.URL, "http")+"/v1/sync", o)
	if err != nil {
		ae.t.Fatal(err)
	}
	ae.t.Cleanup(c.CloseNow)
	return c
}

// request sends m and returns its reply as a T.
func request[T syncproto.Message](t testing.TB, c *client.Client, m syncproto.Message) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := c.Request(ctx, m)
	if err != nil {
		t.Fatalf("%s: %v", syncproto.TypeOf(m), err)
	}
	out, ok := r.(T)
	if !ok {
		t.Fatalf("%s answered %T", syncproto.TypeOf(m), r)
	}
	return out
}

// remoteErr sends m and returns the error it is answered with.
func remoteErr(t testing.TB, c *client.Client, m syncproto.Message) *syncproto.RemoteError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := c.Request(ctx, m)
	var re *syncproto.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("%s: want an error reply, got %v %v", syncproto.TypeOf(m), r, err)
	}
	return re
}

// An agent's proposal (POST /v1/docs/{id}/suggestions with an agent
// token) is announced on the document's stream naming the agent, in both
// codecs, so that the author's open editor can say who proposed it.
func TestAgentProposalAnnouncedWithItsAgent(t *testing.T) {
	for _, sp := range codecs {
		t.Run(sp, func(t *testing.T) {
			ae := newSyncAssistEnv(t, assistOpts{})
			doc := ae.article(ae.a)
			evs := newEvents()
			c := ae.dial(ae.a, sp, evs)
			snap, err := c.Open(context.Background(), doc)
			if err != nil {
				t.Fatal(err)
			}
			agent := ae.agentToken("author-a")
			st, data := ae.propose(agent.Secret, doc, ProposeRequest{Scope: assistant.Scope{Kind: assistant.ScopeBlock, Block: "p1"}, Base: "v1.r0",
				Ops: json.RawMessage(`[{"op":"replace_block","blockId":"p1","block":{"id":"p1","type":"paragraph","richText":[{"text":"To win, the team decided."}]}}]`)})
			if st != http.StatusCreated {
				t.Fatalf("proposal: %d %s", st, data)
			}
			var sg assistant.Suggestion
			if err := json.Unmarshal(data, &sg); err != nil {
				t.Fatal(err)
			}
			created := evs.wait(t, snap.Stream, suggestionEvent(t, "suggestion.created", sg.ID))
			var se syncproto.SuggestionEventData
			if err := created[len(created)-1].DecodeData(&se); err != nil {
				t.Fatal(err)
			}
			want := syncproto.SuggestionAgent{Client: "test-agent", ClientVersion: "0.9", Token: agent.ID, User: "author-a"}
			if se.Agent == nil || *se.Agent != want || se.Run != "" || se.Status != "pending" {
				t.Fatalf("suggestion.created %+v (agent %+v), want agent %+v", se, se.Agent, want)
			}
		})
	}
}

// blockScope is the wire scope of one block.
func blockScope(id string) syncproto.AssistScope {
	return syncproto.AssistScope{Kind: "block", Block: id}
}

// An author's whole round over the socket, in both codecs: a request, its
// run followed on run:<id> from queued to succeeded, the suggestion
// announced on the document's stream, preview, accept (twice: the same
// version), and the session list, start and switch. What the socket
// answers is what the service (and so the HTTP API) holds.
func TestAssistOverWebSocket(t *testing.T) {
	for _, sp := range codecs {
		t.Run(sp, func(t *testing.T) {
			ae := newSyncAssistEnv(t, assistOpts{})
			doc := ae.article(ae.a)
			evs := newEvents()
			c := ae.dial(ae.a, sp, evs)
			ctx := context.Background()
			snap, err := c.Open(ctx, doc)
			if err != nil {
				t.Fatal(err)
			}

			q := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"),
				EditingPreset: "six-rules", IdempotencyKey: "ws-1"})
			if !q.Created || q.Doc != doc || q.Run.State != "queued" || q.Stream != "run:"+q.Run.ID || q.Session == "" || q.Message != 1 {
				t.Fatalf("queued %+v", q)
			}
			if q.Run.Instruction != assistant.DefaultEditingInstructionEN || q.Run.Personalization != "editing_preset" ||
				q.Run.Preset == nil || q.Run.Preset.ID != "six-rules" || q.Run.Preset.Type != "editing" || q.Run.Preset.Number != 1 ||
				q.Run.Preset.VersionID == "" || q.Run.Base != "v1.r0" || q.Run.Scope != blockScope("p1") {
				t.Fatalf("run %+v", q.Run)
			}
			zero := uint64(0)
			if _, err := c.Subscribe(ctx, q.Stream, &zero); err != nil {
				t.Fatal(err)
			}
			run := evs.wait(t, q.Stream, isType("succeeded"))
			got := evTypes(run)
			if got[0] != "queued" || got[1] != "started" || got[len(got)-1] != "succeeded" {
				t.Fatalf("run stream %v", got)
			}
			text := ""
			var final syncproto.RunEventData
			for i, ev := range run {
				var d syncproto.RunEventData
				if err := ev.DecodeData(&d); err != nil || d.Run != q.Run.ID || ev.Cursor != uint64(i+1) {
					t.Fatalf("event %d %s: %+v %v", i, ev.Type, d, err)
				}
				if ev.Type == "progress" {
					text += d.Text
				}
				final = d
			}
			if !strings.Contains(text, `"replace_block"`) {
				t.Fatalf("progress carried %q, not the answer", text)
			}
			if final.Outcome != "suggestion" || final.Suggestion == "" || final.Status != "pending" || final.Usage == nil || final.Usage.Total == 0 {
				t.Fatalf("succeeded %+v", final)
			}
			sg := final.Suggestion
			created := evs.wait(t, snap.Stream, suggestionEvent(t, "suggestion.created", sg))
			var se syncproto.SuggestionEventData
			if err := created[len(created)-1].DecodeData(&se); err != nil || se.Run != q.Run.ID || se.Status != "pending" ||
				se.Scope == nil || *se.Scope != blockScope("p1") || se.Base != "v1.r0" || se.Ops != 1 || se.Agent != nil {
				t.Fatalf("suggestion.created %+v %v", se, err)
			}

			// The same key answers the first run as it stands.
			again := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"),
				EditingPreset: "six-rules", IdempotencyKey: "ws-1"})
			if again.Created || again.Run.ID != q.Run.ID || again.Run.State != "succeeded" || again.Run.Suggestion != sg {
				t.Fatalf("repeat %+v", again)
			}

			pv := request[*syncproto.SuggestionPreviewDone](t, c, &syncproto.SuggestionPreview{Suggestion: sg})
			want, err := ae.svc.Preview(ctx, assistant.Actor{UserID: ae.id("author-a"), User: "author-a"}, sg)
			if err != nil {
				t.Fatal(err)
			}
			if !pv.Current || pv.Suggestion.Status != "pending" || len(pv.Changes) != 1 || pv.Changes[0].BlockID != "p1" ||
				len(pv.Candidate.Blocks) != len(want.Candidate.Blocks) || pv.Candidate.Blocks[0].RichText[0].Text != want.Candidate.Blocks[0].RichText[0].Text ||
				len(pv.Suggestion.Ops) != 1 || pv.Suggestion.Ops[0].Op != "replace_block" {
				t.Fatalf("preview %+v", pv)
			}

			acc := request[*syncproto.SuggestionAcceptDone](t, c, &syncproto.SuggestionAccept{Suggestion: sg})
			if acc.Version != "v1.r1" || acc.Suggestion.Status != "accepted" || acc.Suggestion.Version != "v1.r1" {
				t.Fatalf("accept %+v", acc)
			}
			dr, err := ae.repo.Draft(ctx, doc)
			if err != nil || dr.Fingerprint != acc.Fingerprint || dr.Head != "v1.r1" {
				t.Fatalf("draft after accept %+v %v", dr, err)
			}
			docEvs := evs.wait(t, snap.Stream, suggestionEvent(t, "suggestion.accepted", sg))
			if n := len(docEvs); n < 3 || docEvs[n-2].Type != "version.created" {
				t.Fatalf("document stream after the accept: %v", evTypes(docEvs))
			}
			// A repeated accept answers the first one: no second version.
			acc2 := request[*syncproto.SuggestionAcceptDone](t, c, &syncproto.SuggestionAccept{Suggestion: sg})
			if acc2.Version != "v1.r1" || acc2.Fingerprint != acc.Fingerprint {
				t.Fatalf("second accept %+v", acc2)
			}
			// Cancelling a finished run answers it as it is.
			cd := request[*syncproto.AssistCancelDone](t, c, &syncproto.AssistCancel{Run: q.Run.ID})
			if cd.Run.State != "succeeded" || cd.Run.Suggestion != sg || cd.Run.Attempts != 1 || cd.Run.PromptHash == "" {
				t.Fatalf("cancel of a finished run %+v", cd.Run)
			}

			list := request[*syncproto.SessionListDone](t, c, &syncproto.SessionList{Doc: doc})
			if len(list.Sessions) != 1 || list.Sessions[0].ID != q.Session || list.Sessions[0].Messages != 2 || list.Doc != doc {
				t.Fatalf("sessions %+v", list)
			}
			st := request[*syncproto.SessionStartDone](t, c, &syncproto.SessionStart{Doc: doc, Title: "second"})
			if st.Session.Title != "second" || st.Session.ID == q.Session {
				t.Fatalf("start %+v", st)
			}
			list = request[*syncproto.SessionListDone](t, c, &syncproto.SessionList{Doc: doc})
			if len(list.Sessions) != 2 || list.Sessions[0].ID != st.Session.ID {
				t.Fatalf("after start %+v", list)
			}
			// A request without a session continues the current one.
			q2 := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p2"), EditingPreset: "six-rules"})
			if q2.Session != st.Session.ID {
				t.Fatalf("request went to session %s, not the current %s", q2.Session, st.Session.ID)
			}

			// A rejection, and its event.
			if _, err := c.Subscribe(ctx, q2.Stream, &zero); err != nil {
				t.Fatal(err)
			}
			var d2 syncproto.RunEventData
			run2 := evs.wait(t, q2.Stream, isType("succeeded"))
			if err := run2[len(run2)-1].DecodeData(&d2); err != nil || d2.Suggestion == "" {
				t.Fatalf("second run %+v %v", d2, err)
			}
			// Switched once the second run has written its answer (which
			// updates its session), the first session is the current one.
			sw := request[*syncproto.SessionSwitchDone](t, c, &syncproto.SessionSwitch{Doc: doc, Session: q.Session})
			if sw.Session.ID != q.Session {
				t.Fatalf("switch %+v", sw)
			}
			list = request[*syncproto.SessionListDone](t, c, &syncproto.SessionList{Doc: doc})
			if list.Sessions[0].ID != q.Session {
				t.Fatalf("after switch %+v", list)
			}
			rj := request[*syncproto.SuggestionRejectDone](t, c, &syncproto.SuggestionReject{Suggestion: d2.Suggestion, Reason: "keep mine"})
			if rj.Suggestion.Status != "rejected" || rj.Suggestion.RejectReason != "keep mine" {
				t.Fatalf("reject %+v", rj)
			}
			evs.wait(t, snap.Stream, suggestionEvent(t, "suggestion.rejected", d2.Suggestion))
			re := remoteErr(t, c, &syncproto.SuggestionAccept{Suggestion: d2.Suggestion})
			if re.Code != assistant.CodeSuggestionDecided {
				t.Fatalf("accept of a rejected suggestion: %+v", re)
			}
		})
	}
}

// Personalization is exclusive at the WebSocket entry too: two (or
// three) of persona, writing preset and editing preset are refused with
// personalization_conflict before anything is written, in both codecs; a
// persona alone is persona_unavailable; a misspelt field is refused, not
// dropped.
func TestAssistWebSocketPersonalizationConflict(t *testing.T) {
	for _, sp := range codecs {
		t.Run(sp, func(t *testing.T) {
			ae := newSyncAssistEnv(t, assistOpts{})
			doc := ae.article(ae.a)
			c := ae.dial(ae.a, sp, nil)
			for _, req := range []syncproto.AssistRequest{
				{WritingPreset: "clear-concise", EditingPreset: "six-rules"},
				{Persona: "p1", EditingPreset: "six-rules"},
				{Persona: "p1", WritingPreset: "clear-concise"},
				{Persona: "p1", WritingPreset: "clear-concise", EditingPreset: "six-rules"},
			} {
				req.Doc, req.Scope, req.Instruction = doc, blockScope("p1"), "x"
				re := remoteErr(t, c, &req)
				if re.Code != assistant.CodePersonalizationConflict || re.Kind != "invalid" {
					t.Fatalf("%+v: %+v", req, re)
				}
			}
			re := remoteErr(t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"), Instruction: "x", Persona: "p1"})
			if re.Code != assistant.CodePersonaUnavailable {
				t.Fatalf("persona: %+v", re)
			}
			list := request[*syncproto.SessionListDone](t, c, &syncproto.SessionList{Doc: doc})
			if len(list.Sessions) != 0 {
				t.Fatalf("refused requests left sessions %+v", list.Sessions)
			}
			log, err := ae.repo.Log(context.Background(), doc, 10, 0)
			if err != nil || len(log) != 1 {
				t.Fatalf("refused requests left versions %+v %v", log, err)
			}
		})
	}
}

// A frame with a field assist.request does not have is refused as
// invalid, naming it, in both codecs: a misspelt "preset" must not run the
// request without its preset.
func TestAssistWebSocketUnknownField(t *testing.T) {
	frames := map[string]func(doc string) []byte{
		syncproto.SubprotocolJSON: func(doc string) []byte {
			return []byte(`{"type":"assist.request","id":"u1","doc":"` + doc + `","scope":{"kind":"block","block":"p1"},"instruction":"x","preset":"six-rules"}`)
		},
		syncproto.SubprotocolMsgpack: func(doc string) []byte {
			b, err := syncproto.MsgpackCodec.Encode(&struct {
				syncproto.Envelope
				Doc    string                `json:"doc"`
				Scope  syncproto.AssistScope `json:"scope"`
				Instr  string                `json:"instruction"`
				Preset string                `json:"preset"`
			}{Envelope: syncproto.Envelope{Type: syncproto.TypeAssistRequest, ID: "u1"}, Doc: doc, Scope: blockScope("p1"), Instr: "x", Preset: "six-rules"})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
	for _, sp := range codecs {
		t.Run(sp, func(t *testing.T) {
			ae := newSyncAssistEnv(t, assistOpts{})
			doc := ae.article(ae.a)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			h := http.Header{}
			h.Set("Authorization", "Bearer "+ae.a)
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ae.ts.URL, "http")+"/v1/sync",
				&websocket.DialOptions{Subprotocols: []string{sp}, HTTPHeader: h})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			codec := syncproto.CodecFor(sp)
			typ := websocket.MessageText
			if codec.Binary() {
				typ = websocket.MessageBinary
			}
			if err := ws.Write(ctx, typ, frames[sp](doc)); err != nil {
				t.Fatal(err)
			}
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				m, err := codec.Decode(data, true)
				if err != nil {
					t.Fatal(err)
				}
				if e, ok := m.(*syncproto.Error); ok {
					if e.ID != "u1" || e.Kind != "invalid" || !strings.Contains(e.Message, "preset") {
						t.Fatalf("error %+v", e)
					}
					break
				}
				if m.Env().ID == "u1" {
					t.Fatalf("the request was answered %s", m.Env().Type)
				}
			}
			if ss, _ := ae.svc.Sessions(ctx, assistant.Actor{UserID: ae.id("author-a"), User: "author-a"}, doc); len(ss) != 0 {
				t.Fatalf("the refused request started sessions %+v", ss)
			}
		})
	}
}

// A pending suggestion is conflicted at once by a WebSocket save that
// changes its anchor block: the editor that saved and another editor of
// the document both get suggestion.conflicted after the save's own
// events, and an accept is refused with suggestion_conflicted, the body
// untouched. A restore sent over the socket conflicts one too.
func TestAssistLiveInvalidationWebSocket(t *testing.T) {
	for _, sp := range codecs {
		t.Run(sp, func(t *testing.T) {
			ae := newSyncAssistEnv(t, assistOpts{})
			doc := ae.article(ae.a)
			ctx := context.Background()
			mine, other := newEvents(), newEvents()
			c := ae.dial(ae.a, sp, mine)
			c2 := ae.dial(ae.a, sp, other)
			snap, err := c.Open(ctx, doc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c2.Open(ctx, doc); err != nil {
				t.Fatal(err)
			}
			q := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"), EditingPreset: "six-rules"})
			run, err := ae.svc.WaitRun(ctx, q.Run.ID)
			if err != nil || run.Suggestion == "" {
				t.Fatalf("run %+v %v", run, err)
			}
			sg := run.Suggestion
			mine.wait(t, snap.Stream, suggestionEvent(t, "suggestion.created", sg))

			// A save of its anchor block conflicts it at once.
			p1 := para("p1", "In order to win, the whole team made a decision.")
			if _, err := c.Save(ctx, doc, snap.Seq, syncproto.Change{Op: syncproto.OpUpsert, Block: &p1}); err != nil {
				t.Fatal(err)
			}
			for _, e := range []*events{mine, other} {
				evs := e.wait(t, snap.Stream, suggestionEvent(t, "suggestion.conflicted", sg))
				var d syncproto.SuggestionEventData
				if err := evs[len(evs)-1].DecodeData(&d); err != nil || d.Status != "conflicted" || d.By != "draft" ||
					len(d.Blocks) != 1 || d.Blocks[0] != "p1" {
					t.Fatalf("suggestion.conflicted %+v %v", d, err)
				}
			}
			// The other editor saw the save that caused it before the event.
			evs := other.wait(t, snap.Stream, suggestionEvent(t, "suggestion.conflicted", sg))
			if n := len(evs); n < 2 || evs[n-2].Type != syncproto.TypeDraftUpdated {
				t.Fatalf("the other editor's stream: %v", evTypes(evs))
			}
			re := remoteErr(t, c, &syncproto.SuggestionAccept{Suggestion: sg})
			if re.Code != assistant.CodeSuggestionConflicted || re.Kind != "conflict" {
				t.Fatalf("accept of a conflicted suggestion: %+v", re)
			}
			dr, err := ae.repo.Draft(ctx, doc)
			if err != nil || flowdoc.PlainText(dr.Body.Blocks[0].RichText) != "In order to win, the whole team made a decision." || dr.Head != "v1.r0" {
				t.Fatalf("the refused accept touched the body: %+v %v", dr, err)
			}

			// A save elsewhere leaves a suggestion pending, and the preview
			// over the socket shows the current draft.
			q2 := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"), EditingPreset: "six-rules"})
			if q2.Checkpoint != "v1.r1" {
				t.Fatalf("the request sealed %q, want v1.r1", q2.Checkpoint)
			}
			run2, err := ae.svc.WaitRun(ctx, q2.Run.ID)
			if err != nil || run2.Suggestion == "" {
				t.Fatalf("run %+v %v", run2, err)
			}
			cur, _ := ae.repo.Draft(ctx, doc)
			p2 := para("p2", "Typed elsewhere after the suggestion.")
			if _, err := c.Save(ctx, doc, cur.Seq, syncproto.Change{Op: syncproto.OpUpsert, Block: &p2}); err != nil {
				t.Fatal(err)
			}
			pv := request[*syncproto.SuggestionPreviewDone](t, c, &syncproto.SuggestionPreview{Suggestion: run2.Suggestion})
			if pv.Suggestion.Status != "pending" || !pv.Current || !pv.CarriedOver || pv.Against != "v1.r1" ||
				flowdoc.PlainText(pv.Candidate.Blocks[1].RichText) != "Typed elsewhere after the suggestion." {
				t.Fatalf("preview after a save elsewhere: %s current %v carried %v against %q", pv.Suggestion.Status, pv.Current, pv.CarriedOver, pv.Against)
			}
			// A restore sent over the socket that changes its block
			// conflicts it.
			if _, err := c.Restore(ctx, doc, "v1.r0"); err != nil {
				t.Fatal(err)
			}
			evs = other.wait(t, snap.Stream, suggestionEvent(t, "suggestion.conflicted", run2.Suggestion))
			var d syncproto.SuggestionEventData
			if err := evs[len(evs)-1].DecodeData(&d); err != nil || d.By != "restore" {
				t.Fatalf("suggestion.conflicted after the restore %+v %v", d, err)
			}
		})
	}
}

// Another user's run, suggestion and session are answered over the socket
// exactly like missing ones, including run:<id> subscriptions; a backup
// token reads (preview, session list) and changes nothing; with no
// assistant every assistant request answers assistant_disabled.
func TestAssistWebSocketAccess(t *testing.T) {
	ae := newSyncAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	ctx := context.Background()
	q := ae.ask(ae.a, doc, "p1")
	run, err := ae.svc.WaitRun(ctx, q.Run.ID)
	if err != nil || run.Suggestion == "" {
		t.Fatalf("run %+v %v", run, err)
	}
	sg, ghostRun, ghostSg := run.Suggestion, "rzzzzzzzzzzzzzzzz", "szzzzzzzzzzzzzzzz"
	cb := ae.dial(ae.b, syncproto.SubprotocolJSON, nil)
	same := func(what string, real, ghost syncproto.Message, realID, ghostID string) {
		t.Helper()
		r, g := remoteErr(t, cb, real), remoteErr(t, cb, ghost)
		if r.Code != syncproto.CodeNotFound || g.Code != syncproto.CodeNotFound ||
			r.Message != strings.ReplaceAll(g.Message, ghostID, realID) {
			t.Errorf("%s: real %+v, missing %+v", what, r, g)
		}
	}
	same("subscribe", &syncproto.Subscribe{Stream: "run:" + run.ID}, &syncproto.Subscribe{Stream: "run:" + ghostRun}, run.ID, ghostRun)
	same("cancel", &syncproto.AssistCancel{Run: run.ID}, &syncproto.AssistCancel{Run: ghostRun}, run.ID, ghostRun)
	same("preview", &syncproto.SuggestionPreview{Suggestion: sg}, &syncproto.SuggestionPreview{Suggestion: ghostSg}, sg, ghostSg)
	same("accept", &syncproto.SuggestionAccept{Suggestion: sg}, &syncproto.SuggestionAccept{Suggestion: ghostSg}, sg, ghostSg)
	same("reject", &syncproto.SuggestionReject{Suggestion: sg}, &syncproto.SuggestionReject{Suggestion: ghostSg}, sg, ghostSg)
	for _, m := range []syncproto.Message{
		&syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"), Instruction: "x"},
		&syncproto.SessionList{Doc: doc},
		&syncproto.SessionSwitch{Doc: doc, Session: q.Session.ID},
	} {
		if re := remoteErr(t, cb, m); re.Code != syncproto.CodeNotFound {
			t.Errorf("author-b's %s on author-a's document: %+v", syncproto.TypeOf(m), re)
		}
	}
	// author-a's own session, switched to on another document, is missing.
	other := ae.article(ae.a)
	ca := ae.dial(ae.a, syncproto.SubprotocolMsgpack, nil)
	if re := remoteErr(t, ca, &syncproto.SessionSwitch{Doc: other, Session: q.Session.ID}); re.Code != syncproto.CodeNotFound {
		t.Errorf("switch to a session of another document: %+v", re)
	}
	// The owner's subscription to the run stream works; an admin's too.
	if _, err := ca.Subscribe(ctx, "run:"+run.ID, nil); err != nil {
		t.Fatal(err)
	}
	cadm := ae.dial(ae.admin, syncproto.SubprotocolJSON, nil)
	if _, err := cadm.Subscribe(ctx, "run:"+run.ID, nil); err != nil {
		t.Fatal(err)
	}

	// The owner's backup token reads and changes nothing.
	tok, err := ae.auth.AddToken(ctx, "author-a", "backup")
	if err != nil {
		t.Fatal(err)
	}
	cr := ae.dial(tok.Secret, syncproto.SubprotocolJSON, nil)
	request[*syncproto.SuggestionPreviewDone](t, cr, &syncproto.SuggestionPreview{Suggestion: sg})
	request[*syncproto.SessionListDone](t, cr, &syncproto.SessionList{Doc: doc})
	for _, m := range []syncproto.Message{
		&syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"), Instruction: "x"},
		&syncproto.AssistCancel{Run: run.ID},
		&syncproto.SuggestionAccept{Suggestion: sg},
		&syncproto.SuggestionReject{Suggestion: sg},
		&syncproto.SessionStart{Doc: doc},
		&syncproto.SessionSwitch{Doc: doc, Session: q.Session.ID},
	} {
		if re := remoteErr(t, cr, m); re.Code != syncproto.CodeReadOnly {
			t.Errorf("backup token's %s: %+v", syncproto.TypeOf(m), re)
		}
	}
	if got, _ := ae.svc.Suggestion(ctx, assistant.Actor{UserID: ae.id("author-a"), User: "author-a"}, sg); got.Status != assistant.StatusPending {
		t.Fatalf("the refused requests decided the suggestion: %+v", got)
	}
}

// A daemon without the assistant answers every assistant request with
// assistant_disabled over the socket, as over HTTP.
func TestAssistWebSocketDisabled(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.NewSync = nil })
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
	})
	e.newArticle("a", "", "Some text.")
	ae := &assistEnv{env: e}
	c := ae.dial(e.ann, syncproto.SubprotocolMsgpack, nil)
	for _, m := range []syncproto.Message{
		&syncproto.AssistRequest{Doc: "a", Scope: syncproto.AssistScope{Kind: "document"}, Instruction: "x"},
		&syncproto.AssistCancel{Run: "r1"},
		&syncproto.SuggestionPreview{Suggestion: "s1"},
		&syncproto.SuggestionAccept{Suggestion: "s1"},
		&syncproto.SuggestionReject{Suggestion: "s1"},
		&syncproto.SessionList{Doc: "a"},
		&syncproto.SessionStart{Doc: "a"},
		&syncproto.SessionSwitch{Doc: "a", Session: "c1"},
	} {
		if re := remoteErr(t, c, m); re.Code != assistant.CodeDisabled || re.Kind != "disabled" {
			t.Errorf("%s: %+v", syncproto.TypeOf(m), re)
		}
	}
	// Editing goes on.
	snap, err := c.Open(context.Background(), "a")
	if err != nil || snap.Doc != "a" {
		t.Fatalf("open %+v %v", snap, err)
	}
}

// The wire types of the assistant's events name every field of the
// stored payloads with the same JSON name and type, so what the sync
// server passes through as stored decodes into them whole.
func TestAssistEventWireTypes(t *testing.T) {
	for _, c := range []struct{ stored, wire any }{
		{assistant.RunEvent{}, syncproto.RunEventData{}},
		{assistant.EventUsage{}, syncproto.RunUsage{}},
		{assistant.SuggestionEvent{}, syncproto.SuggestionEventData{}},
		{assistant.Scope{}, syncproto.AssistScope{}},
		{assistant.EventAgent{}, syncproto.SuggestionAgent{}},
	} {
		st, wt := reflect.TypeOf(c.stored), reflect.TypeOf(c.wire)
		if st.NumField() != wt.NumField() {
			t.Errorf("%s has %d fields, %s %d", st, st.NumField(), wt, wt.NumField())
			continue
		}
		for i := range st.NumField() {
			sf, wf := st.Field(i), wt.Field(i)
			if sf.Tag.Get("json") != wf.Tag.Get("json") || sf.Tag.Get("json") != sf.Tag.Get("msgpack") {
				t.Errorf("%s.%s: stored json %q msgpack %q, wire %q", st, sf.Name, sf.Tag.Get("json"), sf.Tag.Get("msgpack"), wf.Tag.Get("json"))
			}
			sk, wk := sf.Type.Kind(), wf.Type.Kind()
			if sk == reflect.Pointer {
				sk, wk = sf.Type.Elem().Kind(), wf.Type.Elem().Kind()
			}
			if sk != wk {
				t.Errorf("%s.%s: stored %s, wire %s", st, sf.Name, sf.Type, wf.Type)
			}
		}
	}
}

// fixedModel answers every request with the same text, in one piece.
type fixedModel struct{ text string }

func (m fixedModel) Name() string  { return "fixed" }
func (m fixedModel) Model() string { return "fixed-1" }
func (m fixedModel) Stream(context.Context, llm.Request) (llm.Stream, error) {
	return &fixedStream{text: m.text}, nil
}

type fixedStream struct {
	text string
	done bool
}

func (s *fixedStream) Next() (string, error) {
	if s.done {
		return "", io.EOF
	}
	s.done = true
	return s.text, nil
}
func (s *fixedStream) Usage() (llm.Usage, bool) {
	return llm.Usage{Input: 10, Output: 5, Total: 15}, s.done
}
func (s *fixedStream) FinishReason() string { return "stop" }
func (s *fixedStream) Close() error         { return nil }

// A suggestion that deletes a block is accepted over the socket only with
// confirmDelete: without it the accept is refused and nothing is written.
func TestAssistWebSocketDeleteConfirmation(t *testing.T) {
	ae := newSyncAssistEnv(t, assistOpts{writing: func(llm.Provider) llm.Provider {
		return fixedModel{`{"summary":"redundant","ops":[{"op":"delete_block","blockId":"p2"}]}`}
	}})
	doc := ae.article(ae.a)
	ctx := context.Background()
	c := ae.dial(ae.a, syncproto.SubprotocolMsgpack, nil)
	q := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p2"), Instruction: "cut what repeats"})
	run, err := ae.svc.WaitRun(ctx, q.Run.ID)
	if err != nil || run.Suggestion == "" {
		t.Fatalf("run %+v %v", run, err)
	}
	pv := request[*syncproto.SuggestionPreviewDone](t, c, &syncproto.SuggestionPreview{Suggestion: run.Suggestion})
	if !pv.Suggestion.Deletes || len(pv.Candidate.Blocks) != 1 || pv.Changes[0].Kind != flowdoc.Deleted {
		t.Fatalf("preview %+v", pv)
	}
	re := remoteErr(t, c, &syncproto.SuggestionAccept{Suggestion: run.Suggestion})
	if re.Code != assistant.CodeDeleteConfirmation {
		t.Fatalf("accept without confirmation: %+v", re)
	}
	if dr, _ := ae.repo.Draft(ctx, doc); len(dr.Body.Blocks) != 2 || dr.Head != "v1.r0" {
		t.Fatalf("the refused accept wrote %+v", dr)
	}
	acc := request[*syncproto.SuggestionAcceptDone](t, c, &syncproto.SuggestionAccept{Suggestion: run.Suggestion, ConfirmDelete: true})
	if acc.Version != "v1.r1" {
		t.Fatalf("accept %+v", acc)
	}
	if dr, _ := ae.repo.Draft(ctx, doc); len(dr.Body.Blocks) != 1 || dr.Body.Blocks[0].ID != "p1" {
		t.Fatalf("after the confirmed accept %+v", dr.Body)
	}
}

// A run's end reaches the socket whatever it is: a queued run cancelled
// with assist.cancel ends with cancelled on its stream, and a run whose
// model never answers JSON ends with failed and its code, with no
// suggestion announced on the document's stream.
func TestAssistWebSocketRunEnds(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		ae := newSyncAssistEnv(t, assistOpts{noStart: true})
		doc := ae.article(ae.a)
		evs := newEvents()
		c := ae.dial(ae.a, syncproto.SubprotocolJSON, evs)
		q := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"), EditingPreset: "six-rules"})
		zero := uint64(0)
		if _, err := c.Subscribe(context.Background(), q.Stream, &zero); err != nil {
			t.Fatal(err)
		}
		cd := request[*syncproto.AssistCancelDone](t, c, &syncproto.AssistCancel{Run: q.Run.ID})
		if cd.Run.State != "cancelled" || cd.Run.Finished == 0 {
			t.Fatalf("cancel %+v", cd.Run)
		}
		got := evTypes(evs.wait(t, q.Stream, isType("cancelled")))
		if !slices.Equal(got, []string{"queued", "cancelled"}) {
			t.Fatalf("run stream %v", got)
		}
	})
	t.Run("failed", func(t *testing.T) {
		ae := newSyncAssistEnv(t, assistOpts{writing: func(llm.Provider) llm.Provider { return fixedModel{"I would rather not."} }})
		doc := ae.article(ae.a)
		evs := newEvents()
		c := ae.dial(ae.a, syncproto.SubprotocolMsgpack, evs)
		snap, err := c.Open(context.Background(), doc)
		if err != nil {
			t.Fatal(err)
		}
		q := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: doc, Scope: blockScope("p1"), Instruction: "shorter"})
		zero := uint64(0)
		if _, err := c.Subscribe(context.Background(), q.Stream, &zero); err != nil {
			t.Fatal(err)
		}
		run := evs.wait(t, q.Stream, isType("failed"))
		var d syncproto.RunEventData
		if err := run[len(run)-1].DecodeData(&d); err != nil || d.Code != assistant.CodeNotJSON || d.Message == "" {
			t.Fatalf("failed %+v %v", d, err)
		}
		// Its failure was committed last: what the document's stream holds
		// now is all the run wrote there.
		stored, err := stream.Read(ae.repo.DB(), snap.Stream, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range stored {
			if strings.HasPrefix(ev.Type, "suggestion.") {
				t.Fatalf("a failed run announced %s", ev.Type)
			}
		}
	})
}

// A persona run over the socket shows what it pinned and how it was
// grounded, exactly as the HTTP API shows it: the queued run carries the
// persona's id and version, the memory keys and the references; the
// finished run its grounding verdict with the memory provided and used
// and the reference count; its suggestion the Burrows' Delta closeness.
// The persona is created, published from and generated through the
// daemon's own endpoints and task, in both codecs.
func TestAssistWebSocketPersonaRun(t *testing.T) {
	answer := `{"summary":"rewritten","ops":[{"op":"replace_block","blockId":"p1","block":{"type":"paragraph","richText":[{"text":"2019年我加入了星火公司，负责搜索。"}]}}]}`
	ae := newSyncAssistEnv(t, assistOpts{personas: true, writing: func(llm.Provider) llm.Provider { return fixedModel{answer} }})
	ctx := context.Background()
	source := func(title string, paras ...string) string {
		var blocks []flowdoc.Block
		for i, p := range paras {
			blocks = append(blocks, para(fmt.Sprintf("s%d", i), p))
		}
		var v repo.VersionInfo
		ae.ok("POST", "/v1/docs", ae.a, CreateRequest{Attrs: flowdoc.Attributes{Title: title}, Body: doc(blocks...)}, &v)
		ae.ok("POST", "/v1/docs/"+v.Doc+"/publish", ae.a, nil, nil)
		return v.Doc
	}
	src := source("加入星火", "我在2019年加入了星火公司，负责搜索。", "后来我在杭州住了五年。")
	source("星火公司的搜索", "星火公司的搜索团队很小。")
	var p persona.Persona
	ae.ok("POST", "/v1/personas", ae.a, PersonaRequest{Name: "博客", Sources: []string{src}}, &p)
	var job persona.Job
	ae.ok("POST", "/v1/personas/"+p.ID+"/generate", ae.a, nil, &job)
	if job, err := ae.personas.WaitJob(ctx, job.User, job.Task); err != nil || job.Version != 1 {
		t.Fatalf("generation: %+v %v", job, err)
	}
	var draft repo.VersionInfo
	ae.ok("POST", "/v1/docs", ae.a, CreateRequest{Attrs: flowdoc.Attributes{Title: "我的工作"},
		Body: doc(para("p1", "这一段写我的工作经历。"), para("p2", "下一段写我的爱好。"))}, &draft)

	// asJSON is v's JSON form, to compare the socket's fields with the
	// HTTP API's by name and value.
	asJSON := func(v any) string {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, codec := range codecs {
		t.Run(codec, func(t *testing.T) {
			c := ae.dial(ae.a, codec, nil)
			q := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: draft.Doc, Scope: blockScope("p1"),
				Instruction: "用我的口吻写我在星火公司的经历", Persona: p.ID})
			pin := q.Run.Persona
			if q.Run.Personalization != "persona" || pin == nil || pin.ID != p.ID || pin.Seq != 1 || pin.Version != p.ID+"-v1" ||
				pin.Style == "" || pin.Memory == "" || len(pin.MemoryKeys) == 0 || len(pin.References) != 2 {
				t.Fatalf("queued run's persona %+v", pin)
			}
			// The memory's source: the published version of src, backing
			// every item provided.
			if len(pin.MemorySources) != 1 || pin.MemorySources[0].Doc != src || len(pin.MemorySources[0].Version) != 64 ||
				pin.MemorySources[0].Label == "" || !slices.Equal(pin.MemorySources[0].Items, pin.MemoryKeys) {
				t.Fatalf("memory sources %+v of items %v", pin.MemorySources, pin.MemoryKeys)
			}
			if q.Run.Grounding != nil {
				t.Fatalf("grounding before the run: %+v", q.Run.Grounding)
			}
			if _, err := ae.svc.WaitRun(ctx, q.Run.ID); err != nil {
				t.Fatal(err)
			}
			// assist.cancel answers a finished run as it is.
			run := request[*syncproto.AssistCancelDone](t, c, &syncproto.AssistCancel{Run: q.Run.ID}).Run
			g := run.Grounding
			if run.State != "succeeded" || run.Suggestion == "" || g == nil || !g.Pass || g.Retried ||
				g.MemoryProvided != len(pin.MemoryKeys) || len(g.UsedMemory) != 1 || g.References != 2 {
				t.Fatalf("finished run %s %+v: grounding %+v", run.State, run.Error, g)
			}
			var viaHTTP assistant.Run
			ae.ok("GET", "/v1/runs/"+run.ID, ae.a, nil, &viaHTTP)
			if got, want := asJSON(run.Persona), asJSON(viaHTTP.Personalization.Persona); got != want {
				t.Errorf("persona over the socket:\n%s\nover HTTP:\n%s", got, want)
			}
			if got, want := asJSON(run.Grounding), asJSON(viaHTTP.Grounding); got != want {
				t.Errorf("grounding over the socket:\n%s\nover HTTP:\n%s", got, want)
			}
			pv := request[*syncproto.SuggestionPreviewDone](t, c, &syncproto.SuggestionPreview{Suggestion: run.Suggestion})
			var sg assistant.Suggestion
			ae.ok("GET", "/v1/suggestions/"+run.Suggestion, ae.a, nil, &sg)
			if pv.Suggestion.Closeness == nil || pv.Suggestion.Closeness.Units == 0 ||
				asJSON(pv.Suggestion.Closeness) != asJSON(sg.Closeness) {
				t.Errorf("closeness over the socket %+v, over HTTP %+v", pv.Suggestion.Closeness, sg.Closeness)
			}
		})
	}
	// A run without a persona shows none of it.
	c := ae.dial(ae.a, syncproto.SubprotocolJSON, nil)
	q := request[*syncproto.AssistQueued](t, c, &syncproto.AssistRequest{Doc: draft.Doc, Scope: blockScope("p1"), Instruction: "更简洁"})
	if _, err := ae.svc.WaitRun(ctx, q.Run.ID); err != nil {
		t.Fatal(err)
	}
	run := request[*syncproto.AssistCancelDone](t, c, &syncproto.AssistCancel{Run: q.Run.ID}).Run
	if run.State != "succeeded" || run.Persona != nil || run.Grounding != nil || run.Personalization != "none" {
		t.Fatalf("a run without persona: %+v", run)
	}
	pv := request[*syncproto.SuggestionPreviewDone](t, c, &syncproto.SuggestionPreview{Suggestion: run.Suggestion})
	if pv.Suggestion.Closeness != nil {
		t.Errorf("closeness without persona: %+v", pv.Suggestion.Closeness)
	}
}
