package flowdoc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"
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
		"| a |\n|---|\n| b |", "[x](javascript:y)", "***a*b**c*", "````\n```\n````", "##### h\n=====",
		"<div>\n<img src=\"https://x.example/a.png\" alt=\"a\">\n</div>", "a <br> b\n<br>\nc", "<script>x</script>\n\ny <style>z",
		"x[^1]\n\n[^1]: note\n[^2]: orphan", "中文\n第二行。\n— end", "---\nt: 1\n---\nbody", "+++\n```\n+++", "# a<br>b"} {
		f.Add(s)
	}
	// Inputs past the structural limits.
	var deepList, deepDetails, wide strings.Builder
	for i := 0; i < MaxListDepth+3; i++ {
		deepList.WriteString(strings.Repeat("  ", i) + "- level\n")
	}
	for i := 0; i < MaxDepth+2; i++ {
		deepDetails.WriteString("<details>\n<summary>s</summary>\n\n")
	}
	deepDetails.WriteString("deep\n\n" + strings.Repeat("</details>\n\n", MaxDepth+2))
	wide.WriteString(strings.Repeat("| h ", MaxTableColumns+5) + "|\n" + strings.Repeat("|---", MaxTableColumns+5) + "|\n")
	f.Add(deepList.String())
	f.Add(deepDetails.String())
	f.Add(wide.String())
	f.Add("> " + strings.Repeat("👩\u200d", 20) + "👩 long icon")
	f.Add("![x](https://u:p@host/a.png)\n\n[y](https://)")
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

// fuzzRuns cuts s into runs at the bytes of cuts, giving each run the
// marks and link the cut byte selects.
func fuzzRuns(s string, cuts []byte) []Run {
	var runs []Run
	rs := []rune(s)
	start := 0
	for i, c := range cuts {
		end := start + int(c%8)
		if i == len(cuts)-1 || end > len(rs) {
			end = len(rs)
		}
		r := Run{Text: string(rs[start:end])}
		for bit, m := range Marks {
			if c&(1<<(bit+3)) != 0 {
				r.Marks = append(r.Marks, m)
			}
		}
		if c == 0xFF {
			r = Run{Equation: `x_1`}
		} else if c%5 == 0 {
			r.Link = "https://example.com/a?b=c&d=(e)"
		}
		runs = append(runs, r)
		start = end
		if start >= len(rs) {
			break
		}
	}
	if start < len(rs) {
		runs = append(runs, Run{Text: string(rs[start:])})
	}
	return runs
}

