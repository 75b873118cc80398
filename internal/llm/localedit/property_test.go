package localedit

import (
	"strings"
	"testing"
)

// allInputs are the inputs of every golden case, with the case's options.
func allInputs(t testing.TB) []goldenCase {
	return append(readGolden(t, "testdata/golden.txt"), readGolden(t, "testdata/heldback.txt")...)
}

// Editing an edited text proposes nothing: the engine runs to a fixed point.
func TestIdempotent(t *testing.T) {
	for _, c := range allInputs(t) {
		first, err := Edit(Request{Segments: c.in, Lang: c.lang, Rules: c.rules})
		if err != nil {
			t.Fatal(err)
		}
		again, err := Edit(Request{Segments: first.Segments, Lang: c.lang, Rules: c.rules})
		if err != nil {
			t.Fatal(err)
		}
		if again.Outcome != NoChange || len(again.Edits) != 0 {
			t.Errorf("%s: editing the output again proposes %+v", c.name, again.Edits)
		}
	}
}

// The changes describe the output exactly: applied to the input, in code
// points, they give the output; they are sorted, disjoint and name a rule.
func TestChangesRebuildOutput(t *testing.T) {
	for _, c := range allInputs(t) {
		res, err := Edit(Request{Segments: c.in, Lang: c.lang, Rules: c.rules})
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range c.in {
			src := []rune(in)
			var b strings.Builder
			at := 0
			for _, ch := range res.Edits {
				if ch.Segment != i {
					continue
				}
				if ch.From < at || ch.To < ch.From || ch.To > len(src) || string(src[ch.From:ch.To]) != ch.Before || len(ch.Rules) == 0 {
					t.Fatalf("%s: bad change %+v", c.name, ch)
				}
				b.WriteString(string(src[at:ch.From]))
				b.WriteString(ch.After)
				at = ch.To
			}
			b.WriteString(string(src[at:]))
			if b.String() != res.Segments[i] {
				t.Errorf("%s: changes give %q, output is %q", c.name, b.String(), res.Segments[i])
			}
		}
	}
}

// protectedSpans returns the text of every protected span of s: quotes,
// first-person facts, numbers, dates, names, code, links and equations.
func protectedSpans(t testing.TB, s string, lg Lang) []string {
	t.Helper()
	d, err := loadData()
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{d: d}
	if e.seg, err = zhSegmenter(); err != nil {
		t.Fatal(err)
	}
	force := lang(0)
	switch lg {
	case Chinese:
		force = langZH
	case English:
		force = langEN
	}
	a := e.analyse([]rune(s), force)
	var out []string
	for _, at := range a.atoms {
		if a.atom[at.start] != 0 && a.atoms[a.atom[at.start]-1] == at { // not merged away
			out = append(out, string(a.text[at.start:at.end]))
		}
	}
	for i := 0; i < len(a.hard); {
		if a.hard[i] == 0 {
			i++
			continue
		}
		j := i
		for j < len(a.hard) && a.hard[j] != 0 {
			j++
		}
		out = append(out, string(a.text[i:j]))
		i = j
	}
	return out
}

// Every protected span of the input survives in the output, and every
// character of a number, date, name, quote, code span, link or equation
// is still there.
func TestProtectedSurvive(t *testing.T) {
	for _, c := range allInputs(t) {
		res, err := Edit(Request{Segments: c.in, Lang: c.lang, Rules: c.rules})
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range c.in {
			for _, p := range protectedSpans(t, in, c.lang) {
				if !strings.Contains(res.Segments[i], p) {
					t.Errorf("%s: protected %q lost: %q -> %q", c.name, p, in, res.Segments[i])
				}
			}
			if strings.Count(res.Segments[i], "\uFFFC") != strings.Count(in, "\uFFFC") {
				t.Errorf("%s: equation placeholders changed", c.name)
			}
		}
	}
	// The detector finds each kind in the golden inputs (so the property
	// above is not vacuous).
	for _, s := range []struct{ text, span string }{
		{"In order to reach 1,000 users, the team will utilize ads.", "1,000"},
		{"On March 5, 2024, the board made a decision.", "2024"},
		{"The letter was signed by Marie Curie.", "Marie Curie"},
		{`He said "in order to win, we utilize everything" and left.`, `"in order to win, we utilize everything"`},
		{"Call `make a decision` in order to start.", "`make a decision`"},
		{"See https://example.com/in-order-to/utilize for details.", "https://example.com/in-order-to/utilize"},
		{"In order to solve \uFFFC, we utilize \uFFFC twice.", "\uFFFC"},
		{"In 2019 I made a decision to quit my job.", "2019"},
		{"In 2019 I never made a decision to quit my job.", "never"},
		{"2024年3月5日，公司做出了决定。", "2024年3月5日"},
		{"张伟其实很忙。", "张伟"},
		{"他说：“其实我们进行了讨论。”", "“其实我们进行了讨论。”"},
		{"标题是「众所周知的秘密」。", "「众所周知的秘密」"},
		{"我2018年其实进行了调研。", "我"},
		{"我2018年没有进行调研。", "没有"},
		{"这次升级打通了两个系统。", "两个"},
	} {
		spans := protectedSpans(t, s.text, Auto)
		found := false
		for _, p := range spans {
			if strings.Contains(p, s.span) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: protected spans %q, want one holding %q", s.text, spans, s.span)
		}
	}
}

// The held-back cases were written with the golden ones and are not tuned
// on: the test reports every failure and the pass rate, and fails only if
// the rate falls under half (a regression, not a finding).
func TestHeldBack(t *testing.T) {
	cases := readGolden(t, "testdata/heldback.txt")
	pass := 0
	for _, c := range cases {
		if p := c.check(t); p != "" {
			t.Logf("held-back miss %q (heldback.txt:%d):\n%s", c.name, c.line, p)
			continue
		}
		pass++
	}
	t.Logf("held-back: %d of %d pass (%.0f%%)", pass, len(cases), 100*float64(pass)/float64(len(cases)))
	if pass*2 < len(cases) {
		t.Errorf("held-back pass rate %d/%d fell under half", pass, len(cases))
	}
}
