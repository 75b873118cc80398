package assistant

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/persona/style"
)

// measured is a profile's JSON without its prose: everything that was
// measured, with its evidence.
func measured(t *testing.T, p style.Profile) string {
	t.Helper()
	p.Prose = nil
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A provider that is not the local one adds a prose summary to the style
// profile beside the measured features, rules and evidence, which stay
// exactly what the deterministic learner measured; the provider is shown
// the profile, not the sources, and the call is booked as usage.
func TestStyleProseSitsBesideTheEvidence(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	plain := w.persona("不加描述", "src1")
	w.personas.UseDescriber(w.svc.StyleProse())
	w.model.answer = func(llm.Request) string { return "  作者用短句写自己的经历，语气平实。\n" }
	described := w.persona("加描述", "src1")

	base, _, err := w.personas.Style(ctx, authorA.UserID, plain.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, v, err := w.personas.Style(ctx, authorA.UserID, described.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if base.Prose != nil {
		t.Fatalf("prose without a describer: %+v", base.Prose)
	}
	if p.Prose == nil || p.Prose.Summary != "作者用短句写自己的经历，语气平实。" || p.Prose.Provider != "fake" ||
		p.Prose.Model != "fake-writer-1" || p.Prose.Prompt != ProsePrompt {
		t.Fatalf("prose %+v", p.Prose)
	}
	if measured(t, p) != measured(t, base) {
		t.Fatalf("the prose changed what was measured:\n%s\nwithout prose:\n%s", measured(t, p), measured(t, base))
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(v.Notes) != 0 {
		t.Errorf("notes %v", v.Notes)
	}
	reqs := w.model.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	text := allText(reqs[0])
	if !strings.Contains(text, p.Summary) || strings.Contains(text, careerSource[1]) {
		t.Errorf("the provider was shown:\n%s", text)
	}
	rep, err := w.ledger.Report(1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals[quota.Writing].Events != 1 {
		t.Errorf("booked usage %+v", rep.Totals[quota.Writing])
	}
}

// The local provider adds nothing: the profile is its own description.
func TestLocalProviderAddsNoStyleProse(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn), func(o *worldOptions) { o.provider = llm.NewLocal("") })
	w.source("src1", "加入星火", publish.Public, careerSource...)
	w.personas.UseDescriber(w.svc.StyleProse())
	pn := w.persona("博客", "src1")
	p, _, err := w.personas.Style(ctx, authorA.UserID, pn.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Prose != nil {
		t.Fatalf("the local provider added prose %+v", p.Prose)
	}
}

// A provider that fails leaves the prose out with a note; the version is
// generated and active all the same.
func TestFailedStyleProseIsANote(t *testing.T) {
	w := newWorld(t, withPersonas(personasOn))
	w.source("src1", "加入星火", publish.Public, careerSource...)
	w.personas.UseDescriber(w.svc.StyleProse())
	w.model.answer = func(llm.Request) string { return "   " }
	pn := w.persona("博客", "src1")
	p, v, err := w.personas.Style(ctx, authorA.UserID, pn.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Prose != nil || len(v.Notes) != 1 || !strings.Contains(v.Notes[0], "style prose left out") {
		t.Fatalf("prose %+v, notes %v", p.Prose, v.Notes)
	}
}
