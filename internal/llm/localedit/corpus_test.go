package localedit

import (
	"flag"
	"sort"
	"strings"
	"testing"
)

var showEdits = flag.Bool("edits", false, "TestCorpusFires: log every edit of the corpus, to read them")

// TestCorpusFires runs every rule over the corpus articles
// (testdata/corpus.*.txt) and logs how often each rule and each pattern row
// fires (go test ./internal/llm/localedit -run TestCorpusFires -v, with
// -edits to read every edit). The rules must find something in both
// languages, and every edit keeps the invariant (TestInvariantCorpus).
func TestCorpusFires(t *testing.T) {
	perRule := map[RuleID]int{}
	fired := map[*row]int{}
	words := 0
	for _, file := range []string{"testdata/corpus.en.txt", "testdata/corpus.zh.txt"} {
		for _, p := range corpusParagraphsFrom(t, file) {
			words += len(strings.Fields(p))
			res, err := edit(Request{Segments: []string{p}}, func(e *engine) { e.fired = fired })
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range res.Edits {
				for _, r := range c.Rules {
					perRule[r]++
				}
				if *showEdits {
					t.Logf("%v %q -> %q", c.Rules, c.Before, c.After)
				}
			}
		}
	}
	for _, r := range Rules {
		if r.ID != Keep {
			t.Logf("rule %-13s %3d edits", r.ID, perRule[r.ID])
		}
	}
	var rows []*row
	for r := range fired {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if fired[rows[i]] != fired[rows[j]] {
			return fired[rows[i]] > fired[rows[j]]
		}
		return rows[i].src < rows[j].src
	})
	for _, r := range rows {
		t.Logf("row %-20s %3d", r.src, fired[r])
	}
	if perRule[Filler] == 0 || perRule[StrongVerbs] == 0 {
		t.Errorf("the rules found nothing in the corpus: %v", perRule)
	}
}
