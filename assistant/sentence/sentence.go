// Package sentence is the text analysis of the narrow assistants' local
// provider: sentence splitting and term extraction for Chinese, Japanese,
// Korean and space-separated languages. It is pure logic, deterministic and
// bounded by its input.
//
// Sentences end at 。！？； and at line ends, and at . ! ? and ellipses
// followed by white space or the end, unless an abbreviation, an initial or
// a lower-case word after them shows that the sentence goes on (see Ends,
// which the local editor's splitter shares).
// Terms are lower-cased words of letters and digits (at least two runes)
// outside the stop words, and, for runs of CJK ideographs, every bigram of
// adjacent ideographs (single ideographs of a one-character run too):
// bigrams are what CJK full-text indexes use without a dictionary, and they
// match the two-character words that carry most of the meaning.
package sentence

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Split splits text into sentences where Ends says they end, keeping each
// sentence's closing punctuation and trimming white space.
func Split(text string) []string {
	r := []rune(text)
	var out []string
	start := 0
	for _, end := range Ends(r, nil) {
		if s := strings.TrimSpace(string(r[start:end])); s != "" {
			out = append(out, s)
		}
		start = end
	}
	return out
}

// IsCJK reports whether c is a CJK ideograph, kana or Hangul syllable.
func IsCJK(c rune) bool {
	return unicode.Is(unicode.Han, c) || unicode.Is(unicode.Hiragana, c) ||
		unicode.Is(unicode.Katakana, c) || unicode.Is(unicode.Hangul, c)
}

// HasCJK reports whether s holds a CJK character.
func HasCJK(s string) bool {
	for _, c := range s {
		if IsCJK(c) {
			return true
		}
	}
	return false
}

// Terms returns the terms of s in order of appearance, repeats included.
func Terms(s string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) >= 2 {
			w := stem(strings.ToLower(string(word)))
			if !stop[w] {
				out = append(out, w)
			}
		}
		word = word[:0]
	}
	flushCJK := func() {
		switch {
		case len(cjk) == 1:
			if !stopCJK[cjk[0]] {
				out = append(out, string(cjk))
			}
		case len(cjk) > 1:
			for i := 0; i+1 < len(cjk); i++ {
				if stopCJK[cjk[i]] || stopCJK[cjk[i+1]] {
					continue
				}
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, c := range s {
		switch {
		case IsCJK(c):
			flushWord()
			cjk = append(cjk, c)
		case unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || (c == '-' && len(word) > 0):
			flushCJK()
			word = append(word, c)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// stem folds the plural of an ASCII word ("refs", "versions") onto its
// singular; it is all the stemming an extractive match needs.
func stem(w string) string {
	if len(w) > 3 && w[len(w)-1] == 's' && w[len(w)-2] != 's' && w[len(w)-2] != 'u' && w[len(w)-2] != 'i' {
		for i := 0; i < len(w); i++ {
			if w[i] >= 0x80 {
				return w
			}
		}
		return w[:len(w)-1]
	}
	return w
}

// Frequencies counts the terms of texts.
func Frequencies(texts ...string) map[string]int {
	f := map[string]int{}
	for _, t := range texts {
		for _, term := range Terms(t) {
			f[term]++
		}
	}
	return f
}

// Clip shortens s to at most n runes, at a sentence or word end when one
// is near, adding "…" when it cut.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexAny(cut, "。！？.!?；;，, "); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + "…"
}

var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from had has have
		he her his how i if in into is it its itself me more most my no not of on or our out she so some such than that
		the their them then there these they this those to too up us was we were what when where which while who whom
		why will with would you your yours also just only very about after again all any because before being both
		each few further here other over own same should under until down off once without within`) {
		m[w] = true
	}
	return m
}()

var stopCJK = func() map[rune]bool {
	m := map[rune]bool{}
	for _, c := range "的了是在和与及或也就都而且并但这那一个我你他她它们有为以于之把被让给对从到说着过吗呢吧啊" {
		m[c] = true
	}
	return m
}()
