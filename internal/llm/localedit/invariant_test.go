package localedit

import (
	"errors"
	"math/rand"
	"os"
	"strings"
	"testing"
)

// inputFacts analyses s as Edit does and returns the facts of each of its
// sentences.
func inputFacts(t testing.TB, s string, lg Lang) [][]string {
	t.Helper()
	d, err := loadData()
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{d: d}
	if e.seg, err = zhSegmenter(); err != nil {
		t.Fatal(err)
	}
	switch lg {
	case Chinese:
		e.force = langZH
	case English:
		e.force = langEN
	}
	a := e.analyse([]rune(s), e.force)
	facts := make([][]string, len(a.sents))
	for i := range a.sents {
		facts[i] = a.facts(i)
	}
	return facts
}

// assertInvariant edits segs and checks every segment's output against its
// input with checkInvariant, the function the editor runs on each candidate
// edit: the same sentences, each with its facts verbatim. It also checks
// that a second pass proposes nothing.
func assertInvariant(t testing.TB, name string, segs []string, lg Lang, rules []RuleID) Result {
	t.Helper()
	res, err := Edit(Request{Segments: segs, Lang: lg, Rules: rules})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i, in := range segs {
		if err := checkInvariant([]rune(in), []rune(res.Segments[i]), inputFacts(t, in, lg)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	again, err := Edit(Request{Segments: res.Segments, Lang: lg, Rules: rules})
	if err != nil || len(again.Edits) != 0 {
		t.Errorf("%s: a second pass proposes %+v (%v)", name, again.Edits, err)
	}
	return res
}

// corpusParagraphs are the paragraphs of the corpus articles and the
// benchmark texts.
func corpusParagraphs(t testing.TB) []string {
	var out []string
	for _, f := range []string{"testdata/corpus.en.txt", "testdata/corpus.zh.txt", "testdata/bench.en.txt", "testdata/bench.zh.txt"} {
		out = append(out, corpusParagraphsFrom(t, f)...)
	}
	return out
}

// corpusParagraphsFrom returns the paragraphs of file (blank-line
// separated), without its "#" comment lines.
func corpusParagraphsFrom(t testing.TB, file string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range strings.Split(string(raw), "\n\n") {
		var lines []string
		for _, l := range strings.Split(p, "\n") {
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		if p = strings.TrimSpace(strings.Join(lines, "\n")); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// The invariant holds on every golden and held-back case and on every
// paragraph of the corpus.
func TestInvariantCorpus(t *testing.T) {
	for _, c := range allInputs(t) {
		assertInvariant(t, c.name, c.in, c.lang, c.rules)
	}
	paras := corpusParagraphs(t)
	if len(paras) < 40 {
		t.Fatalf("%d corpus paragraphs", len(paras))
	}
	edited := 0
	for i, p := range paras {
		if res := assertInvariant(t, "corpus paragraph "+itoa(i), []string{p}, Auto, nil); len(res.Edits) > 0 {
			edited++
		}
	}
	if edited*2 < len(paras) {
		t.Errorf("only %d of %d corpus paragraphs edited: the property above is close to vacuous", edited, len(paras))
	}
}

// propertyParts are sentences with what sentence splitting and the rules get
// wrong most easily: abbreviations, initials, decimals, versions, ellipses,
// quotes, links, e-mail, first-person facts, passives with named agents and
// every rule's phrases.
var propertyParts = []string{
	"The decision was made by Dr. Chen to conduct a review of all 37 supplier contracts.",
	"The report was written by J. R. Smith in order to make a decision about v1.2.3.",
	"Mr. Lee gave approval to the plan, e.g. the budget of $3.14 million.",
	"The proposal was rejected by Prof. Alvarez at 5 p.m. on Friday.",
	"We made a decision to conduct an analysis of the data in 2023.",
	"I basically never made a decision to utilize No. 5 again.",
	"Due to the fact that it rained... the game stopped.",
	"Wait… the team has the ability to ship it vs. the old plan.",
	"In the event that the U.S. office closes, a large number of users will leave.",
	`She said "in order to win." Then she left.`,
	"Visit https://example.com/a.b or mail a.b@example.org in order to make a decision.",
	"Write to utilize.help@example.org. It is important to note that replies take a day.",
	"At this point in time, the code `make a decision` is used (see Fig. 2.)",
	"The budget was approved by the board. It is important to note that it was very unique.",
	"Apple Inc. made changes to the store, etc. The staff was trained by the managers.",
	"其实这个方案被委员会否决了。",
	"说到底，我们需要对流程进行调整。",
	"从某种意义上讲，公司作出了人员调整的安排。",
	"我们在2020年其实进行了讨论；结果没有改变。",
	"张伟说：“其实我们进行了讨论。”然后走了。",
	"众所周知，版本v1.2.3已经发布了！对吗？",
	"随着互联网的不断发展，我们基本上完成了3.5万元的预算。",
	"「其实」这个词『基本上』没有意义……我们进行了讨论。",
}

// Random paragraphs of those parts, joined with one space, none or a line
// end, keep the invariant and are idempotent (a rand-driven property test
// with a fixed seed, so a failure is reproducible).
func TestInvariantRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	seps := []string{" ", "", "\n", "  "}
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		for k := rng.Intn(5) + 1; k > 0; k-- {
			if b.Len() > 0 {
				b.WriteString(seps[rng.Intn(len(seps))])
			}
			b.WriteString(propertyParts[rng.Intn(len(propertyParts))])
		}
		assertInvariant(t, "random "+b.String(), []string{b.String()}, Auto, nil)
	}
}

// The check finds what a damaging edit does: the historic "Dr made the
// decision. Chen to review…", two sentences merged, a number lost or moved
// to another sentence, a quote changed.
func TestInvariantCatches(t *testing.T) {
	for _, tt := range []struct{ in, out string }{
		{"The decision was made by Dr. Chen to conduct a review of all 37 supplier contracts.",
			"Dr made the decision. Chen to review all 37 supplier contracts."},
		{"It works. The team made a decision.", "It works, the team decided."},
		{"It works in 2024. The team decided.", "It works. The team decided."},
		{"It works in 2024. The team decided.", "It works. The team decided in 2024."},
		{`She said "in order to win." Then she left.`, `She said "to win." Then she left.`},
		{"张伟其实很忙。我们进行了讨论。", "很忙。我们讨论了。"},
		{"我们2023年进行了讨论。", "我们进行了讨论。"},
	} {
		err := checkInvariant([]rune(tt.in), []rune(tt.out), inputFacts(t, tt.in, Auto))
		if !errors.Is(err, errInvariant) {
			t.Errorf("%q -> %q: %v, want errInvariant", tt.in, tt.out, err)
		}
	}
	// And lets a good edit through.
	in := "The decision was made by Dr. Chen to conduct a review of all 37 supplier contracts."
	if err := checkInvariant([]rune(in), []rune("Dr. Chen decided to review all 37 supplier contracts."), inputFacts(t, in, Auto)); err != nil {
		t.Errorf("a good edit: %v", err)
	}
}

// The editor runs the check on every candidate: one that crosses a sentence
// end, merges sentences or drops a fact is not accepted.
func TestEditorDropsBreakingEdits(t *testing.T) {
	d, err := loadData()
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{d: d}
	a := e.analyse([]rune("It works in 2024. The team made a decision. Fine."), langEN)
	for _, tt := range []struct {
		from, to int
		repl     string
		ok       bool
	}{
		{27, 42, "decided", true},   // made a decision
		{16, 21, ", the", false},    // merges the first two sentences
		{12, 16, "", false},         // loses 2024
		{30, 45, "x. Y", false},     // crosses a sentence end
		{22, 26, "The. New", false}, // splits a sentence
	} {
		if got := e.accept(a, tt.from, tt.to, tt.repl); got != tt.ok {
			t.Errorf("replace %q with %q: accepted %v, want %v", string(a.text[tt.from:tt.to]), tt.repl, got, tt.ok)
		}
	}
}

// The sentences of the issue: the passive's named agent keeps its title and
// the sentence stays one.
func TestAbbreviationCases(t *testing.T) {
	for _, tt := range []struct{ in, out string }{
		{"The decision was made by Dr. Chen to conduct a review of all 37 supplier contracts.",
			"Dr. Chen decided to review all 37 supplier contracts."},
		{"The report was written by J. R. Smith.", "J. R. Smith wrote the report."},
		{"The plan was approved by Mr. Lee. In order to win, we train.", "Mr. Lee approved the plan. To win, we train."},
		{"Use a tool, e.g. a linter, in order to make a decision.", "Use a tool, e.g. a linter, to decide."},
		{"Version 1.2.3 was released by the team in order to fix bugs.", "Version 1.2.3 was released by the team to fix bugs."},
		{"The code was reviewed by the U.S. team in order to ship.", "The code was reviewed by the U.S. team to ship."},
		{"It failed... then it was fixed by the team.", "It failed... then it was fixed by the team."},
		{"其实版本3.14已经发布了。说到底，这很简单。", "版本3.14已经发布了。这很简单。"},
		{"Mail utilize.team@example.org. In order to win, we train.", "Mail utilize.team@example.org. To win, we train."},
	} {
		res := assertInvariant(t, tt.in, []string{tt.in}, Auto, nil)
		if res.Segments[0] != tt.out {
			t.Errorf("%q\n got %q\nwant %q", tt.in, res.Segments[0], tt.out)
		}
	}
}
