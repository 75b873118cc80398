package assistant

import (
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// nothingWritten asserts a refused request left no trace: no checkpoint
// of the unsealed draft, no session, no run.
func nothingWritten(t *testing.T, w *world, doc string) {
	t.Helper()
	info, err := w.repo.GetDoc(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if info.Head != "v1.r0" || !info.Unsealed {
		t.Fatalf("a refused request sealed the draft: head %s unsealed %v", info.Head, info.Unsealed)
	}
	if ss, _ := w.svc.Sessions(ctx, authorA, doc); len(ss) != 0 {
		t.Fatalf("a refused request wrote a session: %+v", ss)
	}
	if keys, _ := kv.Keys(w.db, kv.TableKey(tableRun, ""), 0); len(keys) != 0 {
		t.Fatalf("a refused request wrote %d runs", len(keys))
	}
}

// Persona, writing preset and editing preset are mutually exclusive in
// the service, so every transport inherits the refusal.
func TestPersonalizationIsExclusive(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	w.save(doc, para("p1", "unsealed typing"))
	base := AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"}
	combos := []struct{ persona, writing, editing string }{
		{"me", "clear-concise", ""},
		{"me", "", "six-rules"},
		{"", "clear-concise", "six-rules"},
		{"me", "clear-concise", "six-rules"},
	}
	for _, c := range combos {
		req := base
		req.Persona, req.WritingPreset, req.EditingPreset = c.persona, c.writing, c.editing
		_, err := w.svc.Assist(ctx, authorA, req)
		if codeOf(err) != CodePersonalizationConflict || errs.KindOf(err) != errs.Invalid {
			t.Fatalf("%+v: %v (code %q), want personalization_conflict", c, err, codeOf(err))
		}
		if !strings.Contains(err.Error(), "one of persona, writing preset and editing preset") {
			t.Fatalf("the message must say what to do: %v", err)
		}
	}
	req := base
	req.Persona = "me"
	if _, err := w.svc.Assist(ctx, authorA, req); codeOf(err) != CodePersonaUnavailable {
		t.Fatalf("persona alone: %v, want persona_unavailable", err)
	}
	req = base
	req.WritingPreset = "six-rules"
	if _, err := w.svc.Assist(ctx, authorA, req); errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), "editing preset") {
		t.Fatalf("an editing preset passed as a writing preset: %v", err)
	}
	nothingWritten(t, w, doc)
}

func TestEditingPresetGetsTheDefaultInstruction(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	_, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, EditingPreset: "six-rules"})
	// The article is English: the default instruction is too.
	if run.Instruction != DefaultEditingInstructionEN || !run.DefaultInstruction {
		t.Fatalf("instruction %q (default %v)", run.Instruction, run.DefaultInstruction)
	}
	pin := run.Personalization.Preset
	if run.Personalization.Kind != PersonalizeEditing || pin == nil || pin.ID != "six-rules" || pin.Number != 1 || pin.VersionID == "" {
		t.Fatalf("personalization %+v", run.Personalization)
	}
	// The model saw the instruction and the preset's six rules.
	reqs := w.model.requests()
	all := ""
	for _, m := range reqs[len(reqs)-1].Messages {
		all += m.Content + "\n"
	}
	for _, want := range []string{DefaultEditingInstructionEN, "六条文章强化规则", "2. 用有力的动词：", "6. 保留事实、观点和作者声音："} {
		if !strings.Contains(all, want) {
			t.Fatalf("the prompt lacks %q", want)
		}
	}
	// Without a preset, an empty instruction is refused.
	if _, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}}); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("empty instruction without an editing preset: %v", err)
	}
	if _, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, WritingPreset: "clear-concise"}); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("empty instruction with a writing preset: %v", err)
	}
}

// Bad scopes and instructions are refused before anything is sealed.
func TestBadRequestsWriteNothing(t *testing.T) {
	w := newWorld(t)
	doc := w.article(3, true)
	w.save(doc, para("p2", "typing"))
	long := strings.Repeat("字", maxInstruction+1)
	for _, req := range []AssistRequest{
		{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "nope"}, Instruction: "x"},
		{Doc: doc, Scope: Scope{Kind: ScopeSelection, Block: "c1", Start: 0, End: 2}, Instruction: "x"},
		{Doc: doc, Scope: Scope{Kind: ScopeSelection, Block: "p1", Start: 3, End: 3}, Instruction: "x"},
		{Doc: doc, Scope: Scope{Kind: ScopeSelection, Block: "p1", Start: 0, End: 500}, Instruction: "x"},
		{Doc: doc, Scope: Scope{Kind: ScopeSection, From: "p3", To: "p1"}, Instruction: "x"},
		{Doc: doc, Scope: Scope{Kind: "chapter"}, Instruction: "x"},
		{Doc: doc, Scope: Scope{Kind: ScopeDocument}, Instruction: long},
		{Doc: doc, Scope: Scope{Kind: ScopeDocument}, Instruction: "x", IdempotencyKey: "bad key"},
	} {
		_, err := w.svc.Assist(ctx, authorA, req)
		if k := errs.KindOf(err); k != errs.Invalid {
			t.Fatalf("%+v: %v (kind %v), want invalid", req.Scope, err, k)
		}
	}
	if _, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: "missing", Scope: Scope{Kind: ScopeDocument}, Instruction: "x"}); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("missing document: %v", err)
	}
	nothingWritten(t, w, doc)
}