// FuzzMarkdownRoundTrip checks that the text of text blocks, list items
// and table cells survives RenderMarkdown and ImportMarkdown, whatever
// characters and marks it has.
func FuzzMarkdownRoundTrip(f *testing.F) {
	f.Add("plain text", []byte{3, 9, 17})
	f.Add("*a* _b_ `c` [d](e) <f> # g\n- h\n1. i", []byte{1, 2, 200, 5, 0xFF})
	f.Add("  lead\ttab\n  next  ", []byte{4, 12, 33})
	f.Add("中文 👍🏽 e\u0301 $5 ~~x~~ \\", []byte{7, 7, 7, 64})
	f.Add("a!b", []byte{2, 40})
	f.Add("aXXXXXXX2b", []byte{1, 0xFF, 3})
	f.Fuzz(func(t *testing.T, s string, cuts []byte) {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return
		}
		runs := fuzzRuns(s, cuts)
		heading := cloneRuns(runs)
		for i := range heading {
			heading[i].Text = strings.ReplaceAll(heading[i].Text, "\n", " ")
		}
		d := doc(
			Block{ID: "p", Type: Paragraph, RichText: runs},
			Block{ID: "h", Type: Heading, Attrs: &Attrs{Level: 2}, RichText: heading},
			Block{ID: "q", Type: Quote, RichText: runs},
			Block{ID: "l", Type: List, Items: []ListItem{{RichText: runs, Items: []ListItem{{RichText: runs}}}}},
			Block{ID: "t", Type: Table, Attrs: &Attrs{Header: true}, Rows: []TableRow{{Cells: [][]Run{txt("h")}}, {Cells: [][]Run{runs}}}},
			Block{ID: "c", Type: Code, Attrs: &Attrs{Language: "go", Text: s}},
		)
		md := RenderMarkdown(d)
		back, _, err := ImportMarkdown([]byte(md))
		if err != nil {
			t.Fatal(err)
		}
		want := roundTripTexts(d)
		got := roundTripTexts(back)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("text changed through Markdown:\n%s\n got  %q\n want %q", md, got, want)
		}
		// Code comes back as it was, less a final line break; Markdown
		// reads every line end as "\n".
		wantCode := strings.TrimSuffix(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s), "\n")
		var gotCode *Block
		for i := range back.Blocks {
			if back.Blocks[i].Type == Code {
				gotCode = &back.Blocks[i]
			}
		}
		if gotCode == nil || gotCode.Attrs == nil || gotCode.Attrs.Text != wantCode || gotCode.Attrs.Language != "go" {
			t.Fatalf("code changed through Markdown:\n%s\n got  %+v\n want %q", md, gotCode, wantCode)
		}
		// Marks and links come back on every character too (white space
		// may lose its marks: Markdown moves it outside the delimiters).
		if strings.TrimSpace(PlainText(runs)) != "" {
			if g, w := styled(back.Blocks[0].RichText), styled(runs); !reflect.DeepEqual(g, w) {
				t.Fatalf("marks changed through Markdown:\n%s\n got  %q\n want %q", md, g, w)
			}
		}
	})
}

// roundTripTexts lists the text of every text block, list item and table
// cell, with blank text left out (an empty block disappears in Markdown).
func roundTripTexts(d Document) []string {
	var out []string
	add := func(kind string, runs []Run) {
		if s := PlainText(runs); strings.TrimSpace(s) != "" {
			out = append(out, kind+": "+s)
		}
	}
	var items func([]ListItem)
	items = func(its []ListItem) {
		for _, it := range its {
			add("item", it.RichText)
			items(it.Items)
		}
	}
	for _, b := range d.Blocks {
		switch b.Type {
		case Paragraph, Heading, Quote:
			add(string(b.Type), b.RichText)
		case List:
			items(b.Items)
		case Table:
			for _, r := range b.Rows {
				for _, c := range r.Cells {
					add("cell", c)
				}
			}
		}
	}
	return out
}

// styled lists each character of runs with its link and, unless it is
// white space, its marks.
func styled(runs []Run) []string {
	var out []string
	for _, r := range runs {
		if r.Equation != "" && r.Text == "" {
			out = append(out, "$"+r.Equation+"$")
			continue
		}
		for _, c := range r.Text {
			s := string(c) + " " + r.Link
			if !unicode.IsSpace(c) {
				s += fmt.Sprint(r.Marks)
			}
			out = append(out, s)
		}
	}
	return out
}

