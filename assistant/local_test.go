package assistant

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/objstore"
)

// These tests run the assistant end to end on the embedded default
// provider, the rule-based local editor: no fake model anywhere.

func localWorld(t *testing.T) *world {
	t.Helper()
	return newWorld(t, func(o *worldOptions) { o.provider = llm.NewLocal("") })
}

func (w *world) create(blocks ...flowdoc.Block) string {
	w.tb.Helper()
	v, err := w.repo.CreateDoc(ctx, repoCreate(flowdoc.Document{SchemaVersion: 1, Blocks: blocks}))
	if err != nil {
		w.tb.Fatal(err)
	}
	return v.Doc
}

// headBlock returns block id of doc's head body.
func (w *world) headBlock(doc, id string) flowdoc.Block {
	w.tb.Helper()
	snap, err := w.repo.Show(ctx, doc, "")
	if err != nil {
		w.tb.Fatal(err)
	}
	b, ok := findBlock(snap.Body.Blocks, id)
	if !ok {
		w.tb.Fatalf("block %s is not in the head", id)
	}
	return b
}

// localRun asks and checks what every run on the local provider must be:
// succeeded, on the local provider, exact (no JSON or domain repair), its
// usage reported by the provider and booked.
func (w *world) localRun(req AssistRequest) (Queued, Run) {
	w.tb.Helper()
	q, run := w.assist(req)
	if run.State != RunSucceeded || run.Error != nil {
		w.tb.Fatalf("run %s: %s, error %+v", run.ID, run.State, run.Error)
	}
	if run.Provider != "local" || run.Model != llm.LocalModel || run.Repaired || len(run.DomainRepairs) > 0 {
		w.tb.Fatalf("run on %s/%s, repaired %v, domain repairs %q", run.Provider, run.Model, run.Repaired, run.DomainRepairs)
	}
	if len(run.UsageEvents) != 1 || run.UsageEstimated || run.Usage.Total == 0 || run.Usage.Total != run.Usage.Input+run.Usage.Output {
		w.tb.Fatalf("usage %+v events %v estimated %v", run.Usage, run.UsageEvents, run.UsageEstimated)
	}
	ev, ok, err := w.ledger.Event(run.UsageEvents[0])
	if err != nil || !ok || ev.Provider != "local" || ev.Total != run.Usage.Total || ev.Estimated {
		w.tb.Fatalf("booked usage %+v %v %v, run usage %+v", ev, ok, err, run.Usage)
	}
	return q, run
}

// localSuggestion asks for a suggestion and returns it with its preview.
func (w *world) localSuggestion(req AssistRequest) (Suggestion, Preview) {
	w.tb.Helper()
	_, run := w.localRun(req)
	if run.Outcome != OutcomeSuggestion || run.Suggestion == "" {
		w.tb.Fatalf("run %s: outcome %q, summary %q", run.ID, run.Outcome, run.Summary)
	}
	p, err := w.svc.Preview(ctx, authorA, run.Suggestion)
	if err != nil {
		w.tb.Fatal(err)
	}
	if p.Suggestion.Status != StatusPending || !p.Current {
		w.tb.Fatalf("suggestion %s %s, current %v", p.Suggestion.ID, p.Suggestion.Status, p.Current)
	}
	return p.Suggestion, p
}

// wordsOf is a preview's word diff of block id: "-deleted" and "+inserted".
func wordsOf(p Preview, id string) []string {
	var out []string
	for _, c := range p.Changes {
		if c.BlockID != id {
			continue
		}
		for _, wd := range c.Words {
			switch wd.Op {
			case "delete":
				out = append(out, "-"+wd.Text)
			case "insert":
				out = append(out, "+"+wd.Text)
			}
		}
	}
	return out
}

func (w *world) accept(sg Suggestion) Accepted {
	w.tb.Helper()
	a, err := w.svc.Accept(ctx, authorA, sg.ID, AcceptOptions{})
	if err != nil {
		w.tb.Fatal(err)
	}
	return a
}

