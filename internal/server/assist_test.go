package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/internal/task"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/content"
	"github.com/foliodev/folio/persona/index"
)

// assistEnv is a server with the writing assistant on the offline local
// provider (the embedded default), and two authors.
type assistEnv struct {
	*env
	runner   *task.Runner
	svc      *assistant.Service
	personas *persona.Service // with assistOpts.personas
	a, b     string           // tokens of author-a and author-b
}

type assistOpts struct {
	noStart   bool // leave the runner stopped: runs stay queued
	maxStream time.Duration
	switches  *config.Assistant
	realSync  bool // mount the WebSocket sync server (default: a fake)
	// writing, when set, wraps the writing category's provider, and every
	// category runs without quota limits (benchmarks).
	writing func(llm.Provider) llm.Provider
	// messagesPerSecond, when set, is the sync connections' rate limit.
	messagesPerSecond float64
	// personas mounts the persona service (every component on) with its
	// memory index, generation task and /v1/personas, as the daemon does.
	personas bool
}

func newAssistEnv(t testing.TB, o assistOpts) *assistEnv {
	t.Helper()
	ae := &assistEnv{}
	ae.env = newEnv(t, func(cfg *Config) {
		r := repoOf(cfg)
		runner, err := task.Open(r.DB(), task.Options{Hub: r.Hub()})
		if err != nil {
			t.Fatal(err)
		}
		fc := config.Default()
		if o.switches != nil {
			fc.Assistant = *o.switches
		}
		ledger := quota.NewLedger(r.DB(), quota.LedgerOptions{})
		gw, err := assistant.Open(fc, r.DB(), ledger, nil)
		if err != nil {
			t.Fatal(err)
		}
		if o.writing != nil {
			routes := map[quota.Category]assistant.Route{}
			for _, c := range quota.Categories {
				rs, err := fc.AICategory(string(c))
				if err != nil {
					t.Fatal(err)
				}
				p, err := assistant.NewProvider(rs)
				if err != nil {
					t.Fatal(err)
				}
				if c == quota.Writing {
					p = o.writing(p)
				}
				routes[c] = assistant.Route{Provider: p, Policy: quota.NewPolicy(r.DB(), c, quota.Limits{}, nil),
					Source: string(rs.Source), MaxOutputTokens: rs.MaxOutputTokens, Settings: rs}
			}
			gw = assistant.New(routes, ledger, nil)
		}
		opts := assistant.Options{Repo: r, Runner: runner, Gateway: gw, Ledger: ledger, Switches: fc.Assistant}
		var idx *index.Index
		var src *content.Sources
		if o.personas {
			idx, err = index.Open(context.Background(), r.DB(), filepath.Join(t.TempDir(), "index"), persona.IndexSource(), index.Options{Manual: true})
			if err != nil {
				t.Fatal(err)
			}
			src = content.New(r, nil)
			ae.personas = persona.New(r.DB(), idx, persona.Switches{Enabled: true, Style: true, Learning: true, Memory: true}, persona.Options{})
			opts.Personas, opts.References = ae.personas, src
			cfg.Personas, cfg.PersonaSources, cfg.MemoryIndex = ae.personas, src, idx
		}
		svc, err := assistant.NewService(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if o.personas {
			ae.personas.Register(runner, src, svc.LearningReader(), task.KindOptions{})
		}
		if !o.noStart {
			if err := runner.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			runner.Close(ctx)
			if idx != nil {
				idx.Close(ctx)
			}
		})
		cfg.Assistant, cfg.MaxStream = svc, o.maxStream
		if o.realSync {
			cfg.NewSync = nil
		}
		if o.messagesPerSecond > 0 {
			cfg.MessagesPerSecond = o.messagesPerSecond
		}
		ae.runner, ae.svc = runner, svc
	})
	ae.a, ae.b = ae.addAuthor("author-a"), ae.addAuthor("author-b")
	return ae
}

// article creates a document of token's with paragraphs p1, p2 that the
// editing rules have something to do on.
func (ae *assistEnv) article(token string) string {
	ae.t.Helper()
	var v repo.VersionInfo
	ae.ok("POST", "/v1/docs", token, CreateRequest{Attrs: flowdoc.Attributes{Title: "Notes"},
		Body: doc(para("p1", "In order to win, the team made a decision."), para("p2", "We basically need to cut the filler."))}, &v)
	return v.Doc
}

