package localedit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEdit feeds arbitrary text to the editor: it never fails on valid
// UTF-8 within the limits, its changes rebuild its output, equation
// placeholders survive, and editing its output again proposes nothing.
func FuzzEdit(f *testing.F) {
	for _, c := range readGolden(f, "testdata/golden.txt") {
		f.Add(strings.Join(c.in, "\n"))
	}
	f.Add("“unclosed quote 其实 in order to")
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
		again, err := Edit(Request{Segments: res.Segments})
		if err != nil || len(again.Edits) != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %+v", s, res.Segments[0], again.Edits)
		}
	})
}