// An unsealed draft is sealed as a checkpoint with reason ai, and the run
// is made against that version.
func TestRequestSealsTheDraftFirst(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	w.save(doc, para("p1", "typed before asking"))
	q, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
	if q.Checkpoint == nil || q.Checkpoint.Label != "v1.r1" || q.Checkpoint.Reason != objstore.ReasonAI {
		t.Fatalf("checkpoint %+v, want v1.r1 reason ai", q.Checkpoint)
	}
	if run.Base.Label != "v1.r1" || q.Message.Label != "v1.r1" || q.Message.Scope != run.Scope {
		t.Fatalf("run base %s, message %s %+v", run.Base.Label, q.Message.Label, q.Message.Scope)
	}
	sg := w.suggestion(run.Suggestion)
	if !strings.Contains(string(mustJSON(sg.Ops)), "typed before asking (edited)") {
		t.Fatalf("the suggestion was made against the old text: %s", mustJSON(sg.Ops))
	}
	// Nothing unsealed: the next request seals nothing.
	q2, _ := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "shorter"})
	if q2.Checkpoint != nil {
		t.Fatalf("sealed again: %+v", q2.Checkpoint)
	}
}

func TestIdempotentRequestReturnsTheFirstRun(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	req := AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter", IdempotencyKey: "req-1"}
	q1, run := w.assist(req)
	q2, err := w.svc.Assist(ctx, authorA, req)
	if err != nil {
		t.Fatal(err)
	}
	if q2.Created || q2.Run.ID != q1.Run.ID || q2.Run.State != RunSucceeded || q2.Message.Seq != q1.Message.Seq {
		t.Fatalf("retry gave run %s (created %v), want %s", q2.Run.ID, q2.Created, run.ID)
	}
	if n := len(w.model.requests()); n != 1 {
		t.Fatalf("the model was asked %d times", n)
	}
	ss, _ := w.svc.Sessions(ctx, authorA, doc)
	if ss[0].Messages != 2 {
		t.Fatalf("session has %d messages, want the user's and the assistant's", ss[0].Messages)
	}
}

// The writing quota is checked when the request is made: a spent budget
// refuses at once with its own code, before anything is written.
func TestRequestRefusedByTheWritingQuota(t *testing.T) {
	w := newWorld(t, func(o *worldOptions) { o.limits = quota.Limits{DailyTokens: 100} })
	doc := w.article(2, false)
	w.save(doc, para("p1", "typing"))
	_, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
	if codeOf(err) != "writing_token_budget_exhausted" || errs.KindOf(err) != errs.RateLimited || errs.Retryable(err) {
		t.Fatalf("err %v code %q retryable %v", err, codeOf(err), errs.Retryable(err))
	}
	nothingWritten(t, w, doc)
}

