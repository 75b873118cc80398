package flowdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

func addMarkdownSeeds(f *testing.F) {
	f.Helper()
	if src, err := os.ReadFile(filepath.Join(goldenRoot, "markdown/sample.md")); err == nil {
		f.Add(string(src))
	}
	for _, c := range renderCases {
		f.Add(RenderMarkdown(c.doc))
	}
	for _, s := range []string{"", "#", "> > >", "- [ ] x\n  - y", "$$", "$a$", "<details>", "</details>",
		"| a |\n|---|\n| b |", "[x](javascript:y)", "***a*b**c*", "````\n```\n````", "##### h\n====="} {
		f.Add(s)
	}
}

func FuzzImportMarkdown(f *testing.F) {
	addMarkdownSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		d, _, err := ImportMarkdown([]byte(src))
		if !utf8.ValidString(src) {
			if err == nil {
				t.Fatal("invalid UTF-8 accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("valid UTF-8 refused: %v", err)
		}
		checkStructure(t, d)
		again, _, _ := ImportMarkdown([]byte(src))
		if !bytes.Equal(CanonicalJSON(d), CanonicalJSON(again)) {
			t.Fatal("import is not deterministic")
		}
		// Rendering the result and importing it again must work too.
		back, _, err := ImportMarkdown([]byte(RenderMarkdown(d)))
		if err != nil {
			t.Fatalf("re-import of rendered Markdown: %v", err)
		}
		checkStructure(t, back)
		_ = RenderText(d)
	})
}

func FuzzDiff(f *testing.F) {
	f.Add("a\n\nb\n\nc", "b\n\na\n\nc!")
	f.Add("我们今天去公园散步", "我们明天去公园跑步")
	f.Add("- x\n- y", "1. x\n2. z")
	f.Fuzz(func(t *testing.T, x, y string) {
		a, _, errA := ImportMarkdown([]byte(x))
		b, _, errB := ImportMarkdown([]byte(y))
		if errA != nil || errB != nil {
			return
		}
		if ch := Diff(a, a.Clone()); len(ch) != 0 {
			t.Fatalf("diff of a document with itself: %+v", ch)
		}
		seen := map[string]bool{}
		for _, c := range Diff(a, b) {
			key := string(c.Kind) + c.BlockID
			if seen[key] {
				t.Fatalf("block %s reported twice", c.BlockID)
			}
			seen[key] = true
			if (c.From < 0) != (c.Kind == Added) || (c.To < 0) != (c.Kind == Deleted) {
				t.Fatalf("inconsistent change %+v", c)
			}
		}
		if utf8.ValidString(x) && utf8.ValidString(y) {
			checkEdits(t, x, y, WordDiff(x, y))
		}
	})
}
