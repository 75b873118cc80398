package assistant

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/learning"
)

var personasOn = persona.Switches{Enabled: true, Style: true, Learning: true, Memory: true}

func withPersonas(sw persona.Switches) func(*worldOptions) {
	return func(o *worldOptions) { o.persona = &sw }
}

// source creates and publishes an article of author-a with vis.
func (w *world) source(id, title, vis string, paras ...string) {
	w.tb.Helper()
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	for i, p := range paras {
		d.Blocks = append(d.Blocks, para(fmt.Sprintf("s%d", i), p))
	}
	if _, err := w.repo.CreateDoc(ctx, repo.CreateParams{ID: id, Owner: authorA.UserID, Author: authorA.User,
		Attrs: flowdoc.Attributes{Title: title}, Body: d}); err != nil {
		w.tb.Fatal(err)
	}
	w.publish(id, vis)
}

func (w *world) publish(id, vis string) {
	w.tb.Helper()
	p := publish.Params{Doc: id, Actor: authorA.User, Visibility: vis}
	if vis == publish.Password {
		p.Password = "correct horse battery"
	}
	if _, err := w.pub.Publish(ctx, p); err != nil {
		w.tb.Fatal(err)
	}
}

// rewrite saves paras as the body of source id and publishes it again.
func (w *world) rewrite(id string, paras ...string) {
	w.tb.Helper()
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	for i, p := range paras {
		d.Blocks = append(d.Blocks, para(fmt.Sprintf("s%d", i), p))
	}
	dr, err := w.repo.Draft(ctx, id)
	if err != nil {
		w.tb.Fatal(err)
	}
	if _, err := w.repo.SaveDraft(ctx, repo.SaveParams{Doc: id, Actor: authorA.User, BaseSeq: dr.Seq, Body: &d}); err != nil {
		w.tb.Fatal(err)
	}
	w.publish(id, "")
}

// persona creates a persona of author-a over sources and generates its
// first version with the world's persona service.
func (w *world) persona(name string, sources ...string) persona.Persona {
	w.tb.Helper()
	p, err := w.personas.Create(ctx, authorA.UserID, name, sources)
	if err != nil {
		w.tb.Fatal(err)
	}
	w.generate(w.personas, p.ID)
	return p
}

func (w *world) generate(svc *persona.Service, id string) persona.Version {
	w.tb.Helper()
	v, err := svc.Generate(ctx, persona.GenerateRequest{User: authorA.UserID, Persona: id}, w.content, nil)
	if err != nil {
		w.tb.Fatal(err)
	}
	return v
}

// draftDoc is the article being written: its text says nothing about
// the author's past.
func (w *world) draftDoc() string {
	w.tb.Helper()
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{
		para("p1", "这一段写我的工作经历。"), para("p2", "下一段写我的爱好。")}}
	v, err := w.repo.CreateDoc(ctx, repo.CreateParams{Owner: authorA.UserID, Attrs: flowdoc.Attributes{Title: "我的工作"}, Body: d})
	if err != nil {
		w.tb.Fatal(err)
	}
	return v.Doc
}

// writes answers every request by replacing block p1 with text.
func writes(text string) func(llm.Request) string {
	return func(llm.Request) string {
		b, _ := json.Marshal(map[string]any{"summary": "rewritten", "ops": []any{map[string]any{
			"op": "replace_block", "blockId": "p1", "block": map[string]any{"type": "paragraph", "richText": []any{map[string]any{"text": text}}}}}})
		return string(b)
	}
}

// sequence answers the requests in turn with the texts.
func sequence(texts ...string) func(llm.Request) string {
	var mu sync.Mutex
	n := 0
	return func(r llm.Request) string {
		mu.Lock()
		i := min(n, len(texts)-1)
		n++
		mu.Unlock()
		return writes(texts[i])(r)
	}
}

var careerSource = []string{"我在2019年加入了星火公司，负责搜索。", "后来我在杭州住了五年。"}

func (w *world) personaRun(doc, id string) (Queued, Run) {
	w.tb.Helper()
	return w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "用我的口吻写我在星火公司的经历", Persona: id})
}

