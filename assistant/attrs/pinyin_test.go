package attrs

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/mozillazg/go-pinyin"
)

var update = flag.Bool("update", false, "rewrite pinyin.txt from go-pinyin")

// The embedded table gives every character go-pinyin knows the reading
// Slugify used to take from it: the first, toneless.
func TestPinyinTableMatchesGoPinyin(t *testing.T) {
	a := pinyin.NewArgs()
	a.Style = pinyin.Normal
	a.Fallback = func(rune, pinyin.Args) []string { return nil }
	var runes []int
	for c := range pinyin.PinyinDict {
		runes = append(runes, c)
	}
	sort.Ints(runes)
	var b strings.Builder
	n := 0
	for _, c := range runes {
		if py := pinyin.SinglePinyin(rune(c), a); len(py) > 0 && py[0] != "" {
			fmt.Fprintf(&b, "%x %s\n", c, py[0])
			n++
			if got := pinyinOf(rune(c)); got != py[0] && !*update {
				t.Fatalf("pinyinOf(%q) = %q, go-pinyin %q: run go test -run TestPinyinTable -update", rune(c), got, py[0])
			}
		}
	}
	if *update {
		if err := os.WriteFile("pinyin.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(pinyinMap()) != n {
		t.Errorf("the table has %d characters, go-pinyin %d", len(pinyinMap()), n)
	}
}