// The editing preset on a Chinese and an English paragraph: a real
// suggestion whose preview shows the rules' edits, accepted as a revision
// whose body holds the edited text; asking again proposes nothing.
func TestLocalEditingPresetOnParagraphs(t *testing.T) {
	w := localWorld(t)
	doc := w.create(
		para("zh", "其实我们需要进行一个全面的优化。"),
		para("en", "In order to win, the team made a decision."),
	)
	sg, p := w.localSuggestion(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "zh"}, EditingPreset: "six-rules"})
	if len(sg.Ops) != 1 || sg.Ops[0].Op != flowdoc.ReplaceBlock || sg.Ops[0].BlockID != "zh" {
		t.Fatalf("ops %+v", sg.Ops)
	}
	if b, _ := findBlock(p.Candidate.Blocks, "zh"); flowdoc.PlainText(b.RichText) != "我们需要全面优化。" {
		t.Fatalf("candidate %q", flowdoc.PlainText(b.RichText))
	}
	if got := strings.Join(wordsOf(p, "zh"), " "); !strings.Contains(got, "-其实") || !strings.Contains(got, "-进行") {
		t.Fatalf("preview words %q", got)
	}
	if !strings.Contains(sg.Summary, "删去“其实”") || !strings.Contains(sg.Summary, "“进行一个全面的优化”→“全面优化”") {
		t.Fatalf("summary %q", sg.Summary)
	}
	a := w.accept(sg)
	if a.Version.Label != "v1.r1" || a.Version.Kind != string(objstore.KindAcceptSuggestion) {
		t.Fatalf("version %s %s", a.Version.Label, a.Version.Kind)
	}
	if got := flowdoc.PlainText(w.headBlock(doc, "zh").RichText); got != "我们需要全面优化。" {
		t.Fatalf("body %q", got)
	}

	sg, p = w.localSuggestion(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "en"}, EditingPreset: "six-rules"})
	if got := strings.Join(wordsOf(p, "en"), " "); !strings.Contains(got, "-made a decision") || !strings.Contains(got, "+decided") {
		t.Fatalf("preview words %q", got)
	}
	if a := w.accept(sg); a.Version.Label != "v1.r2" {
		t.Fatalf("version %s", a.Version.Label)
	}
	if got := flowdoc.PlainText(w.headBlock(doc, "en").RichText); got != "To win, the team decided." {
		t.Fatalf("body %q", got)
	}
	if got := flowdoc.PlainText(w.headBlock(doc, "zh").RichText); got != "我们需要全面优化。" {
		t.Fatalf("the other block changed: %q", got)
	}

	// The edited text again: nothing to do, said honestly.
	for _, id := range []string{"zh", "en"} {
		q, run := w.localRun(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: id}, EditingPreset: "six-rules"})
		if run.Outcome != OutcomeNoChange || run.Suggestion != "" || !strings.Contains(run.Summary, "finds anything to change") {
			t.Fatalf("%s again: outcome %q summary %q", id, run.Outcome, run.Summary)
		}
		w.assistantSays(q, run, "No change proposed: no enabled rule")
	}
}

// assistantSays checks the assistant message of run.
func (w *world) assistantSays(q Queued, run Run, want string) {
	w.tb.Helper()
	msgs, err := w.svc.Messages(ctx, authorA, q.Session.ID, 0, 0)
	if err != nil {
		w.tb.Fatal(err)
	}
	for _, m := range msgs {
		if m.Seq == run.AssistantMessage {
			if !strings.Contains(m.Text, want) {
				w.tb.Fatalf("assistant says %q, want %q", m.Text, want)
			}
			return
		}
	}
	w.tb.Fatalf("no assistant message %d for run %s", run.AssistantMessage, run.ID)
}

// A selection gets replace_selection over exactly the selected range, and
// a free instruction the engine understands is carried out.
func TestLocalSelectionWithFreeInstruction(t *testing.T) {
	w := localWorld(t)
	doc := w.create(para("p1", "In order to win, the team made a decision about the plan."))
	// "the team made a decision" is code points 17..41.
	sg, p := w.localSuggestion(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeSelection, Block: "p1", Start: 17, End: 41}, Instruction: "make it concise"})
	op := sg.Ops[0]
	if len(sg.Ops) != 1 || op.Op != flowdoc.ReplaceSelection || op.BlockID != "p1" || op.Start != 17 || op.End != 41 ||
		flowdoc.PlainText(op.RichText) != "the team decided" {
		t.Fatalf("ops %+v", sg.Ops)
	}
	// "In order to" lies outside the selection: it stays.
	if b, _ := findBlock(p.Candidate.Blocks, "p1"); flowdoc.PlainText(b.RichText) != "In order to win, the team decided about the plan." {
		t.Fatalf("candidate %q", flowdoc.PlainText(b.RichText))
	}
	if a := w.accept(sg); a.Version.Label != "v1.r1" {
		t.Fatalf("version %s", a.Version.Label)
	}
	if got := flowdoc.PlainText(w.headBlock(doc, "p1").RichText); got != "In order to win, the team decided about the plan." {
		t.Fatalf("body %q", got)
	}
}

