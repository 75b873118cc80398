package assistant

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/task"
)

func TestBuiltinPresetsAreSeededOnce(t *testing.T) {
	w := newWorld(t)
	writing, err := w.svc.Presets(ctx, WritingPreset, false)
	if err != nil {
		t.Fatal(err)
	}
	editing, _ := w.svc.Presets(ctx, EditingPreset, false)
	if len(writing) != 10 || len(editing) != 1 {
		t.Fatalf("%d writing and %d editing presets, want 10 and 1", len(writing), len(editing))
	}
	names := map[string]bool{}
	for _, p := range writing {
		names[p.Name] = true
		d, err := w.svc.PresetAdmin(ctx, admin, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Current.Sources) == 0 || d.Current.Prompt == "" || !p.Builtin || p.Version.Number != 1 {
			t.Fatalf("preset %s: %+v", p.ID, d.Current)
		}
	}
	for _, n := range []string{"清晰简洁", "自然口语", "深度分析", "技术教程", "新闻特写"} { // the seed names these
		if !names[n] {
			t.Fatalf("built-in %s missing", n)
		}
	}
	six, _ := w.svc.PresetAdmin(ctx, admin, "six-rules")
	if six.Preset.Name != "六条文章强化规则" || len(six.Current.Rules) != 6 || len(six.Current.Sources) == 0 ||
		six.Current.Rules[0].ID != "filler" || six.Current.Rules[5].ID != "keep" {
		t.Fatalf("six rules: %+v", six.Current)
	}
	// The selector listing carries no prompt text.
	raw := string(mustJSON(writing))
	if strings.Contains(raw, "prompt") || strings.Contains(raw, "先说结论，再给理由") {
		t.Fatalf("the selector listing leaks prompt text: %s", raw)
	}
	// An edited built-in survives the next seeding untouched.
	if _, err := w.svc.EditPreset(ctx, admin, "clear-concise", PresetInput{Prompt: "admin's own prompt"}); err != nil {
		t.Fatal(err)
	}
	if err := w.svc.seedPresets(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ := w.svc.PresetAdmin(ctx, admin, "clear-concise")
	if d.Preset.Version.Number != 2 || d.Current.Prompt != "admin's own prompt" || len(d.Versions) != 2 {
		t.Fatalf("after reseeding: %+v", d.Preset.Version)
	}
	all, _ := w.svc.Presets(ctx, "", true)
	if len(all) != 11 {
		t.Fatalf("%d presets after reseeding", len(all))
	}
}

func TestPresetAdminLifecycle(t *testing.T) {
	w := newWorld(t)
	if _, err := w.svc.CreatePreset(ctx, authorA, PresetInput{Type: WritingPreset, Name: "x", Prompt: "y"}); errs.KindOf(err) != errs.Forbidden {
		t.Fatalf("a non-admin created a preset: %v", err)
	}
	if _, err := w.svc.PresetAdmin(ctx, authorA, "clear-concise"); errs.KindOf(err) != errs.Forbidden {
		t.Fatalf("a non-admin read a prompt: %v", err)
	}
	p, err := w.svc.CreatePreset(ctx, admin, PresetInput{Type: EditingPreset, Name: "术语统一", Description: "统一术语",
		Rules: []Rule{{Name: "统一术语", Instruction: "同一概念用同一个词"}}, Sources: []Source{{Title: "house style"}}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Version.Number != 1 || !strings.HasPrefix(p.Version.ID, "pv") || p.Order <= 10 {
		t.Fatalf("created %+v", p)
	}
	if _, err := w.svc.CreatePreset(ctx, admin, PresetInput{Type: "reading", Name: "x", Prompt: "y"}); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("bad type: %v", err)
	}
	if _, err := w.svc.EditPreset(ctx, admin, p.ID, PresetInput{Type: WritingPreset}); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("a type change: %v", err)
	}
	cp, err := w.svc.CopyPreset(ctx, admin, "six-rules", "")
	if err != nil {
		t.Fatal(err)
	}
	cv, _ := w.svc.PresetAdmin(ctx, admin, cp.ID)
	if cp.Type != EditingPreset || cv.Current.CopiedFrom != "six-rules@1" || len(cv.Current.Rules) != 6 || cp.Builtin {
		t.Fatalf("copy %+v %+v", cp, cv.Current)
	}
	order, err := w.svc.ReorderPresets(ctx, admin, EditingPreset, []string{cp.ID, p.ID})
	if err != nil {
		t.Fatal(err)
	}
	if order[0].ID != cp.ID || order[1].ID != p.ID || order[2].ID != "six-rules" {
		t.Fatalf("order %v", []string{order[0].ID, order[1].ID, order[2].ID})
	}
	listed, _ := w.svc.Presets(ctx, EditingPreset, false)
	if listed[0].ID != cp.ID || listed[2].ID != "six-rules" {
		t.Fatal("the listing does not follow the order")
	}
	if _, err := w.svc.ArchivePreset(ctx, admin, p.ID); err != nil {
		t.Fatal(err)
	}
	if listed, _ = w.svc.Presets(ctx, EditingPreset, false); len(listed) != 2 {
		t.Fatalf("an archived preset is listed: %d", len(listed))
	}
	if listed, _ = w.svc.Presets(ctx, EditingPreset, true); len(listed) != 3 {
		t.Fatalf("archived presets are listed on request: %d", len(listed))
	}
	doc := w.article(1, false)
	_, err = w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, EditingPreset: p.ID})
	if codeOf(err) != CodePresetArchived {
		t.Fatalf("a request with an archived preset: %v", err)
	}
	if v, err := w.svc.PresetVersionAdmin(ctx, admin, p.ID, 1); err != nil || v.Rules[0].Instruction != "同一概念用同一个词" {
		t.Fatalf("an archived version must stay readable: %+v %v", v, err)
	}
	if _, err := w.svc.RestorePreset(ctx, admin, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, run := w.assist(AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"}, EditingPreset: p.ID}); run.State != RunSucceeded {
		t.Fatalf("restored preset: run %s", run.State)
	}
}