func allText(req llm.Request) string {
	var parts []string
	for _, m := range req.Messages {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n")
}

func TestNoPersonaLoadsNoStyleLearningOrMemory(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	w.persona("博客", "src1")
	doc := w.draftDoc()
	w.model.answer = writes("这一段写我的工作经历，更简洁。")
	_, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "写得更简洁"})
	if run.State != RunSucceeded {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	reqs := w.model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	// Exactly the scope's system prompt and the request: nothing else.
	got := reqs[0]
	if len(got.Messages) != 2 || got.Messages[0].Role != llm.System || got.Messages[0].Content != promptFor(ScopeBlock).text ||
		got.Messages[1].Role != llm.User {
		t.Fatalf("messages %+v", got.Messages)
	}
	for _, leak := range []string{"星火", "杭州", "Persona", "memory", "Style profile"} {
		if strings.Contains(allText(got), leak) {
			t.Errorf("a request without persona carried %q", leak)
		}
	}
	if got.Task == nil || got.Task.Personalization != "" {
		t.Errorf("edit task personalization %+v", got.Task)
	}
	if run.Personalization.Kind != PersonalizeNone || run.Personalization.Persona != nil || run.Grounding != nil {
		t.Errorf("run personalization %+v grounding %+v", run.Personalization, run.Grounding)
	}
	if sg := w.suggestion(run.Suggestion); sg.Closeness != nil {
		t.Errorf("closeness on a suggestion without persona: %+v", sg.Closeness)
	}
}