// Marks, links, inline equations and code runs of the edited block survive
// the edit and the accept exactly.
func TestLocalEditKeepsRichText(t *testing.T) {
	w := localWorld(t)
	rich := flowdoc.Block{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{
		{Text: "其实"}, {Text: "这个方案", Marks: []flowdoc.Mark{flowdoc.Bold}}, {Text: "需要进行一个全面的优化，参见"},
		{Text: "设计文档", Link: "https://example.com/design"}, {Text: "和公式"}, {Equation: "E=mc^2"},
		{Text: "，代码是"}, {Text: "fmt.Println", Marks: []flowdoc.Mark{flowdoc.CodeMark}}, {Text: "。"},
	}}
	doc := w.create(rich, para("p2", "众所周知，这很重要。"))
	sg, _ := w.localSuggestion(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "精简"})
	w.accept(sg)
	want := []flowdoc.Run{
		{Text: "这个方案", Marks: []flowdoc.Mark{flowdoc.Bold}}, {Text: "需要全面优化，参见"},
		{Text: "设计文档", Link: "https://example.com/design"}, {Text: "和公式"}, {Equation: "E=mc^2"},
		{Text: "，代码是"}, {Text: "fmt.Println", Marks: []flowdoc.Mark{flowdoc.CodeMark}}, {Text: "。"},
	}
	got := w.headBlock(doc, "p1")
	if g, x := mustJSON(got.RichText), mustJSON(want); !bytes.Equal(g, x) {
		t.Fatalf("runs after accept:\n got %s\nwant %s", g, x)
	}
	if b := w.headBlock(doc, "p2"); flowdoc.PlainText(b.RichText) != "众所周知，这很重要。" {
		t.Fatal("a block outside the scope changed")
	}
}

// A whole-article request rewrites the text blocks and leaves the table,
// the code and the media block identical (the complex-block guard holds);
// a section request edits the section's text only. Accepting the article
// suggestion starts a new major version.
func TestLocalDocumentAndSectionKeepComplexBlocks(t *testing.T) {
	w := localWorld(t)
	complexBlocks := []flowdoc.Block{
		{ID: "t1", Type: flowdoc.Table, Attrs: &flowdoc.Attrs{Header: true}, Rows: []flowdoc.TableRow{
			{Cells: [][]flowdoc.Run{{{Text: "其实"}}, {{Text: "In order to"}}}},
			{Cells: [][]flowdoc.Run{{{Text: "进行了讨论"}}, {{Text: "made a decision"}}}}}},
		{ID: "c1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "// 其实 in order to utilize\nfmt.Println(1)"}},
		{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: "https://example.com/a.png", Alt: "In order to win", Caption: "其实是一张图"}},
	}
	doc := w.create(
		flowdoc.Block{ID: "h1", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 2}, RichText: []flowdoc.Run{{Text: "其实这是标题"}}},
		para("p1", "其实我们需要进行一个全面的优化。"),
		complexBlocks[0],
		para("p2", "At the end of the day, we need to utilize the data."),
		complexBlocks[1],
		complexBlocks[2],
		para("p3", "今天天气很好。"),
	)
	before, _ := w.repo.Show(ctx, doc, "")

	// A section: h1..t1.
	sg, p := w.localSuggestion(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeSection, From: "h1", To: "t1"}, EditingPreset: "six-rules"})
	if len(sg.Ops) != 1 || sg.Ops[0].Op != flowdoc.ReplaceSection || len(sg.Ops[0].Blocks) != 3 {
		t.Fatalf("ops %+v", sg.Ops)
	}
	if b, _ := findBlock(p.Candidate.Blocks, "h1"); flowdoc.PlainText(b.RichText) != "这是标题" || b.Attrs.Level != 2 {
		t.Fatalf("heading %+v", b)
	}
	if _, err := w.svc.Reject(ctx, authorA, sg.ID, ""); err != nil {
		t.Fatal(err)
	}

	sg, p = w.localSuggestion(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeDocument}, EditingPreset: "six-rules"})
	if len(sg.Ops) != 1 || sg.Ops[0].Op != flowdoc.ReplaceDocument {
		t.Fatalf("ops %+v", sg.Ops)
	}
	if ps := flowdoc.GuardComplex(before.Body, p.Candidate); len(ps) > 0 {
		t.Fatalf("complex-block guard: %v", ps)
	}
	for _, c := range p.Changes {
		if c.BlockID != "h1" && c.BlockID != "p1" && c.BlockID != "p2" {
			t.Errorf("preview changes block %s (%s)", c.BlockID, c.Kind)
		}
	}
	a := w.accept(sg)
	if a.Version.Label != "v2.r0" {
		t.Fatalf("version %s", a.Version.Label)
	}
	after, _ := w.repo.Show(ctx, doc, "")
	var ids []string
	for _, b := range after.Body.Blocks {
		ids = append(ids, b.ID)
	}
	if strings.Join(ids, ",") != "h1,p1,t1,p2,c1,m1,p3" {
		t.Fatalf("blocks %v", ids)
	}
	for _, cb := range complexBlocks {
		if got := w.headBlock(doc, cb.ID); !bytes.Equal(flowdoc.EncodeContent(got), flowdoc.EncodeContent(cb)) {
			t.Errorf("complex block %s changed", cb.ID)
		}
	}
	for id, want := range map[string]string{"h1": "这是标题", "p1": "我们需要全面优化。", "p2": "We need to use the data.", "p3": "今天天气很好。"} {
		if got := flowdoc.PlainText(w.headBlock(doc, id).RichText); got != want {
			t.Errorf("block %s: %q, want %q", id, got, want)
		}
	}
}

