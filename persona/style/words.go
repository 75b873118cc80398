package style

import (
	_ "embed"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foliodev/folio/persona/source"
)

//go:embed data/function_en.txt
var functionEN string

//go:embed data/function_zh.txt
var functionZH string

// FunctionWords are the embedded function-word lists (see data/ for their
// licence notes): English words lowercase, Chinese words longest first.
var (
	FunctionWordsEN = parseList(functionEN)
	FunctionWordsZH = parseList(functionZH)
)

var (
	enSet  = toSet(FunctionWordsEN)
	zhSet  = toSet(FunctionWordsZH)
	zhMax  = maxRunes(FunctionWordsZH)
	fwKeys = allFunctionWords()
)

func parseList(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}

func toSet(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func maxRunes(ws []string) int {
	n := 0
	for _, w := range ws {
		n = max(n, utf8.RuneCountInString(w))
	}
	return n
}

// allFunctionWords is every function word, keyed "en:" or "zh:", sorted:
// the fixed dimension order of a function-word vector.
func allFunctionWords() []string {
	var out []string
	for _, w := range FunctionWordsEN {
		out = append(out, "en:"+w)
	}
	for _, w := range FunctionWordsZH {
		out = append(out, "zh:"+w)
	}
	sort.Strings(out)
	return out
}

// Units counts a text's units: Latin words and CJK characters. It is the
// denominator of every per-1,000-token rate.
type counts struct {
	units int
	fw    map[string]int // "en:the", "zh:的" -> occurrences
}

// countFunctionWords counts the units and function words of text: a
// Latin word (letters, digits, apostrophes) is one unit and an English
// function word when its lowercase form is in the list; a CJK run is one
// unit per character, and the longest Chinese function word starting at
// each position is counted (a character inside a matched word is not
// counted again). Chinese has no spaces, so this is an approximation of
// word segmentation: 的 in 的确 counts as the particle. It is
// deterministic and the same for the profile and every scored text,
// which is what Delta needs.
func countFunctionWords(text string, c *counts) {
	if c.fw == nil {
		c.fw = map[string]int{}
	}
	rs := []rune(text)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case source.IsCJK(r):
			matched := 1
			for n := min(zhMax, len(rs)-i); n >= 1; n-- {
				w := string(rs[i : i+n])
				if zhSet[w] {
					c.fw["zh:"+w]++
					matched = n
					break
				}
			}
			c.units += matched
			i += matched
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) && !source.IsCJK(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '\'' || rs[j] == '’') {
				j++
			}
			w := strings.ToLower(string(rs[i:j]))
			if enSet[w] {
				c.fw["en:"+w]++
			}
			c.units++
			i = j
		default:
			i++
		}
	}
}
