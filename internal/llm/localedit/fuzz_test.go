package localedit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEdit feeds arbitrary text to the editor: it never fails on valid
// UTF-8 within the limits, its changes rebuild its output, equation
// placeholders survive, the output keeps the sentence invariant
// (checkInvariant: the same sentences, each with its facts) and editing it
// again proposes nothing.
func FuzzEdit(f *testing.F) {
	for _, c := range readGolden(f, "testdata/golden.txt") {
		f.Add(strings.Join(c.in, "\n"))
	}
	for _, p := range propertyParts {
		f.Add(p)
	}
	f.Add("“unclosed quote 其实 in order to")
	f.Add("Mr. J. R. Smith vs. Dr. Lee, e.g. U.S. v1.2.3 3.14... etc. The end… Wait... ok. 好。」下一句？！")
	f.Add("`code $x$ https://a.b/c?d=1. 被 被他所 was by by.")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > 4096 {
			return
		}
		res, err := Edit(Request{Segments: []string{s}})
		if err != nil {
			t.Fatalf("Edit(%q): %v", s, err)
		}
		src := []rune(s)
		var b strings.Builder
		at := 0
		for _, c := range res.Edits {
			if c.From < at || c.To > len(src) || string(src[c.From:c.To]) != c.Before {
				t.Fatalf("bad change %+v of %q", c, s)
			}
			b.WriteString(string(src[at:c.From]) + c.After)
			at = c.To
		}
		b.WriteString(string(src[at:]))
		if b.String() != res.Segments[0] {
			t.Fatalf("changes give %q, output %q", b.String(), res.Segments[0])
		}
		if strings.Count(res.Segments[0], "\uFFFC") != strings.Count(s, "\uFFFC") {
			t.Fatalf("equations lost: %q -> %q", s, res.Segments[0])
		}
		if err := checkInvariant(src, []rune(res.Segments[0]), inputFacts(t, s, Auto)); err != nil {
			t.Fatal(err)
		}
		again, err := Edit(Request{Segments: res.Segments})
		if err != nil || len(again.Edits) != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %+v", s, res.Segments[0], again.Edits)
		}
	})
}

// FuzzEditSpans adds a caller's kept span, window and formatting break to
// arbitrary text: no change touches the kept span or leaves the window, no
// change's changed text spans the break, the changes still rebuild the
// output, and the output keeps the sentence invariant.
func FuzzEditSpans(f *testing.F) {
	f.Add("其实我们需要进行一个全面的优化。In order to win, the team made a decision.", 2, 8, 0, 30, 12)
	f.Add("The report was written by the team. We basically ship it.", 26, 34, 3, 50, 26)
	f.Fuzz(func(t *testing.T, s string, k0, k1, w0, w1, br int) {
		if !utf8.ValidString(s) || len(s) > 4096 {
			return
		}
		n := utf8.RuneCountInString(s)
		if n < 2 {
			return
		}
		clamp := func(x int) int { return ((x % (n + 1)) + n + 1) % (n + 1) }
		keep := Span{From: clamp(k0), To: clamp(k1)}
		within := Span{From: clamp(w0), To: clamp(w1)}
		if keep.From > keep.To {
			keep.From, keep.To = keep.To, keep.From
		}
		if within.From > within.To {
			within.From, within.To = within.To, within.From
		}
		brk := 1 + clamp(br)%(n-1)
		res, err := Edit(Request{Segments: []string{s}, Keep: [][]Span{{keep}}, Within: []*Span{&within}, Breaks: [][]int{{brk}}})
		if err != nil {
			t.Fatalf("Edit: %v", err)
		}
		src := []rune(s)
		var b strings.Builder
		at := 0
		for _, c := range res.Edits {
			if c.From < at || c.To > len(src) || string(src[c.From:c.To]) != c.Before {
				t.Fatalf("bad change %+v of %q", c, s)
			}
			if keep.From < keep.To && c.From < keep.To && keep.From < c.To {
				t.Fatalf("change %+v touches the kept span %+v of %q", c, keep, s)
			}
			if c.From < within.From || c.To > within.To {
				t.Fatalf("change %+v leaves the window %+v of %q", c, within, s)
			}
			pre, suf := shared([]rune(c.Before), []rune(c.After))
			if c.From+pre < brk && brk < c.To-suf {
				t.Fatalf("change %+v spans the break at %d of %q", c, brk, s)
			}
			b.WriteString(string(src[at:c.From]) + c.After)
			at = c.To
		}
		b.WriteString(string(src[at:]))
		if b.String() != res.Segments[0] {
			t.Fatalf("changes give %q, output %q", b.String(), res.Segments[0])
		}
		if err := checkInvariant(src, []rune(res.Segments[0]), inputFacts(t, s, Auto)); err != nil {
			t.Fatal(err)
		}
	})
}