// ask makes an editing-preset request on block of doc and returns its run.
func (ae *assistEnv) ask(token, doc, block string) assistant.Queued {
	ae.t.Helper()
	var q assistant.Queued
	ae.ok("POST", "/v1/docs/"+doc+"/assist", token, AssistRequest{Scope: assistant.Scope{Kind: assistant.ScopeBlock, Block: block},
		EditingPreset: "six-rules"}, &q)
	return q
}

// sse reads a run's event stream to its end (or until stop returns true)
// and returns the events and the response's status.
func (ae *assistEnv) sse(token, run string, lastID string, stop func(RunEventView) bool) ([]RunEventView, int) {
	ae.t.Helper()
	req, _ := http.NewRequest("GET", ae.ts.URL+"/v1/runs/"+run+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ae.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		ae.t.Fatalf("stream content type %q", ct)
	}
	var out []RunEventView
	sc := bufio.NewScanner(resp.Body)
	var id, typ string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var ev RunEventView
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				ae.t.Fatalf("event data %q: %v", line, err)
			}
			if id == "" || typ != ev.Type || id != jsonNumber(ev.Seq) {
				ae.t.Fatalf("event id %q type %q, data %+v", id, typ, ev)
			}
			out = append(out, ev)
			id, typ = "", ""
			if stop != nil && stop(ev) {
				return out, 200
			}
		}
	}
	return out, 200
}