func TestPersonaRunPinsItsContextAndPassesGrounding(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	w.source("ref1", "星火公司的搜索", publish.Public, "星火公司的搜索团队很小。")
	p := w.persona("博客", "src1")
	doc := w.draftDoc()
	w.model.answer = writes("2019年我加入了星火公司，负责搜索。")
	q, run := w.personaRun(doc, p.ID)
	if run.State != RunSucceeded || run.Suggestion == "" {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	pin := run.Personalization.Persona
	if run.Personalization.Kind != PersonalizePersona || pin == nil || pin.ID != p.ID || pin.Seq != 1 || pin.Version == "" ||
		pin.Style == "" || pin.Memory == "" || len(pin.MemoryKeys) == 0 {
		t.Fatalf("pinned %+v", pin)
	}
	if q.Run.Personalization.Persona == nil || q.Run.Personalization.Persona.Version != pin.Version {
		t.Fatalf("the queued run did not pin the persona: %+v", q.Run.Personalization)
	}
	// Where the memory came from: src1's published version, for every
	// item provided.
	pub, err := w.repo.ResolveLabel(ctx, "src1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(pin.MemorySources) != 1 || pin.MemorySources[0].Doc != "src1" || pin.MemorySources[0].Label != pub.Label ||
		pin.MemorySources[0].Version.String() != pub.Hash.String() || strings.Join(pin.MemorySources[0].Items, " ") != strings.Join(pin.MemoryKeys, " ") {
		t.Fatalf("memory sources %+v of items %v (src1 is at %s %s)", pin.MemorySources, pin.MemoryKeys, pub.Label, pub.Hash)
	}
	var refs []string
	for _, r := range pin.References {
		refs = append(refs, r.Doc)
		if r.Version.IsZero() || r.Label == "" {
			t.Errorf("reference %+v not pinned by version", r)
		}
	}
	if strings.Join(refs, ",") != "ref1,src1" && strings.Join(refs, ",") != "src1,ref1" {
		t.Errorf("references %v, want the author's other published articles", refs)
	}
	g := run.Grounding
	if g == nil || !g.Pass || g.Retried || g.MemoryProvided != len(pin.MemoryKeys) || len(g.UsedMemory) != 1 || g.References != 2 {
		t.Fatalf("grounding %+v", g)
	}
	// What the provider received: the style, the memory, the references.
	reqs := w.model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	text := allText(reqs[0])
	for _, want := range []string{"Persona «博客»", "Style profile " + pin.Style, "2019年加入了星火公司", "星火公司的搜索团队很小", "这一段写我的工作经历"} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if reqs[0].Task.Personalization != "persona" {
		t.Errorf("edit task personalization %q", reqs[0].Task.Personalization)
	}
	sg := w.suggestion(run.Suggestion)
	if sg.Closeness == nil || sg.Closeness.Units == 0 {
		t.Errorf("closeness %+v", sg.Closeness)
	}
	msgs, err := w.svc.Messages(ctx, authorA, run.Session, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if !strings.Contains(last.Text, "自动参考 2 篇 · 使用 Memory 1 条") {
		t.Errorf("assistant message %q", last.Text)
	}
}

func TestPersonaMemoryNeverReachesAnotherPersona(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("srcA", "东京", publish.Public, "2021年我去了东京，在那里开了一家书店。")
	w.source("srcB", "星火", publish.Public, careerSource...)
	w.persona("A", "srcA")
	b := w.persona("B", "srcB")
	// No references, so that only memory could carry persona A's facts.
	w.svc.refs = nil
	doc := w.draftDoc()
	w.model.answer = writes("我负责搜索。")
	_, run := w.personaRun(doc, b.ID)
	if run.State != RunSucceeded {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	text := allText(w.model.requests()[0])
	for _, leak := range []string{"东京", "书店", "2021"} {
		if strings.Contains(text, leak) {
			t.Errorf("persona B's run carried persona A's %q", leak)
		}
	}
	if !strings.Contains(text, "星火公司") {
		t.Error("persona B's own memory is missing")
	}
}

func TestPrivateSourceNeverReachesTheProvider(t *testing.T) {
	sw := personasOn
	w := newWorld(t, withPersonas(sw))
	w.source("pub1", "公开", publish.Public, "我喜欢在早上写作。")
	w.source("priv1", "私密", publish.Private, "2015年我在南京住院了三个月。")
	// A version generated when the deployment allowed private sources...
	allow := sw
	allow.SendPrivate, allow.PrivateMemory = true, true
	gen := persona.New(w.db, w.idx, allow, persona.Options{})
	p, err := gen.Create(ctx, authorA.UserID, "博客", []string{"pub1", "priv1"})
	if err != nil {
		t.Fatal(err)
	}
	w.generate(gen, p.ID)
	// ...is refused now that the switch is off: the request is checked,
	// not the choice made earlier.
	doc := w.draftDoc()
	_, err = w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "写我在南京的经历", Persona: p.ID})
	if codeOf(err) != persona.CodePrivateSource {
		t.Fatalf("persona built from a private source: %v, want private_source_blocked", err)
	}
	if n := len(w.model.requests()); n != 0 {
		t.Fatalf("the provider was called %d times", n)
	}
	// A persona of public sources runs, and the private article is no
	// reference either.
	q := w.persona("公开", "pub1")
	w.model.answer = writes("我喜欢在早上写作。")
	_, run := w.personaRun(doc, q.ID)
	if run.State != RunSucceeded {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	for _, r := range run.Personalization.Persona.References {
		if r.Doc == "priv1" {
			t.Error("the private article was a reference")
		}
	}
	if text := allText(w.model.requests()[0]); strings.Contains(text, "南京") || strings.Contains(text, "住院") {
		t.Error("the private article's text reached the provider")
	}
}

func TestPersonaRequestsNeedPersonas(t *testing.T) {
	w := newWorld(t)
	doc := w.draftDoc()
	_, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "x", Persona: "pnx"})
	if codeOf(err) != CodePersonaUnavailable {
		t.Fatalf("without personas: %v", err)
	}
	off := personasOn
	off.Enabled = false
	w2 := newWorld(t, withPersonas(off))
	doc = w2.draftDoc()
	_, err = w2.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "x", Persona: "pnx"})
	if codeOf(err) != persona.CodeDisabled {
		t.Fatalf("personas switched off: %v", err)
	}
	w3 := newWorld(t, withPersonas(personasOn))
	doc = w3.draftDoc()
	_, err = w3.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "x", Persona: "pnnosuch"})
	if codeOf(err) != "not_found" {
		t.Fatalf("a missing persona: %v", err)
	}
}

func TestGroundingFailsAnInventedFactAfterOneRetry(t *testing.T) {
	for name, invented := range map[string]string{
		"year":  "2020年我加入了星火公司，负责搜索。",
		"place": "我在上海加入了星火公司，负责搜索。",
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, withPersonas(personasOn))
			w.source("src1", "加入星火", publish.Public, careerSource...)
			p := w.persona("博客", "src1")
			doc := w.draftDoc()
			w.model.answer = writes(invented)
			_, run := w.personaRun(doc, p.ID)
			if run.State != RunFailed || run.Error == nil || run.Error.Code != CodeGroundingFailed || run.Suggestion != "" {
				t.Fatalf("run %s error %+v suggestion %q", run.State, run.Error, run.Suggestion)
			}
			reqs := w.model.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model calls, want the answer and one retry", len(reqs))
			}
			retry := reqs[1].Messages[len(reqs[1].Messages)-1].Content
			if !strings.Contains(retry, invented) {
				t.Errorf("the retry does not name the claim: %s", retry)
			}
			g := run.Grounding
			if g == nil || g.Pass || !g.Retried || len(g.Claims) != 1 || len(g.RetryClaims) != 1 {
				t.Fatalf("grounding %+v", g)
			}
			sugs, err := w.svc.Suggestions(ctx, authorA, doc, "", 0)
			if err != nil || len(sugs) != 0 {
				t.Fatalf("suggestions %+v %v", sugs, err)
			}
			if run.Attempts != 1 {
				t.Errorf("%d attempts: a grounding failure is not retried by the runner", run.Attempts)
			}
		})
	}
}