// With every switch off every request answers assistant_disabled, while
// editing, checkpoints, history, restore and existing suggestions work.
func TestSwitchesOffKeepEverythingElseWorking(t *testing.T) {
	dir := t.TempDir()
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	on := newWorld(t, func(o *worldOptions) { o.dir = dir })
	doc := on.article(3, false)
	pending := on.suggest(doc, Scope{Kind: ScopeBlock, Block: "p3"})
	on.close()

	w := newWorld(t, func(o *worldOptions) { o.dir = dir; o.switches = config.Assistant{} })
	for _, sc := range []Scope{{Kind: ScopeDocument}, {Kind: ScopeBlock, Block: "p1"},
		{Kind: ScopeSelection, Block: "p1", Start: 0, End: 2}, {Kind: ScopeSection, From: "p1", To: "p2"}} {
		_, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: sc, Instruction: "x"})
		if codeOf(err) != CodeDisabled || errs.KindOf(err) != errs.Disabled {
			t.Fatalf("%s with everything off: %v", sc, err)
		}
	}
	// Editing, checkpoints, history and restore.
	w.save(doc, para("p3", "edited with the assistant off"))
	v, sealed, err := w.repo.Checkpoint(ctx, doc, objstore.ReasonManual, "author-a", "")
	if err != nil || !sealed {
		t.Fatalf("checkpoint: %v %v", sealed, err)
	}
	if log, err := w.repo.Log(ctx, doc, 0, 0); err != nil || len(log) != 2 {
		t.Fatalf("log: %d %v", len(log), err)
	}
	if _, err := w.repo.Diff(ctx, doc, "v1.r0", v.Label); err != nil {
		t.Fatal(err)
	}
	if _, err := w.repo.Restore(ctx, doc, "v1.r0", "author-a"); err != nil {
		t.Fatal(err)
	}
	// The suggestion made before was conflicted by those changes, and
	// decisions, sessions and explain stay readable.
	if sg := w.suggestion(pending.ID); sg.Status != StatusConflicted {
		t.Fatalf("suggestion %s", sg.Status)
	}
	if _, err := w.svc.Explain(ctx, authorA, doc, ""); err != nil {
		t.Fatal(err)
	}
	if ss, err := w.svc.Sessions(ctx, authorA, doc); err != nil || len(ss) != 1 {
		t.Fatalf("sessions %v %v", ss, err)
	}

	// One switch at a time.
	for _, c := range []struct {
		sw    func(*config.Assistant)
		scope Scope
		req   func(*AssistRequest)
	}{
		{func(a *config.Assistant) { a.Selection = false }, Scope{Kind: ScopeSelection, Block: "p1", Start: 0, End: 2}, nil},
		{func(a *config.Assistant) { a.Section = false }, Scope{Kind: ScopeSection, From: "p1", To: "p2"}, nil},
		{func(a *config.Assistant) { a.Document = false }, Scope{Kind: ScopeDocument}, nil},
		{func(a *config.Assistant) { a.Block = false }, Scope{Kind: ScopeBlock, Block: "p1"}, nil},
		{func(a *config.Assistant) { a.WritingPresets = false }, Scope{Kind: ScopeBlock, Block: "p1"}, func(r *AssistRequest) { r.WritingPreset = "clear-concise" }},
		{func(a *config.Assistant) { a.EditingPresets = false }, Scope{Kind: ScopeBlock, Block: "p1"}, func(r *AssistRequest) { r.EditingPreset = "six-rules" }},
	} {
		sw := config.DefaultAssistant()
		c.sw(&sw)
		w.svc.sw = sw
		req := AssistRequest{Doc: doc, Scope: c.scope, Instruction: "x"}
		if c.req != nil {
			c.req(&req)
		}
		if _, err := w.svc.Assist(ctx, authorA, req); codeOf(err) != CodeDisabled {
			t.Fatalf("%+v: %v", sw, err)
		}
	}
}

// A run's stream tells its story in order: queued, started, progress,
// succeeded; the document's stream announces the suggestion.
func TestRunAndDocumentStreams(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	before := w.lastDocEvent(doc)
	q, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
	evs, err := w.svc.RunEvents(ctx, q.Run.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ts := types(evs)
	if ts[0] != EventQueued || ts[1] != EventStarted || ts[len(ts)-1] != EventSucceeded {
		t.Fatalf("run events %v", ts)
	}
	text := ""
	for i, e := range evs {
		if e.Seq != uint64(i+1) {
			t.Fatalf("run event %d has seq %d", i+1, e.Seq)
		}
		var d RunEvent
		if err := kv.Unmarshal(e.Data, &d); err != nil || d.Run != run.ID {
			t.Fatalf("event %s: %+v %v", e.Type, d, err)
		}
		if e.Type == EventProgress {
			text += d.Text
		}
		if e.Type == EventSucceeded && (d.Suggestion != run.Suggestion || d.Outcome != OutcomeSuggestion || d.Usage == nil || d.Usage.Total == 0) {
			t.Fatalf("succeeded event %+v", d)
		}
	}
	if !strings.Contains(text, `"replace_block"`) {
		t.Fatalf("progress events carried %q, not the answer", text)
	}
	dev := w.docEvents(doc, before)
	if len(dev) != 1 || dev[0].Type != EventSuggestionCreated {
		t.Fatalf("doc events %v", types(dev))
	}
	var se SuggestionEvent
	kv.Unmarshal(dev[0].Data, &se)
	if se.ID != run.Suggestion || se.Status != StatusPending || se.Base != "v1.r0" || se.Ops != 1 {
		t.Fatalf("suggestion.created %+v", se)
	}
}

// A run whose answer fails domain validation fails: no suggestion, no
// assistant message, the failure in its events and record.
func TestDomainInvalidAnswerFailsTheRun(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, true)
	w.model.answer = func(req llmRequest) string {
		// A whole-document candidate that drops the code block.
		return `{"summary":"x","ops":[{"op":"replace_document","document":{"blocks":[{"type":"paragraph","richText":[{"text":"all new"}]}]}}]}`
	}
	q, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeDocument}, Instruction: "rewrite"})
	if run.State != RunFailed || run.Error == nil || run.Error.Code != CodeInvalid || run.Suggestion != "" {
		t.Fatalf("run %s error %+v suggestion %q", run.State, run.Error, run.Suggestion)
	}
	if !strings.Contains(run.Error.Message, "c1") {
		t.Fatalf("the error must name the complex block: %s", run.Error.Message)
	}
	if sgs, _ := w.svc.Suggestions(ctx, authorA, doc, "", 0); len(sgs) != 0 {
		t.Fatalf("suggestions %v", sgs)
	}
	ss, _ := w.svc.Sessions(ctx, authorA, doc)
	if ss[0].Messages != 1 {
		t.Fatalf("session has %d messages; a failed run adds none", ss[0].Messages)
	}
	evs, _ := w.svc.RunEvents(ctx, q.Run.ID, 0, 0)
	if ts := types(evs); ts[len(ts)-1] != EventFailed {
		t.Fatalf("events %v", ts)
	}
	info, _ := w.repo.GetDoc(ctx, doc)
	if info.Head != "v1.r0" {
		t.Fatalf("the article changed: %s", info.Head)
	}
	// Its usage is booked once (safe path), its model called once: an
	// invalid answer is not retried.
	if n := len(w.model.requests()); n != 1 {
		t.Fatalf("model asked %d times", n)
	}
}