func jsonNumber(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func types(evs []RunEventView) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// An author's whole round over HTTP: request, stream, run, preview,
// accept, explain; a repeated key answers the first run.
func TestAssistOverHTTP(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	var q assistant.Queued
	st, data := ae.call("POST", "/v1/docs/"+doc+"/assist", ae.a, AssistRequest{Scope: assistant.Scope{Kind: assistant.ScopeBlock, Block: "p1"},
		EditingPreset: "six-rules", IdempotencyKey: "k-1"})
	if st != http.StatusAccepted || json.Unmarshal(data, &q) != nil || !q.Created || q.Run.State != assistant.RunQueued {
		t.Fatalf("assist: %d %s", st, data)
	}
	if q.Run.Instruction != assistant.DefaultEditingInstructionEN || q.Run.Personalization.Preset == nil || q.Run.Personalization.Preset.ID != "six-rules" {
		t.Fatalf("run %+v", q.Run)
	}
	evs, _ := ae.sse(ae.a, q.Run.ID, "", nil)
	got := types(evs)
	if len(got) < 3 || got[0] != "queued" || got[1] != "started" || got[len(got)-1] != "succeeded" {
		t.Fatalf("stream %v", got)
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) || ev.Data.Run != q.Run.ID {
			t.Fatalf("event %d: %+v", i, ev)
		}
	}
	last := evs[len(evs)-1].Data
	if last.Outcome != assistant.OutcomeSuggestion || last.Suggestion == "" {
		t.Fatalf("final event %+v", last)
	}

	// The same key: the first run, as it stands now, and 200.
	var again assistant.Queued
	st, data = ae.call("POST", "/v1/docs/"+doc+"/assist", ae.a, AssistRequest{Scope: assistant.Scope{Kind: assistant.ScopeBlock, Block: "p1"},
		EditingPreset: "six-rules", IdempotencyKey: "k-1"})
	if st != 200 || json.Unmarshal(data, &again) != nil || again.Created || again.Run.ID != q.Run.ID || again.Run.State != assistant.RunSucceeded {
		t.Fatalf("repeat: %d %s", st, data)
	}

	var page RunEventsPage
	ae.ok("GET", "/v1/runs/"+q.Run.ID+"/events?after=1&limit=1", ae.a, nil, &page)
	if len(page.Events) != 1 || page.Events[0].Seq != 2 || !page.More || page.State != assistant.RunSucceeded {
		t.Fatalf("events page %+v", page)
	}

	var pv assistant.Preview
	ae.ok("GET", "/v1/suggestions/"+last.Suggestion+"/preview", ae.a, nil, &pv)
	if !pv.Current || pv.Suggestion.Status != assistant.StatusPending || len(pv.Changes) != 1 || pv.Changes[0].BlockID != "p1" {
		t.Fatalf("preview %+v", pv)
	}
	var acc assistant.Accepted
	ae.ok("POST", "/v1/suggestions/"+last.Suggestion+"/accept", ae.a, nil, &acc)
	if acc.Version.Label != "v1.r1" || acc.Version.Kind != "accept_suggestion" || acc.Suggestion.Status != assistant.StatusAccepted {
		t.Fatalf("accept %+v", acc)
	}
	// A repeated accept answers the first result.
	var acc2 assistant.Accepted
	ae.ok("POST", "/v1/suggestions/"+last.Suggestion+"/accept", ae.a, nil, &acc2)
	if acc2.Version.Hash != acc.Version.Hash {
		t.Fatalf("second accept made %s", acc2.Version.Label)
	}
	var ex assistant.Explanation
	ae.ok("GET", "/v1/docs/"+doc+"/versions/v1.r1/explain", ae.a, nil, &ex)
	if ex.ByHand || ex.Suggestion == nil || ex.Suggestion.ID != last.Suggestion || ex.Run == nil || ex.Run.ID != q.Run.ID ||
		ex.Task == nil || len(ex.Usage) != 1 || len(ex.Messages) != 2 {
		t.Fatalf("explain %+v", ex)
	}
	ae.ok("GET", "/v1/docs/"+doc+"/versions/v1.r0/explain", ae.a, nil, &ex)
	if !ex.ByHand || !strings.Contains(ex.Note, "made by hand") {
		t.Fatalf("explain v1.r0 %+v", ex)
	}

	var ss []assistant.Session
	ae.ok("GET", "/v1/docs/"+doc+"/sessions", ae.a, nil, &ss)
	if len(ss) != 1 || ss[0].ID != q.Session.ID || ss[0].Messages != 2 {
		t.Fatalf("sessions %+v", ss)
	}
	var ms []assistant.MessagePreview
	ae.ok("GET", "/v1/sessions/"+q.Session.ID+"/messages", ae.a, nil, &ms)
	if len(ms) != 2 || ms[0].Source.Text != "In order to win, the team made a decision." || ms[1].Status != assistant.StatusAccepted {
		t.Fatalf("messages %+v", ms)
	}
	var src assistant.MessageSource
	ae.ok("GET", "/v1/sessions/"+q.Session.ID+"/messages/1", ae.a, nil, &src)
	if src.Text != "In order to win, the team made a decision." || src.Message.Label != "v1.r0" {
		t.Fatalf("source %+v", src)
	}
	var started assistant.Session
	ae.ok("POST", "/v1/docs/"+doc+"/sessions", ae.a, SessionRequest{Title: "second"}, &started)
	ae.ok("GET", "/v1/docs/"+doc+"/sessions", ae.a, nil, &ss)
	if len(ss) != 2 || ss[0].ID != started.ID {
		t.Fatalf("after start: %+v", ss)
	}
	ae.ok("POST", "/v1/docs/"+doc+"/sessions/"+q.Session.ID+"/switch", ae.a, nil, nil)
	ae.ok("GET", "/v1/docs/"+doc+"/sessions", ae.a, nil, &ss)
	if ss[0].ID != q.Session.ID {
		t.Fatalf("after switch: %+v", ss)
	}
}

// Personalization is exclusive at the HTTP entry too: two of persona,
// writing preset and editing preset are refused with
// personalization_conflict before anything is written.
func TestAssistHTTPPersonalizationConflict(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	scope := assistant.Scope{Kind: assistant.ScopeBlock, Block: "p1"}
	for _, req := range []AssistRequest{
		{Scope: scope, Instruction: "x", WritingPreset: "clear-concise", EditingPreset: "six-rules"},
		{Scope: scope, Instruction: "x", Persona: "p1", EditingPreset: "six-rules"},
		{Scope: scope, Instruction: "x", Persona: "p1", WritingPreset: "clear-concise"},
		{Scope: scope, Instruction: "x", Persona: "p1", WritingPreset: "clear-concise", EditingPreset: "six-rules"},
	} {
		ae.wantErr("POST", "/v1/docs/"+doc+"/assist", ae.a, req, 400, assistant.CodePersonalizationConflict)
	}
	ae.wantErr("POST", "/v1/docs/"+doc+"/assist", ae.a, AssistRequest{Scope: scope, Instruction: "x", Persona: "p1"}, 403, assistant.CodePersonaUnavailable)
	var ss []assistant.Session
	ae.ok("GET", "/v1/docs/"+doc+"/sessions", ae.a, nil, &ss)
	if len(ss) != 0 {
		t.Fatalf("refused requests left sessions %+v", ss)
	}
	var log []repo.VersionInfo
	ae.ok("GET", "/v1/docs/"+doc+"/log", ae.a, nil, &log)
	if len(log) != 1 {
		t.Fatalf("refused requests left versions %+v", log)
	}
	// Unknown fields are refused, not ignored.
	ae.wantErr("POST", "/v1/docs/"+doc+"/assist", ae.a, `{"scope":{"kind":"block","block":"p1"},"instruction":"x","preset":"six-rules"}`, 400, "invalid")
}