// What the local engine cannot do is an honest no_change: the run
// succeeds without a suggestion, its summary and the assistant message
// give the engine's reason, and the usage of the call is booked.
func TestLocalNoChangeReasons(t *testing.T) {
	w := localWorld(t)
	doc := w.create(para("p1", "其实我们需要进行一个全面的优化。"),
		flowdoc.Block{ID: "c1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Language: "go", Text: "fmt.Println(1)"}})
	house, err := w.svc.CreatePreset(ctx, admin, PresetInput{Type: EditingPreset, Name: "house style",
		Rules: []Rule{{ID: "filler", Instruction: "删掉废话"}, {ID: "oxford-comma", Instruction: "用牛津逗号"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		req    AssistRequest
		reason string
	}{
		{"writing preset", AssistRequest{WritingPreset: "clear-concise", Instruction: "改得更清楚"}, "cannot write in a writing preset's style"},
		{"instruction it cannot do", AssistRequest{Instruction: "扩写这一段"}, `asks for "扩写"`},
		{"instruction it does not recognise", AssistRequest{Instruction: "make it sparkle"}, "does not recognise this instruction"},
		{"editing preset with a rule it lacks", AssistRequest{EditingPreset: house.ID}, "(oxford-comma)"},
		{"a code block", AssistRequest{EditingPreset: "six-rules", Scope: Scope{Kind: ScopeBlock, Block: "c1"}}, "block c1 is a code block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			req.Doc = doc
			if req.Scope.Kind == "" {
				req.Scope = Scope{Kind: ScopeBlock, Block: "p1"}
			}
			q, run := w.localRun(req)
			if run.Outcome != OutcomeNoChange || run.Suggestion != "" || !strings.Contains(run.Summary, tt.reason) {
				t.Fatalf("outcome %q summary %q, want no_change with %q", run.Outcome, run.Summary, tt.reason)
			}
			w.assistantSays(q, run, "No change proposed: "+run.Summary)
			if sgs, _ := w.svc.Suggestions(ctx, authorA, doc, "", 0); len(sgs) != 0 {
				t.Fatalf("a suggestion was stored: %+v", sgs)
			}
		})
	}
	if info, _ := w.repo.GetDoc(ctx, doc); info.Head != "v1.r0" {
		t.Fatalf("the article changed: %s", info.Head)
	}
}

// The request the local provider receives carries the scope and the
// pinned preset in structured form, beside the prompt for remote models.
func TestEditTaskCarriesTheScopeAndPin(t *testing.T) {
	w := newWorld(t)
	doc := w.article(2, true)
	_, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeSelection, Block: "p2", Start: 2, End: 8}, EditingPreset: "six-rules"})
	if run.State != RunSucceeded {
		t.Fatalf("run %+v", run)
	}
	reqs := w.model.requests()
	task := reqs[len(reqs)-1].Task
	if task == nil || task.Scope == nil {
		t.Fatal("no task")
	}
	got, _ := json.Marshal(task)
	want := `{"scope":{"kind":"selection","blocks":[{"id":"p2","type":"paragraph","richText":[{"text":"Paragraph 2 says something about 世界 and 🌍."}]}],"start":2,"end":8},` +
		`"personalization":"editing","instruction":"` + DefaultEditingInstructionEN + `",` +
		`"preset":{"id":"six-rules","name":"六条文章强化规则","rules":["filler","strong-verbs","active-voice","jargon","cliche","keep"]}}`
	if string(got) != want {
		t.Fatalf("task\n got %s\nwant %s", got, want)
	}
}