// FuzzDiffEdits edits a document by a script (delete, move, modify,
// insert) and checks what Diff reports against what was done.
func FuzzDiffEdits(f *testing.F) {
	f.Add(uint8(12), []byte{1, 5, 2, 7, 3, 0, 4, 9})
	f.Add(uint8(40), []byte{2, 39, 2, 0, 2, 20, 1, 1, 3, 3})
	f.Fuzz(func(t *testing.T, n uint8, script []byte) {
		var a Document
		for i := 0; i < int(n%64); i++ {
			a.Blocks = append(a.Blocks, para(fmt.Sprintf("p%d", i), fmt.Sprintf("block %d 第%d段", i, i)))
		}
		b := a.Clone()
		added := 0
		for i := 0; i+1 < len(script); i += 2 {
			op, arg := script[i]%4, int(script[i+1])
			if len(b.Blocks) == 0 && op != 3 {
				continue
			}
			switch op {
			case 0: // delete
				k := arg % len(b.Blocks)
				b.Blocks = append(b.Blocks[:k], b.Blocks[k+1:]...)
			case 1: // move to the end
				k := arg % len(b.Blocks)
				blk := b.Blocks[k]
				b.Blocks = append(append(b.Blocks[:k], b.Blocks[k+1:]...), blk)
			case 2: // modify
				k := arg % len(b.Blocks)
				b.Blocks[k].RichText = txt(PlainText(b.Blocks[k].RichText) + " 改")
			case 3: // insert
				added++
				blk := para(fmt.Sprintf("new%d", added), "inserted")
				k := arg % (len(b.Blocks) + 1)
				b.Blocks = append(b.Blocks[:k], append([]Block{blk}, b.Blocks[k:]...)...)
			}
		}
		ch := Diff(a, b)
		if again := Diff(a, b); !reflect.DeepEqual(ch, again) {
			t.Fatal("Diff is not deterministic")
		}
		inA, inB := map[string]int{}, map[string]int{}
		for i, blk := range a.Blocks {
			inA[blk.ID] = i
		}
		for j, blk := range b.Blocks {
			inB[blk.ID] = j
		}
		reported := map[string]BlockChange{}
		lastTo := -1
		for _, c := range ch {
			reported[c.BlockID] = c
			_, wasA := inA[c.BlockID]
			_, isB := inB[c.BlockID]
			switch c.Kind {
			case Added:
				if wasA || !isB {
					t.Fatalf("%s reported added: %+v", c.BlockID, c)
				}
			case Deleted:
				if !wasA || isB {
					t.Fatalf("%s reported deleted: %+v", c.BlockID, c)
				}
			case Moved, Modified:
				if !wasA || !isB || c.From != inA[c.BlockID] || c.To != inB[c.BlockID] {
					t.Fatalf("%s reported %s with wrong places: %+v", c.BlockID, c.Kind, c)
				}
			}
			if c.Kind != Deleted {
				if c.To <= lastTo {
					t.Fatalf("changes not in b's order: %+v", ch)
				}
				lastTo = c.To
			}
		}
		// Every id only on one side is reported; the blocks not flagged as
		// moved keep their order, and they are as many as can keep it.
		var stay, common []int
		for _, blk := range b.Blocks {
			i, ok := inA[blk.ID]
			if !ok {
				if reported[blk.ID].Kind != Added {
					t.Fatalf("added block %s not reported", blk.ID)
				}
				continue
			}
			common = append(common, i)
			c, ok := reported[blk.ID]
			if !ok || !c.Moved {
				stay = append(stay, i)
			}
			if !ok && !bytes.Equal(EncodeContent(a.Blocks[i]), EncodeContent(blk)) {
				t.Fatalf("modified block %s not reported", blk.ID)
			}
		}
		for k := 1; k < len(stay); k++ {
			if stay[k] < stay[k-1] {
				t.Fatalf("blocks not flagged as moved are out of order: %v", stay)
			}
		}
		if want := longestIncreasing(common); len(stay) != want {
			t.Fatalf("%d blocks kept their place, but %d could", len(stay), want)
		}
		for _, blk := range a.Blocks {
			if _, ok := inB[blk.ID]; !ok && reported[blk.ID].Kind != Deleted {
				t.Fatalf("deleted block %s not reported", blk.ID)
			}
		}
	})
}

// longestIncreasing is the O(n²) length of a longest increasing
// subsequence, to check Diff's faster one.
func longestIncreasing(s []int) int {
	best := 0
	l := make([]int, len(s))
	for i := range s {
		l[i] = 1
		for j := 0; j < i; j++ {
			if s[j] < s[i] && l[j]+1 > l[i] {
				l[i] = l[j] + 1
			}
		}
		best = max(best, l[i])
	}
	return best
}