// Another user's run, suggestion and session are answered exactly like
// missing ones, on every endpoint; the owner's backup token reads but
// does not change; admins reach everything.
func TestAssistOthersLookMissing(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	q := ae.ask(ae.a, doc, "p1")
	run, err := ae.svc.WaitRun(context.Background(), q.Run.ID)
	if err != nil || run.Suggestion == "" {
		t.Fatalf("run %+v %v", run, err)
	}
	sg, ss := run.Suggestion, q.Session.ID
	ghost := map[string]string{run.ID: "rzzzzzzzzzzzzzzzz", sg: "szzzzzzzzzzzzzzzz", ss: "czzzzzzzzzzzzzzzz"}
	type probe struct{ method, path, real string }
	probes := []probe{
		{"GET", "/v1/runs/%s", run.ID}, {"POST", "/v1/runs/%s/cancel", run.ID}, {"GET", "/v1/runs/%s/events", run.ID},
		{"GET", "/v1/runs/%s/stream", run.ID},
		{"GET", "/v1/suggestions/%s", sg}, {"GET", "/v1/suggestions/%s/preview", sg},
		{"POST", "/v1/suggestions/%s/accept", sg}, {"POST", "/v1/suggestions/%s/reject", sg},
		{"GET", "/v1/sessions/%s", ss}, {"GET", "/v1/sessions/%s/messages", ss}, {"GET", "/v1/sessions/%s/messages/1", ss},
		{"POST", "/v1/docs/" + doc + "/sessions/%s/switch", ss},
	}
	check := func(who, token string) {
		t.Helper()
		for _, p := range probes {
			path := strings.Replace(p.method+" "+p.path, "%s", p.real, 1)
			stOther, bodyOther := ae.call(p.method, strings.Replace(p.path, "%s", p.real, 1), token, nil)
			stGhost, bodyGhost := ae.call(p.method, strings.Replace(p.path, "%s", ghost[p.real], 1), token, nil)
			if strings.Contains(p.path, "/docs/") && who == "author-b" {
				// The document itself is another user's: missing too.
				if stOther != 404 || errOf(t, bodyOther).What != "document" {
					t.Errorf("%s %s: %d %s", who, path, stOther, bodyOther)
				}
				continue
			}
			if stOther != 404 || stGhost != 404 || !bytes.Equal(bodyOther, bytes.ReplaceAll(bodyGhost, []byte(ghost[p.real]), []byte(p.real))) {
				t.Errorf("%s %s:\nreal:    %d %s\nmissing: %d %s", who, path, stOther, bodyOther, stGhost, bodyGhost)
			}
		}
	}
	check("author-b", ae.b)

	// The owner's read-only token reads, and changes nothing.
	tok, err := ae.auth.AddToken(context.Background(), "author-a", "backup")
	if err != nil {
		t.Fatal(err)
	}
	ae.ok("GET", "/v1/runs/"+run.ID, tok.Secret, nil, nil)
	ae.ok("GET", "/v1/suggestions/"+sg+"/preview", tok.Secret, nil, nil)
	ae.wantErr("POST", "/v1/suggestions/"+sg+"/accept", tok.Secret, nil, 403, "read_only")
	ae.wantErr("POST", "/v1/docs/"+doc+"/assist", tok.Secret, AssistRequest{Scope: assistant.Scope{Kind: assistant.ScopeDocument}, Instruction: "x"}, 403, "read_only")

	// An admin reaches the author's run and suggestion (sessions stay
	// their creator's).
	ae.ok("GET", "/v1/runs/"+run.ID, ae.admin, nil, nil)
	ae.ok("GET", "/v1/suggestions/"+sg, ae.admin, nil, nil)

	// Once the document is author-b's, author-a's own run, suggestion
	// and session are missing to author-a.
	ae.ok("PUT", "/v1/docs/"+doc+"/owner", ae.admin, ChownRequest{User: "author-b"}, nil)
	probes = probes[:len(probes)-1] // the switch endpoint names the document
	check("author-a", ae.a)
	// And author-b reaches the suggestion on what is now their document.
	ae.ok("GET", "/v1/suggestions/"+sg, ae.b, nil, nil)
}

