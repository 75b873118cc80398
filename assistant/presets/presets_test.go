package presets

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/llm/localedit"
)

func TestBuiltin(t *testing.T) {
	ps, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	names := map[string]bool{}
	var writing, editing []Preset
	for _, p := range ps {
		if ids[p.ID] || p.ID == "" || strings.ContainsAny(p.ID, " /") {
			t.Errorf("id %q empty, repeated or not a slug", p.ID)
		}
		ids[p.ID] = true
		names[p.Name] = true
		if p.Name == "" || p.Description == "" || strings.TrimSpace(p.Prompt) == "" {
			t.Errorf("%s: name, description and prompt are required", p.ID)
		}
		if len(p.Sources) == 0 {
			t.Errorf("%s: no source notes", p.ID)
		}
		for _, s := range p.Sources {
			if s.Title == "" || s.Author == "" || s.Note == "" {
				t.Errorf("%s: source %+v lacks a title, an author or a note", p.ID, s)
			}
		}
		switch p.Kind {
		case Writing:
			writing = append(writing, p)
			if len(p.Rules) != 0 {
				t.Errorf("%s: a writing preset has no rules", p.ID)
			}
		case Editing:
			editing = append(editing, p)
		default:
			t.Errorf("%s: kind %q", p.ID, p.Kind)
		}
	}
	if len(writing) != 10 {
		t.Errorf("%d writing presets, want 10", len(writing))
	}
	for _, n := range []string{"清晰简洁", "自然口语", "深度分析", "技术教程", "新闻特写"} {
		if !names[n] {
			t.Errorf("no writing preset %q", n)
		}
	}
	if len(editing) != 1 || editing[0].Name != "六条文章强化规则" {
		t.Fatalf("editing presets %+v, want the one 六条文章强化规则", editing)
	}
	// One preset holding the six rules the local engine runs, in order.
	six := editing[0]
	if len(six.Rules) != len(localedit.Rules) {
		t.Fatalf("%d rules, want %d", len(six.Rules), len(localedit.Rules))
	}
	for i, r := range six.Rules {
		if r.ID != string(localedit.Rules[i].ID) || r.Name == "" || r.Instruction == "" {
			t.Errorf("rule %d = %+v, want id %s with a name and an instruction", i+1, r, localedit.Rules[i].ID)
		}
	}
	full := six.FullPrompt()
	if !strings.Contains(full, "1. 删掉废话和冗余：") || !strings.Contains(full, "6. 保留事实、观点和作者声音：") {
		t.Errorf("full prompt:\n%s", full)
	}
	// The local engine honours the editing preset and no writing preset.
	if v := localedit.CanHonour(localedit.EditingPreset, ""); !v.OK {
		t.Errorf("editing preset not honoured: %s", v.Reason)
	}
	if v := localedit.CanHonour(localedit.WritingPreset, ""); v.OK {
		t.Error("a writing preset honoured by rules")
	}
}

// Builtin hands out copies: a caller's change does not leak into the next.
func TestBuiltinCopies(t *testing.T) {
	a, _ := Builtin()
	a[0].Sources[0].Title = "changed"
	a[len(a)-1].Rules[0].ID = "changed"
	b, _ := Builtin()
	if b[0].Sources[0].Title == "changed" || b[len(b)-1].Rules[0].ID == "changed" {
		t.Fatal("Builtin shares its data")
	}
}

func TestLocalizeAndDetectLanguage(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if p.NameEN == "" || p.DescriptionEN == "" {
			t.Errorf("preset %s has no English name or description", p.ID)
		}
		if n, d := Localize(p.ID, p.Name, p.Description, English); n != p.NameEN || d != p.DescriptionEN {
			t.Errorf("Localize(%s, en) = %q, %q", p.ID, n, d)
		}
		if n, d := Localize(p.ID, p.Name, p.Description, Chinese); n != p.Name || d != p.Description {
			t.Errorf("Localize(%s, zh) = %q, %q", p.ID, n, d)
		}
	}
	// An admin's own words are never replaced.
	if n, d := Localize("clear-concise", "我的预设", "我的说明", English); n != "我的预设" || d != "我的说明" {
		t.Errorf("a renamed preset was localized: %q %q", n, d)
	}
	for text, want := range map[string]string{
		"We chose Pebble for the store.":     English,
		"我们为存储选用了 Pebble，因为它简单可靠。":           Chinese,
		"The word 你好 means hello in Chinese": English,
		"2026-07-01 12:00 ```":               "",
		"":                                   "",
	} {
		if got := DetectLanguage(text); got != want {
			t.Errorf("DetectLanguage(%q) = %q, want %q", text, got, want)
		}
	}
}
