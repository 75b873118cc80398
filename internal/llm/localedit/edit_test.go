package localedit

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestEditRefuses(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want error
	}{
		{"invalid utf-8", Request{Segments: []string{"ok", "bad \xff byte"}}, ErrInvalidText},
		{"too many bytes", Request{Segments: []string{strings.Repeat("a", MaxBytes+1)}}, ErrTooLarge},
		{"too many segments", Request{Segments: make([]string, MaxSegments+1)}, ErrTooLarge},
		{"unknown rule", Request{Segments: []string{"x"}, Rules: []RuleID{"rhyme"}}, ErrUnknownRule},
		{"unknown language", Request{Segments: []string{"x"}, Lang: "fr"}, ErrBadLang},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Edit(tt.req); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := ParseRules([]string{"filler", "nope"}); !errors.Is(err, ErrUnknownRule) {
		t.Fatalf("ParseRules: %v", err)
	}
}

// A result without edits says why, with a stable code.
func TestNoChangeReasons(t *testing.T) {
	tests := []struct {
		name  string
		req   Request
		code  string
		words string
	}{
		{"empty", Request{Segments: []string{"", "  \n"}}, CodeEmpty, "no text"},
		{"nothing found", Request{Segments: []string{"The sky is blue.", "今天天气很好。"}}, CodeNothingFound, "filler, strong-verbs"},
		{"only keep enabled", Request{Segments: []string{"In order to win, train."}, Rules: []RuleID{Keep}}, CodeNothingFound, "no editing rule"},
		{"protected", Request{Segments: []string{`"In order to win," she said.`}}, CodeProtected, "protected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Edit(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != NoChange || res.Code != tt.code || !strings.Contains(res.Reason, tt.words) || len(res.Edits) != 0 {
				t.Fatalf("result %+v, want code %s with %q", res, tt.code, tt.words)
			}
			if !slices.Equal(res.Segments, tt.req.Segments) {
				t.Fatalf("segments changed: %q", res.Segments)
			}
		})
	}
}

// Offsets are code points: an emoji or a CJK character before an edit
// counts one.
func TestOffsetsAreCodePoints(t *testing.T) {
	res, err := Edit(Request{Segments: []string{"🙂 Basically, it works; it basically works."}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Edits) != 2 || res.Edits[0].From != 2 || res.Edits[0].Before != "Basically, i" || res.Edits[0].After != "I" ||
		res.Edits[1].Before != "basically " || res.Segments[0] != "🙂 It works; it works." {
		t.Fatalf("%+v", res)
	}
}

// An edit that later grows (the filler cut inside 进行一个全面的优化, then the
// strong verb) is one change naming both rules.
func TestOverlappingEditsMerge(t *testing.T) {
	res, err := Edit(Request{Segments: []string{"我们需要进行一个全面的优化。"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Change{Segment: 0, From: 4, To: 13, Before: "进行一个全面的优化", After: "全面优化", Rules: []RuleID{Filler, StrongVerbs}}
	if len(res.Edits) != 1 || !equalChange(res.Edits[0], want) {
		t.Fatalf("edits %+v, want %+v", res.Edits, want)
	}
}

func equalChange(a, b Change) bool {
	return a.Segment == b.Segment && a.From == b.From && a.To == b.To && a.Before == b.Before && a.After == b.After && slices.Equal(a.Rules, b.Rules)
}

// The engine is safe for concurrent use (run with -race) and deterministic.
func TestConcurrentDeterministic(t *testing.T) {
	req := Request{Segments: []string{"其实我们需要进行一个全面的优化。", "In order to win, the team made a decision."}}
	want, err := Edit(req)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := Edit(req)
			if err != nil || !slices.Equal(got.Segments, want.Segments) || len(got.Edits) != len(want.Edits) {
				t.Errorf("got %+v, %v", got, err)
			}
		}()
	}
	wg.Wait()
}

func TestCanHonour(t *testing.T) {
	tests := []struct {
		kind  Personalization
		instr string
		ok    bool
		rules []RuleID
	}{
		{EditingPreset, "按所选编辑预设编辑当前范围，并保留事实、观点和作者声音", true, allRules()},
		{EditingPreset, "", true, allRules()},
		{EditingPreset, "把它翻译成英文", false, nil},
		{WritingPreset, "精简", false, nil},
		{Persona, "精简", false, nil},
		{None, "帮我精简一下", true, []RuleID{Filler, StrongVerbs, Jargon, Cliche}},
		{None, "删掉废话", true, []RuleID{Filler}},
		{None, "去掉套话和行话", true, []RuleID{Jargon, Cliche}},
		{None, "Make it concise", true, []RuleID{Filler, StrongVerbs, Jargon, Cliche}},
		{None, "tighten this paragraph", true, []RuleID{Filler, StrongVerbs, Jargon, Cliche}},
		{None, "use active voice", true, []RuleID{ActiveVoice}},
		{None, "rewrite in a news style", false, nil},
		{None, "扩写这一段", false, nil},
		{None, "精简并翻译成英文", false, nil},
		{None, "translate to French", false, nil},
		{None, "写得更有感染力", false, nil},
		{None, "", false, nil},
		{"mood", "精简", false, nil},
	}
	for _, tt := range tests {
		v := CanHonour(tt.kind, tt.instr)
		if v.OK != tt.ok || !slices.Equal(v.Rules, tt.rules) || v.Reason == "" {
			t.Errorf("CanHonour(%q, %q) = %+v, want ok=%v rules=%v", tt.kind, tt.instr, v, tt.ok, tt.rules)
		}
	}
}

// Broken rule data is reported with the file and line, never a panic.
func TestRuleDataErrors(t *testing.T) {
	for _, tt := range []struct{ pattern, repl, flags, want string }{
		{"", "x", "", "empty pattern"},
		{"a  b", "x", "", "double space"},
		{"x? y", "", "", "first element"},
		{"<V>", "x", "", "for Chinese"},
		{"a", "$3", "", "bad element reference"},
		{"a", "{go}", "", "needs a {verb}"},
		{"a", "", "loud", "unknown flag"},
	} {
		_, err := compileRow(langEN, tt.pattern, tt.repl, tt.flags)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("compileRow(%q, %q, %q) = %v, want %q", tt.pattern, tt.repl, tt.flags, err, tt.want)
		}
	}
}