// docStreamHas reports whether doc's stream has an event of type typ
// about suggestion id after cursor.
func (ae *assistEnv) docStreamHas(doc string, after uint64, typ, id string) bool {
	ae.t.Helper()
	evs, err := stream.Read(ae.repo.DB(), repo.Stream(doc), after, 0)
	if err != nil {
		ae.t.Fatal(err)
	}
	for _, ev := range evs {
		var se assistant.SuggestionEvent
		if ev.Type == typ && kv.Unmarshal(ev.Data, &se) == nil && se.ID == id {
			return true
		}
	}
	return false
}

// A pending suggestion is conflicted at once by an HTTP draft save that
// changes its anchor block and by a restore, and the event is in the
// document's stream.
func TestAssistLiveInvalidationHTTP(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	doc := ae.article(ae.a)
	pending := func(block string) string {
		t.Helper()
		q := ae.ask(ae.a, doc, block)
		run, err := ae.svc.WaitRun(context.Background(), q.Run.ID)
		if err != nil || run.Suggestion == "" {
			t.Fatalf("run %+v %v", run, err)
		}
		return run.Suggestion
	}
	status := func(id string) assistant.Suggestion {
		t.Helper()
		var sg assistant.Suggestion
		ae.ok("GET", "/v1/suggestions/"+id, ae.a, nil, &sg)
		return sg
	}

	sg := pending("p1")
	cursor, _ := stream.Last(ae.repo.DB(), repo.Stream(doc))
	var dr repo.Draft
	ae.ok("GET", "/v1/docs/"+doc+"/draft", ae.a, nil, &dr)
	edit := para("p1", "In order to win, the whole team made a decision.")
	ae.ok("POST", "/v1/docs/"+doc+"/draft", ae.a, SaveRequest{BaseSeq: dr.Seq, Changes: []repo.DraftChange{{Op: repo.ChangeUpsert, Block: &edit}}}, nil)
	if got := status(sg); got.Status != assistant.StatusConflicted || got.Conflict == nil || got.Conflict.By != "draft" {
		t.Fatalf("after an HTTP save: %+v", got)
	}
	if !ae.docStreamHas(doc, cursor, assistant.EventSuggestionConflicted, sg) {
		t.Fatal("no suggestion.conflicted event in the document's stream after the save")
	}
	ae.wantErr("POST", "/v1/suggestions/"+sg+"/accept", ae.a, nil, 409, assistant.CodeSuggestionConflicted)

	// A save elsewhere leaves a block suggestion pending (no event), its
	// preview shows the current draft, and its accept is carried over.
	carried := pending("p2")
	cursor, _ = stream.Last(ae.repo.DB(), repo.Stream(doc))
	ae.ok("GET", "/v1/docs/"+doc+"/draft", ae.a, nil, &dr)
	elsewhere := para("p1", "In order to win, we all made a decision together.")
	ae.ok("POST", "/v1/docs/"+doc+"/draft", ae.a, SaveRequest{BaseSeq: dr.Seq, Changes: []repo.DraftChange{{Op: repo.ChangeUpsert, Block: &elsewhere}}}, nil)
	if got := status(carried); got.Status != assistant.StatusPending {
		t.Fatalf("a save elsewhere conflicted the suggestion: %+v", got.Conflict)
	}
	if ae.docStreamHas(doc, cursor, assistant.EventSuggestionConflicted, carried) {
		t.Fatal("suggestion.conflicted fired for a save elsewhere")
	}
	var pv assistant.Preview
	ae.ok("GET", "/v1/suggestions/"+carried+"/preview", ae.a, nil, &pv)
	if !pv.Current || !pv.CarriedOver || flowdoc.PlainText(pv.Candidate.Blocks[0].RichText) != "In order to win, we all made a decision together." {
		t.Fatalf("preview after a save elsewhere: current %v carried %v", pv.Current, pv.CarriedOver)
	}
	var acc assistant.Accepted
	ae.ok("POST", "/v1/suggestions/"+carried+"/accept", ae.a, nil, &acc)
	if acc.Suggestion.Carried == nil || acc.Suggestion.Carried.From.Label != "v1.r1" {
		t.Fatalf("the accept after a save elsewhere: carried %+v", acc.Suggestion.Carried)
	}

	// A restore that changes a suggestion's block conflicts it.
	sg = pending("p1")
	cursor, _ = stream.Last(ae.repo.DB(), repo.Stream(doc))
	ae.ok("POST", "/v1/docs/"+doc+"/restore", ae.a, RestoreRequest{Label: "v1.r0"}, nil)
	if got := status(sg); got.Status != assistant.StatusConflicted {
		t.Fatalf("after a restore: %+v", got)
	}
	if !ae.docStreamHas(doc, cursor, assistant.EventSuggestionConflicted, sg) {
		t.Fatal("no suggestion.conflicted event in the document's stream after the restore")
	}
}

