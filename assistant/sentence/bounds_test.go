package sentence

import (
	"strings"
	"testing"
)

// Sentence ends know abbreviations, initials, numbers, versions, ellipses,
// closing quotes, links and full-width punctuation. Each case is written
// with " | " where a sentence ends.
func TestSplitBoundaries(t *testing.T) {
	for _, want := range []string{
		// titles and initials
		"The decision was made by Dr. Chen to conduct a review of all 37 supplier contracts.",
		"Mr. and Mrs. Smith met Ms. Lee and Prof. Jones on St. Patrick's Day. | They talked.",
		"J. R. Smith wrote it. | A. B. Cole read it.",
		"Plan A is done. | Plan B. That is all.", // a single capital is read as an initial,
		// words that announce what follows
		"Use a tool, e.g. a linter, or i.e. something like it. | Then stop.",
		"Room No. 5 is free. | Team A vs. Team B starts at 9.",
		"See Fig. 3 for the curve. | It rises.",
		// abbreviations that may end a sentence
		"We bought apples, pears, etc. | The shop closed at 5 p.m. | Nobody cared.",
		"Apple Inc. announced a phone. | Acme Ltd. said nothing.",
		"She moved to the U.S. in 2019. | He moved to the U.K. | They wrote.",
		// numbers, versions, links, e-mail
		"Pi is 3.14 and the build is v1.2.3 now. | Version 2.0. | Done.",
		"Visit example.com/a.b or www.folio.dev/x.html and mail a.b@c.org today. | Bye.",
		"Read https://example.com/docs. | It helps.",
		// ellipses
		"Wait... what happened? | Nothing... | The bus never came.",
		"I waited… and waited. | Then… | Nothing.",
		// closing quotes and brackets
		`He said "stop." | She left.`,
		"(This is an aside.) | Next one.",
		"Really? | \"Yes!\" she said. | No.",
		// lower case after ! ? keeps the sentence
		`"Why?" she asked. | He shrugged.`,
		// Chinese
		"版本不可变。 | 草稿可以改！ | 对吗？ | 可以；",
		"他说：“好。” | 然后走了。",
		"『好吧。』 | 「算了。」 | 结束（真的。） | 完",
		"价格是3.5元。 | 版本v1.2.3发布了。",
		"我想了想……还是算了。 | 走吧。",
		// lines
		"one\ntwo",
	} {
		in := strings.ReplaceAll(want, " | ", " ")
		if strings.Contains(want, "\n") {
			in = want
			want = strings.ReplaceAll(want, "\n", " | ")
		}
		got := strings.Join(Split(in), " | ")
		if strings.Contains(in, "。 ") {
			got = strings.Join(Split(strings.ReplaceAll(in, "。 ", "。")), " | ")
		}
		if got != want {
			t.Errorf("Split(%q)\n got %s\nwant %s", in, got, want)
		}
	}
}

// Ends leaves opaque spans alone and always ends the last sentence at the
// end of the text.
func TestEndsOpaque(t *testing.T) {
	text := []rune(`He said "Stop. Now." Then left. Ok`)
	open, close := strings.Index(string(text), `"`), strings.LastIndex(string(text), `"`)
	ends := Ends(text, func(i int) bool { return i >= open && i <= close })
	if len(ends) != 2 || string(text[:ends[0]]) != `He said "Stop. Now." Then left.` || ends[1] != len(text) {
		t.Fatalf("ends %v", ends)
	}
	if Ends(nil, nil) != nil || Ends([]rune("  "), nil) != nil {
		t.Fatal("an empty text has no sentences")
	}
}