// A queued run keeps the preset version it pinned when an admin edits
// and then archives the preset before it runs.
func TestQueuedRunKeepsItsPinnedPresetVersion(t *testing.T) {
	w := newWorld(t, func(o *worldOptions) { o.noStart = true })
	doc := w.article(2, false)
	q, err := w.svc.Assist(ctx, authorA, AssistRequest{Doc: doc, Scope: Scope{Kind: ScopeBlock, Block: "p1"},
		Instruction: "tighten", WritingPreset: "news-feature"})
	if err != nil {
		t.Fatal(err)
	}
	pin := *q.Run.Personalization.Preset
	if pin.Type != WritingPreset || pin.ID != "news-feature" || pin.Number != 1 || pin.VersionID == "" || pin.Name != "新闻特写" {
		t.Fatalf("pin %+v", pin)
	}
	// The pin is in the task payload too.
	tid, _ := task.ParseID(q.Run.Task)
	tk, err := w.runner.Get(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	var pl payload
	if err := kv.Unmarshal(tk.Payload, &pl); err != nil || *pl.Personalization.Preset != pin {
		t.Fatalf("payload pin %+v %v", pl.Personalization.Preset, err)
	}
	// While it waits, the admin edits the preset twice and archives it.
	if _, err := w.svc.EditPreset(ctx, admin, "news-feature", PresetInput{Prompt: "EDITED PROMPT v2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.EditPreset(ctx, admin, "news-feature", PresetInput{Prompt: "EDITED PROMPT v3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.ArchivePreset(ctx, admin, "news-feature"); err != nil {
		t.Fatal(err)
	}
	w.start()
	run := w.wait(q.Run.ID)
	if run.State != RunSucceeded || *run.Personalization.Preset != pin {
		t.Fatalf("run %s pin %+v", run.State, run.Personalization.Preset)
	}
	reqs := w.model.requests()
	prompt := ""
	for _, m := range reqs[0].Messages {
		prompt += m.Content
	}
	if !strings.Contains(prompt, "用新闻特写的风格写作") || strings.Contains(prompt, "EDITED PROMPT") || !strings.Contains(prompt, "(version 1)") {
		t.Fatalf("the run did not use its pinned version:\n%s", prompt)
	}
	// A pin that no longer matches its version fails the run loudly.
	v1, _ := w.svc.loadPresetVersion(w.db, "news-feature", 1)
	v1.Prompt = "tampered"
	b := w.db.NewBatch()
	kv.SetRecord(b, presetVerKey("news-feature", 1), v1)
	w.db.Apply(b, kv.Sync)
	b.Close()
	if _, err := w.svc.pinned(pin); errs.KindOf(err) != errs.Corrupt {
		t.Fatalf("a tampered pinned version: %v", err)
	}
}