// The event stream is resumable: a stream the daemon ends early (its time
// limit) is picked up with Last-Event-ID without a gap or a repeat, and a
// shutdown ends an open stream.
func TestRunStreamResumes(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{noStart: true, maxStream: 300 * time.Millisecond})
	doc := ae.article(ae.a)
	q := ae.ask(ae.a, doc, "p1")
	// The runner is stopped: the run stays queued, and the stream ends at
	// its time limit after the one event there is.
	evs, st := ae.sse(ae.a, q.Run.ID, "", nil)
	if st != 200 || len(evs) != 1 || evs[0].Type != "queued" {
		t.Fatalf("first stream: %d %v", st, types(evs))
	}
	if err := ae.runner.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := ae.svc.WaitRun(context.Background(), q.Run.ID); err != nil {
		t.Fatal(err)
	}
	evs, _ = ae.sse(ae.a, q.Run.ID, "1", nil)
	if len(evs) < 2 || evs[0].Seq != 2 || evs[len(evs)-1].Type != "succeeded" {
		t.Fatalf("resumed stream: %v", types(evs))
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq != evs[i-1].Seq+1 {
			t.Fatalf("gap or repeat: %+v", evs)
		}
	}
	// ?after works as Last-Event-ID does; a bad Last-Event-ID is invalid.
	var page RunEventsPage
	ae.ok("GET", "/v1/runs/"+q.Run.ID+"/events?after=2", ae.a, nil, &page)
	if len(page.Events) != len(evs)-1 || page.More {
		t.Fatalf("page after 2: %+v", page)
	}
	req, _ := http.NewRequest("GET", ae.ts.URL+"/v1/runs/"+q.Run.ID+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+ae.a)
	req.Header.Set("Last-Event-ID", "x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("bad Last-Event-ID: %d", resp.StatusCode)
	}
}

// A shutdown ends the event streams that are open (they would otherwise
// hold it up until its deadline).
func TestRunStreamEndsOnShutdown(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{noStart: true})
	doc := ae.article(ae.a)
	q := ae.ask(ae.a, doc, "p1")
	got := make(chan []RunEventView, 1)
	go func() {
		evs, _ := ae.sse(ae.a, q.Run.ID, "", nil)
		got <- evs
	}()
	// Wait until the stream is open: the handler is counted as busy.
	for ae.srv.Busy() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ae.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with an open stream: %v", err)
	}
	if evs := <-got; len(evs) != 1 || evs[0].Type != "queued" {
		t.Fatalf("stream before shutdown: %v", types(evs))
	}
	if n := ae.srv.Busy(); n != 0 {
		t.Fatalf("%d handlers still running after shutdown", n)
	}
}