func TestGroundingRetryThatDropsTheClaimPasses(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	p := w.persona("博客", "src1")
	doc := w.draftDoc()
	w.model.answer = sequence("2020年我加入了星火公司。", "我加入了星火公司，负责搜索。")
	_, run := w.personaRun(doc, p.ID)
	if run.State != RunSucceeded || run.Suggestion == "" {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	if g := run.Grounding; g == nil || !g.Pass || !g.Retried || len(g.RetryClaims) != 1 {
		t.Fatalf("grounding %+v", g)
	}
	if len(run.UsageEvents) != 2 || run.Usage.Output == 0 {
		t.Fatalf("usage events %v usage %+v: both calls are booked", run.UsageEvents, run.Usage)
	}
}

// Metamorphic: the same output, with the year in the memory changed, is
// no longer supported.
func TestGroundingFollowsTheMemory(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	p := w.persona("博客", "src1")
	doc := w.draftDoc()
	out := "2019年我加入了星火公司，负责搜索。"
	w.model.answer = writes(out)
	if _, run := w.personaRun(doc, p.ID); run.State != RunSucceeded {
		t.Fatalf("with 2019 in the memory: %s %+v", run.State, run.Error)
	}
	w.rewrite("src1", "我在2018年加入了星火公司，负责搜索。", "后来我在杭州住了五年。")
	w.generate(w.personas, p.ID)
	if _, run := w.personaRun(doc, p.ID); run.State != RunFailed || run.Error.Code != CodeGroundingFailed {
		t.Fatalf("with 2018 in the memory: %s %+v", run.State, run.Error)
	}
}

// A run pins the learning snapshot its persona version names, even with
// no rule active yet (what was in force, so that run show never says
// "learning none" of a version that has one); with [persona] learning
// off it pins none.
func TestPersonaRunPinsTheLearningInForce(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	p, err := w.personas.Create(ctx, authorA.UserID, "博客", []string{"src1"})
	if err != nil {
		t.Fatal(err)
	}
	v := w.generate(w.personas, p.ID)
	if v.Learning == "" {
		t.Fatalf("version %+v has no learning snapshot", v)
	}
	w.svc.refs = nil
	w.model.answer = writes("我负责搜索。")
	_, run := w.personaRun(w.draftDoc(), p.ID)
	if pin := run.Personalization.Persona; pin == nil || pin.Version != v.ID || pin.Learning != v.Learning || len(pin.LearningRules) != 0 {
		t.Fatalf("pinned %+v, want learning %s with no active rule", pin, v.Learning)
	}
	off := personasOn
	off.Learning = false
	w.svc.personas = persona.New(w.db, w.idx, off, persona.Options{})
	_, run = w.personaRun(w.draftDoc(), p.ID)
	if pin := run.Personalization.Persona; pin == nil || pin.Learning != "" {
		t.Fatalf("learning off, pinned %+v", pin)
	}
}

// The component switches decide what a persona run gets, whatever the
// version holds.
func TestPersonaComponentSwitches(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	p := w.persona("博客", "src1")
	doc := w.draftDoc()
	off := personasOn
	off.Style, off.Memory = false, false
	w.svc.personas = persona.New(w.db, w.idx, off, persona.Options{})
	w.svc.refs = nil // references are not memory; they are left out here to see that memory is
	w.model.answer = writes("我负责搜索。")
	_, run := w.personaRun(doc, p.ID)
	if run.State != RunSucceeded {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	pin := run.Personalization.Persona
	if pin.Style != "" || pin.Memory != "" || len(pin.MemoryKeys) != 0 {
		t.Fatalf("style and memory off, pinned %+v", pin)
	}
	text := allText(w.model.requests()[0])
	if strings.Contains(text, "Style profile") || strings.Contains(text, "2019") || !strings.Contains(text, "Persona «博客»") {
		t.Errorf("the prompt with style and memory off:\n%s", text)
	}
	if sg := w.suggestion(run.Suggestion); sg.Closeness != nil {
		t.Errorf("closeness without a style profile: %+v", sg.Closeness)
	}
}

// The learning reader gives a persona's generation the decisions on its
// own runs' suggestions by its own user, with their text, and nothing of
// another persona's or of runs without persona.
func TestLearningReaderIsPersonaScoped(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	a := w.persona("A", "src1")
	b := w.persona("B", "src1")
	w.svc.refs = nil
	decide := func(id string, accept bool) {
		doc := w.draftDoc()
		w.model.answer = writes("我负责搜索。")
		req := AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "改短", Persona: id}
		if id == "" {
			req.Instruction = "改短一点"
		}
		_, run := w.assist(req)
		if run.Suggestion == "" {
			t.Fatalf("run %s %+v", run.State, run.Error)
		}
		var err error
		if accept {
			_, err = w.svc.Accept(ctx, authorA, run.Suggestion, AcceptOptions{})
		} else {
			_, err = w.svc.Reject(ctx, authorA, run.Suggestion, "no")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	decide(a.ID, true)
	decide(a.ID, false)
	decide(b.ID, true)
	decide("", true)
	var got []learning.Observation
	err := w.svc.LearningReader().Observations(ctx, authorA.UserID, a.ID, func(o learning.Observation) error {
		got = append(got, o)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d observations of persona A, want its accept and its reject: %+v", len(got), got)
	}
	kinds := map[string]bool{}
	for _, o := range got {
		kinds[o.Kind] = true
		if o.Persona != a.ID || len(o.Edits) != 1 || o.Edits[0].Before != "这一段写我的工作经历。" || o.Edits[0].After != "我负责搜索。" {
			t.Errorf("observation %+v", o)
		}
	}
	if !kinds[learning.KindAccepted] || !kinds[learning.KindRejected] {
		t.Errorf("kinds %v", kinds)
	}
	n := 0
	w.svc.LearningReader().Observations(ctx, "u1authorb", a.ID, func(learning.Observation) error { n++; return nil })
	if n != 0 {
		t.Errorf("another user read %d of persona A's observations", n)
	}
}

// A run queued while private sources were allowed fails, without calling
// the provider, when it starts after the switch was turned off.
func TestPrivateSwitchIsCheckedAgainWhenTheRunStarts(t *testing.T) {
	allow := personasOn
	allow.SendPrivate = true
	w := newWorld(t, withPersonas(allow), func(o *worldOptions) { o.noStart = true })
	w.source("priv1", "私密", publish.Private, "我喜欢在早上写作。")
	p := w.persona("博客", "priv1")
	doc := w.draftDoc()
	q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "改写", Persona: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	w.svc.personas = persona.New(w.db, w.idx, personasOn, persona.Options{})
	w.start()
	run := w.wait(q.Run.ID)
	if run.State != RunFailed || run.Error.Code != persona.CodePrivateSource {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	if n := len(w.model.requests()); n != 0 {
		t.Fatalf("the provider was called %d times", n)
	}
}

// Memory extracted from a private source while private_memory was on is
// withheld from runs once it is off.
func TestPrivateMemoryIsWithheldWithoutTheSwitch(t *testing.T) {
	allow := personasOn
	allow.SendPrivate, allow.PrivateMemory = true, true
	w := newWorld(t, withPersonas(allow))
	w.source("pub1", "公开", publish.Public, careerSource...)
	w.source("priv1", "私密", publish.Private, "2015年我在南京住了三个月。")
	p := w.persona("博客", "pub1", "priv1")
	w.svc.refs = nil
	noMem := allow
	noMem.PrivateMemory = false
	w.svc.personas = persona.New(w.db, w.idx, noMem, persona.Options{})
	doc := w.draftDoc()
	w.model.answer = writes("我负责搜索。")
	_, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, Instruction: "写我在南京和星火公司的经历", Persona: p.ID})
	if run.State != RunSucceeded {
		t.Fatalf("run %s %+v", run.State, run.Error)
	}
	if pin := run.Personalization.Persona; pin.MemoryWithheld == 0 || len(pin.MemoryKeys) == 0 {
		t.Fatalf("pinned %+v: the private item must be withheld and the public ones given", pin)
	}
	if text := allText(w.model.requests()[0]); strings.Contains(text, "南京住了") {
		t.Error("memory from the private source reached the provider")
	}
}

// The loop: accepted suggestions of a persona's runs become a learned
// rule at the next generation, and the next run of that persona is given
// the rule; a run of another persona is not.
func TestAcceptedSuggestionsTeachTheNextVersion(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	p := w.persona("博客", "src1")
	other := w.persona("另一个", "src1")
	w.svc.refs = nil
	w.model.answer = writes("我负责搜索。")
	for i := 0; i < 4; i++ {
		_, run := w.personaRun(w.draftDoc(), p.ID)
		if run.Suggestion == "" {
			t.Fatalf("run %s %+v", run.State, run.Error)
		}
		if _, err := w.svc.Accept(ctx, authorA, run.Suggestion, AcceptOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{p.ID, other.ID} {
		if _, err := w.personas.Generate(ctx, persona.GenerateRequest{User: authorA.UserID, Persona: id}, w.content, w.svc.LearningReader()); err != nil {
			t.Fatal(err)
		}
	}
	_, run := w.personaRun(w.draftDoc(), p.ID)
	pin := run.Personalization.Persona
	if pin.Seq != 2 || pin.Learning == "" || len(pin.LearningRules) == 0 {
		t.Fatalf("pinned %+v: the accepted decisions made no active rule", pin)
	}
	if text := allText(w.model.requests()[len(w.model.requests())-1]); !strings.Contains(text, "What the author accepted and rejected before") {
		t.Errorf("the prompt lacks the learned rules:\n%s", text)
	}
	_, run = w.personaRun(w.draftDoc(), other.ID)
	if pin := run.Personalization.Persona; len(pin.LearningRules) != 0 {
		t.Errorf("another persona learned from these decisions: %+v", pin)
	}
}

// Hand edits of an article written with a persona reach that persona's
// learning as manual_edit observations with their text, are counted, and
// never become a rule, however many agree.
func TestManualEditsReachThePersonaButNeverBecomeRules(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	p := w.persona("博客", "src1")
	w.svc.refs = nil
	w.model.answer = writes("我负责搜索。")
	for i := 0; i < 6; i++ {
		doc := w.draftDoc()
		_, run := w.personaRun(doc, p.ID)
		if run.Suggestion == "" {
			t.Fatalf("run %s %+v", run.State, run.Error)
		}
		// Shorter by hand, five times over: what a rule would learn from.
		w.save(doc, para("p2", "爱好。"))
		if _, _, err := w.repo.Seal(ctx, doc, "idle", authorA.User); err != nil {
			t.Fatal(err)
		}
	}
	var got []learning.Observation
	if err := w.svc.LearningReader().Observations(ctx, authorA.UserID, p.ID, func(o learning.Observation) error {
		got = append(got, o)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("%d observations, want the 6 manual edits: %+v", len(got), got)
	}
	for _, o := range got {
		if o.Kind != learning.KindManualEdit || len(o.Edits) != 1 || o.Edits[0] != (learning.Edit{Before: "下一段写我的爱好。", After: "爱好。"}) {
			t.Fatalf("observation %+v", o)
		}
	}
	snap, err := learning.Build(authorA.UserID, p.ID, got)
	if err != nil {
		t.Fatal(err)
	}
	if snap.ManualEdits != 6 || len(snap.Active()) != 0 {
		t.Fatalf("snapshot %+v: manual edits must be counted and never active", snap)
	}
	for _, r := range snap.Rules {
		if r.Positive != 0 {
			t.Errorf("rule %s counted a hand edit as positive: %+v", r.ID, r)
		}
	}
}

// With the local writing provider, which sends nothing anywhere, a
// persona built from a private source is generated and run without
// [privacy] send_private_to_provider — the rule the attributes assistant
// applies (llm.PrivateAllowed).
func TestPrivateSourceWithTheLocalProvider(t *testing.T) {
	sw := personasOn
	local := llm.NewLocal("")
	w := newWorld(t, withPersonas(sw), func(o *worldOptions) { o.provider = local })
	w.personas.UseProvider(local)
	w.source("priv1", "私密", publish.Private, careerSource...)
	p := w.persona("博客", "priv1")
	w.svc.refs = nil
	_, run := w.personaRun(w.draftDoc(), p.ID)
	if run.State != RunSucceeded || run.Outcome != OutcomeNoChange {
		t.Fatalf("run %s %s %+v", run.State, run.Outcome, run.Error)
	}
	if pin := run.Personalization.Persona; pin == nil || pin.ID != p.ID || pin.Seq != 1 {
		t.Fatalf("pinned %+v", pin)
	}
}
