package learning

import (
	"errors"
	"fmt"
	"testing"
)

func obs(kind string, i int, before, after string) Observation {
	return Observation{Key: fmt.Sprintf("o%02d", i), Kind: kind, User: "author-a", Persona: "p1", Doc: "d1",
		Edits: []Edit{{Before: before, After: after}}}
}

const (
	wordy   = "其实我们基本上非常需要进行一次讨论。"
	concise = "我们需要讨论。"
)

func rule(t *testing.T, s Snapshot, id string) RuleStat {
	t.Helper()
	for _, r := range s.Rules {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no rule %s in %+v", id, s.Rules)
	return RuleStat{}
}

func TestActivationThresholds(t *testing.T) {
	for _, c := range []struct {
		accepted, rejected int
		active             bool
	}{
		{3, 0, false}, // 3 positive, but only 3 observations
		{3, 1, false}, // 3 of 4: confidence 0.67
		{4, 0, true},  // 4 of 4: 0.83
		{4, 1, true},  // 4 of 5: 0.71
		{5, 2, false}, // 5 of 7: 0.67
		{6, 2, true},  // 6 of 8: exactly 0.7
		{2, 0, false},
	} {
		var os []Observation
		for i := 0; i < c.accepted; i++ {
			os = append(os, obs(KindAccepted, i, wordy, concise))
		}
		for i := 0; i < c.rejected; i++ {
			os = append(os, obs(KindRejected, 100+i, wordy, concise))
		}
		s, err := Build("author-a", "p1", os)
		if err != nil {
			t.Fatal(err)
		}
		r := rule(t, s, "fewer_fillers")
		if r.Positive != c.accepted || r.Negative != c.rejected || r.Active != c.active {
			t.Errorf("%d accepted, %d rejected: %+v, want active=%v", c.accepted, c.rejected, r, c.active)
		}
	}
}

func TestManualEditsNeverBecomePreferences(t *testing.T) {
	var os []Observation
	for i := 0; i < 10; i++ {
		os = append(os, obs(KindManualEdit, i, wordy, concise), obs(KindEditedAfterAccept, 50+i, wordy, concise))
	}
	s, err := Build("author-a", "p1", os)
	if err != nil {
		t.Fatal(err)
	}
	r := rule(t, s, "fewer_fillers")
	if r.Active || r.Positive != 0 || r.Manual != 20 || s.ManualEdits != 10 {
		t.Fatalf("manual edits: %+v (snapshot manual %d)", r, s.ManualEdits)
	}
}

func TestUndoneAcceptsCountAgainst(t *testing.T) {
	var os []Observation
	for i := 0; i < 4; i++ {
		os = append(os, obs(KindAccepted, i, wordy, concise))
	}
	s, _ := Build("author-a", "p1", os)
	if !rule(t, s, "fewer_fillers").Active {
		t.Fatal("4 of 4 accepts did not activate")
	}
	// The author put the fillers back by hand after two of the accepts.
	os = append(os, obs(KindEditedAfterAccept, 10, concise, wordy), obs(KindEditedAfterAccept, 11, concise, wordy))
	s, _ = Build("author-a", "p1", os)
	if r := rule(t, s, "fewer_fillers"); r.Active || r.Negative != 2 {
		t.Fatalf("after two undos: %+v", r)
	}
}

func TestPersonaScoped(t *testing.T) {
	if _, err := Build("author-a", "", nil); !errors.Is(err, ErrNoPersona) {
		t.Fatalf("err %v, want ErrNoPersona", err)
	}
	o := obs(KindAccepted, 1, wordy, concise)
	o.Persona = "p2"
	if _, err := Build("author-a", "p1", []Observation{o}); !errors.Is(err, ErrForeign) {
		t.Fatalf("err %v, want ErrForeign", err)
	}
	o.Persona = ""
	if _, err := Build("author-a", "p1", []Observation{o}); !errors.Is(err, ErrForeign) {
		t.Fatalf("an observation without persona: err %v, want ErrForeign", err)
	}
}

func TestDetectors(t *testing.T) {
	for _, c := range []struct {
		id            string
		before, after string
		want          int
	}{
		{"fullwidth_punctuation", "我来了,他走了.", "我来了，他走了。", 1},
		{"fullwidth_punctuation", "我来了，他走了。", "我来了,他走了.", -1},
		{"cjk_latin_space", "用Go写的", "用 Go 写的", 1},
		{"active_voice", "文章被我改了。", "我改了文章。", 1},
		{"active_voice", "The bug was fixed by the team.", "The team fixed the bug.", 1},
		{"fewer_exclamations", "太好了！", "很好。", 1},
		{"shorter_sentences", "我们今天在会议室里讨论了很长时间的方案并且最后决定先做原型。", "我们讨论了方案。我们先做原型。", 1},
		{"concise", "完全一样的文字。", "完全一样的文字。", 0},
	} {
		var d detector
		for _, x := range detectors {
			if x.id == c.id {
				d = x
			}
		}
		if got := direction(d, []Edit{{c.before, c.after}}); got != c.want {
			t.Errorf("%s %q -> %q: %d, want %d", c.id, c.before, c.after, got, c.want)
		}
	}
}
