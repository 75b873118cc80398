package localedit

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// minShortened is the share of held-back sentences that must come out
// shorter; the figure itself is logged (go test -run TestShortened -v).
const minShortened = 0.80

// TestShortened measures coverage on testdata/shorten.txt: how many
// held-back sentences, each with one thing a plain-style editor would cut,
// the rules make shorter, in total and by category. Every output keeps the
// sentence invariant and is a fixed point.
func TestShortened(t *testing.T) {
	f, err := os.Open("testdata/shorten.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, short := 0, 0
	byCat := map[string][2]int{}
	var cats []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cat, in, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("want category<TAB>sentence, got %q", line)
		}
		res := assertInvariant(t, in, []string{in}, Auto, nil)
		c := byCat[cat]
		if c[1] == 0 {
			cats = append(cats, cat)
		}
		c[1]++
		total++
		if utf8.RuneCountInString(res.Segments[0]) < utf8.RuneCountInString(in) {
			short++
			c[0]++
		} else {
			t.Logf("not shorter (%s): %s", cat, in)
		}
		byCat[cat] = c
	}
	for _, cat := range cats {
		t.Logf("%-10s %d of %d shorter", cat, byCat[cat][0], byCat[cat][1])
	}
	t.Logf("held-back sentences shortened: %d of %d (%.0f%%)", short, total, 100*float64(short)/float64(total))
	if float64(short) < minShortened*float64(total) {
		t.Errorf("%d of %d sentences shortened, want at least %.0f%%", short, total, 100*minShortened)
	}
}