// An answer proposing nothing is a successful run without a suggestion.
func TestNoChangeIsAnHonestOutcome(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, false)
	w.model.answer = func(llmRequest) string { return `{"summary":"already concise","ops":[]}` }
	q, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
	if run.State != RunSucceeded || run.Outcome != OutcomeNoChange || run.Suggestion != "" || run.AssistantMessage == 0 {
		t.Fatalf("run %+v", run)
	}
	msgs, err := w.svc.Messages(ctx, authorA, q.Session.ID, 0, 0)
	if err != nil || len(msgs) != 2 || !strings.Contains(msgs[1].Text, "No change proposed: already concise") {
		t.Fatalf("messages %+v %v", msgs, err)
	}
	// The same with ops that change nothing.
	w.model.answer = func(llmRequest) string {
		return `{"summary":"same","ops":[{"op":"replace_block","blockId":"p1","block":{"type":"paragraph","richText":[{"text":"Paragraph 1 says something about 世界 and 🌍."}]}}]}`
	}
	_, run = w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "shorter"})
	if run.Outcome != OutcomeNoChange || run.Suggestion != "" {
		t.Fatalf("identical text: %+v", run)
	}
}

// Cancelling a queued run ends it at once; cancelling a running one ends
// it when the model call stops; neither leaves a suggestion.
func TestCancelRun(t *testing.T) {
	w := newWorld(t, stopped)
	doc := w.article(2, false)
	q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "x"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := w.svc.CancelRun(ctx, authorA, q.Run.ID)
	if err != nil || run.State != RunCancelled {
		t.Fatalf("cancel queued: %s %v", run.State, err)
	}
	w.model.hold = make(chan struct{})
	w.model.started = make(chan struct{}, 1)
	w.start()
	q, err = w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p2"}, Instruction: "x"})
	if err != nil {
		t.Fatal(err)
	}
	<-w.model.started
	if _, err := w.svc.CancelRun(ctx, authorA, q.Run.ID); err != nil {
		t.Fatal(err)
	}
	run = w.wait(q.Run.ID)
	if run.State != RunCancelled || run.Suggestion != "" || !run.CancelRequested {
		t.Fatalf("cancel running: %+v", run)
	}
	evs, _ := w.svc.RunEvents(ctx, run.ID, 0, 0)
	ts := types(evs)
	if ts[len(ts)-1] != EventCancelled || !slices.Contains(ts, EventCancelRequested) {
		t.Fatalf("events %v", ts)
	}
	if sgs, _ := w.svc.Suggestions(ctx, authorA, doc, "", 0); len(sgs) != 0 {
		t.Fatalf("suggestions %v", sgs)
	}
	if again, err := w.svc.CancelRun(ctx, authorA, run.ID); err != nil || again.State != RunCancelled {
		t.Fatalf("cancel a finished run: %v", err)
	}
}
