package localedit

import (
	"testing"
)

// Every pattern row of the rule data has at least one positive example
// (a sentence the row alone changes, into the sentence given) and one
// negative example (a near miss the row leaves alone), written under it in
// its file; each is run with that row alone, and must keep the sentence
// invariant.
func TestRuleExamples(t *testing.T) {
	d, err := loadData()
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, r := range Rules {
		for _, lg := range []lang{langEN, langZH} {
			for _, row := range d.rows[r.ID][lg] {
				rows++
				pos, neg := 0, 0
				for _, ex := range row.examples {
					res, err := edit(Request{Segments: []string{ex.In}, Rules: []RuleID{row.rule}}, func(e *engine) { e.only = row })
					if err != nil {
						t.Fatal(err)
					}
					if err := checkInvariant([]rune(ex.In), []rune(res.Segments[0]), inputFacts(t, ex.In, Auto)); err != nil {
						t.Errorf("%s: %v", row.src, err)
					}
					if ex.Positive {
						pos++
						if res.Segments[0] != ex.Want {
							t.Errorf("%s: %q\n got %q\nwant %q", row.src, ex.In, res.Segments[0], ex.Want)
						}
						continue
					}
					neg++
					if len(res.Edits) != 0 {
						t.Errorf("%s: the negative example %q became %q", row.src, ex.In, res.Segments[0])
					}
				}
				if pos == 0 || neg == 0 {
					t.Errorf("%s: %d positive and %d negative examples, want at least one of each", row.src, pos, neg)
				}
			}
		}
	}
	if rows < 200 {
		t.Fatalf("%d rows", rows)
	}
}