// Presets: the selector lists no prompt text; admins create, edit (a new
// version), copy, reorder, archive, restore and read prompts; authors may
// not.
func TestPresetEndpoints(t *testing.T) {
	ae := newAssistEnv(t, assistOpts{})
	st, body := ae.call("GET", "/v1/presets", ae.a, nil)
	if st != 200 || bytes.Contains(body, []byte(`"prompt"`)) {
		t.Fatalf("selector: %d %s", st, body)
	}
	var ps []assistant.Preset
	ae.ok("GET", "/v1/presets?type=editing", ae.a, nil, &ps)
	if len(ps) != 1 || ps[0].ID != "six-rules" {
		t.Fatalf("editing presets %+v", ps)
	}
	ae.wantErr("GET", "/v1/presets?type=poetry", ae.a, nil, 400, "invalid")

	in := assistant.PresetInput{Type: assistant.WritingPreset, Name: "短句", Description: "short sentences", Prompt: "Use short sentences."}
	ae.wantErr("POST", "/v1/admin/presets", ae.a, in, 403, "forbidden")
	ae.wantErr("GET", "/v1/admin/presets/six-rules", ae.a, nil, 403, "forbidden")
	var p assistant.Preset
	ae.ok("POST", "/v1/admin/presets", ae.admin, in, &p)
	if p.Version.Number != 1 || p.Type != assistant.WritingPreset {
		t.Fatalf("created %+v", p)
	}
	ae.ok("POST", "/v1/admin/presets/"+p.ID+"/versions", ae.admin, assistant.PresetInput{Prompt: "Use very short sentences."}, &p)
	if p.Version.Number != 2 {
		t.Fatalf("edited %+v", p)
	}
	var d assistant.PresetDetail
	ae.ok("GET", "/v1/admin/presets/"+p.ID, ae.admin, nil, &d)
	if d.Current.Prompt != "Use very short sentences." || len(d.Versions) != 2 {
		t.Fatalf("detail %+v", d)
	}
	var v1 assistant.PresetVersion
	ae.ok("GET", "/v1/admin/presets/"+p.ID+"/versions/1", ae.admin, nil, &v1)
	if v1.Prompt != "Use short sentences." {
		t.Fatalf("version 1 %+v", v1)
	}
	var cp assistant.Preset
	st, body = ae.call("POST", "/v1/admin/presets/"+p.ID+"/copy", ae.admin, CopyPresetRequest{Name: "copy"})
	if st != 201 || json.Unmarshal(body, &cp) != nil || cp.ID == p.ID || cp.Name != "copy" {
		t.Fatalf("copy: %d %s", st, body)
	}
	ae.ok("POST", "/v1/admin/presets/order", ae.admin, ReorderRequest{Type: assistant.WritingPreset, IDs: []string{cp.ID, p.ID}}, &ps)
	if ps[0].ID != cp.ID || ps[1].ID != p.ID {
		t.Fatalf("order %v, %v", ps[0].ID, ps[1].ID)
	}
	ae.ok("POST", "/v1/admin/presets/"+p.ID+"/archive", ae.admin, nil, &p)
	ae.ok("GET", "/v1/presets?type=writing", ae.a, nil, &ps)
	for _, x := range ps {
		if x.ID == p.ID {
			t.Fatal("an archived preset is in the selector")
		}
	}
	doc := ae.article(ae.a)
	ae.wantErr("POST", "/v1/docs/"+doc+"/assist", ae.a, AssistRequest{Scope: assistant.Scope{Kind: assistant.ScopeDocument},
		Instruction: "x", WritingPreset: p.ID}, 400, assistant.CodePresetArchived)
	ae.ok("GET", "/v1/admin/presets/"+p.ID+"/versions/2", ae.admin, nil, nil) // archived versions stay readable
	var restored assistant.Preset
	ae.ok("POST", "/v1/admin/presets/"+p.ID+"/restore", ae.admin, nil, &restored)
	if restored.Archived || restored.ID != p.ID {
		t.Fatalf("restored %+v", restored)
	}
}

// Without the service, and with its switch off, assist answers
// assistant_disabled; documents keep working.
func TestAssistDisabled(t *testing.T) {
	e := newEnv(t, nil)
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{Attrs: flowdoc.Attributes{Title: "t"}, Body: doc(para("p1", "x"))}, &v)
	e.wantErr("POST", "/v1/docs/"+v.Doc+"/assist", e.admin, AssistRequest{Scope: assistant.Scope{Kind: assistant.ScopeDocument}, Instruction: "x"}, 403, assistant.CodeDisabled)
	e.wantErr("GET", "/v1/presets", e.admin, nil, 403, assistant.CodeDisabled)

	off := config.Assistant{}
	ae := newAssistEnv(t, assistOpts{switches: &off})
	d := ae.article(ae.a)
	ae.wantErr("POST", "/v1/docs/"+d+"/assist", ae.a, AssistRequest{Scope: assistant.Scope{Kind: assistant.ScopeBlock, Block: "p1"},
		EditingPreset: "six-rules"}, 403, assistant.CodeDisabled)
	ae.ok("POST", "/v1/docs/"+d+"/restore", ae.a, RestoreRequest{Label: "v1.r0"}, nil)
}
