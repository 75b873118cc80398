package sentence

import (
	"strings"
	"unicode"
)

// Abbreviations that never end a sentence: titles and words that announce
// what follows ("Dr. Chen", "e.g. this", "No. 5", "vs. them"). Lower case,
// without the final full stop.
var leading = setOf(`mr mrs ms mx dr prof st sgt capt col gen lt rev hon fr sr jr mt ft no nos vs v cf e.g i.e
	fig figs vol vols ch sec p pp approx ca dept est op al ed eds`)

// Abbreviations that may end a sentence: after them a full stop ends the
// sentence only when an upper-case word follows ("apples, pears, etc. The
// shop…" but "Apple Inc. announced…").
var trailing = setOf(`etc inc ltd co corp plc llc bros a.m p.m u.s u.k u.n e.u ph.d`)

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// closers may follow a sentence's final punctuation and stay with it.
const closers = `"'”’」』)）]】》〉`

// Ends returns where each sentence of text ends, in code points: the offset
// just past its final punctuation and any closing quotes or brackets after
// it. The last sentence ends at len(text) whether or not it has final
// punctuation; an empty text has no sentences. opaque, when not nil,
// reports code points inside a span that cannot hold a sentence end (a
// quotation, a link, inline code).
//
// A sentence ends at 。！？； and ！？ in full width, at a line end, and at
// . ! ? and an ellipsis (… or ...) followed by white space or the end, except
// where the text shows that the sentence goes on:
//
//   - the next word starts with a lower-case letter ("e.g. the", "Wait...
//     what");
//   - the full stop ends a title or a word that announces what follows (Dr.
//     Mr. Mrs. Ms. Prof. St. No. vs. e.g. i.e. Fig. …), or a single capital
//     letter (an initial: "J. R. Smith");
//   - the full stop ends an abbreviation that may end a sentence (etc.
//     Inc. Ltd. U.S. a.m. …) or an ellipsis, and no upper-case word follows;
//   - . ! ? and the ellipsis inside a number, a version, a URL or an e-mail
//     address have no white space after them and so end nothing (3.14,
//     v1.2.3, example.com/a.b, a.b@c.org).
//
// Every rule errs towards one longer sentence: splitting a sentence in two
// is what lets an edit move words across a boundary.
func Ends(text []rune, opaque func(i int) bool) []int {
	var out []int
	n := len(text)
	for i := 0; i < n; i++ {
		switch text[i] {
		case '\n', '。', '！', '？', '；', '．', '!', '?', '…', '.':
		default:
			continue
		}
		if opaque != nil && opaque(i) {
			continue
		}
		j, ok := endAt(text, i, opaque)
		if !ok {
			continue
		}
		if j < n {
			out = append(out, j)
		}
		i = j - 1
	}
	if n > 0 && !onlySpace(text) {
		out = append(out, n)
	}
	return out
}

// endAt reports whether a sentence ends at text[i], and where (past its
// closers).
func endAt(text []rune, i int, opaque func(int) bool) (int, bool) {
	n := len(text)
	c := text[i]
	// absorb skips further final punctuation and closers from j.
	absorb := func(j int) int {
		for j < n && (strings.ContainsRune("。！？!?…．.；", text[j]) || strings.ContainsRune(closers, text[j])) {
			if opaque != nil && opaque(j) {
				break
			}
			j++
		}
		return j
	}
	switch c {
	case '\n':
		return i + 1, true
	case '。', '！', '？', '；', '．':
		return absorb(i + 1), true
	case '!', '?':
		j := absorb(i + 1)
		return j, !continues(text, j)
	case '…':
		j := absorb(i + 1)
		return j, !continues(text, j) && (j == n || nextUpperOrEnd(text, j))
	case '.':
		if i+2 < n && text[i+1] == '.' && text[i+2] == '.' {
			j := absorb(i + 3)
			return j, !continues(text, j) && nextUpperOrEnd(text, j)
		}
		if i > 0 && text[i-1] == '.' {
			return 0, false // inside "..", handled at its first dot
		}
		j := absorb(i + 1)
		if continues(text, j) {
			return 0, false
		}
		w := wordBefore(text, i)
		lw := strings.ToLower(w)
		switch {
		case w == "":
		case leading[lw]:
			return 0, false
		case len([]rune(w)) == 1 && unicode.IsUpper([]rune(w)[0]) && j < n:
			return 0, false // an initial
		case trailing[lw] || strings.Contains(w, "."):
			return j, nextUpperOrEnd(text, j)
		}
		return j, true
	}
	return 0, false
}

// continues reports whether the sentence goes on after punctuation ending
// at j: no white space follows (3.14, a.b@c.org) or a lower-case word does.
func continues(text []rune, j int) bool {
	n := len(text)
	if j == n {
		return false
	}
	if !unicode.IsSpace(text[j]) {
		return !isCJKRune(text[j])
	}
	k := j
	for k < n && unicode.IsSpace(text[k]) {
		if text[k] == '\n' {
			return false
		}
		k++
	}
	return k < n && unicode.IsLower(text[k])
}

// nextUpperOrEnd reports whether the text from j holds nothing more, or
// its next word starts with an upper-case letter, a digit or an opening
// quote.
func nextUpperOrEnd(text []rune, j int) bool {
	k := j
	for k < len(text) && unicode.IsSpace(text[k]) {
		if text[k] == '\n' {
			return true
		}
		k++
	}
	if k == len(text) {
		return true
	}
	c := text[k]
	return unicode.IsUpper(c) || unicode.IsDigit(c) || strings.ContainsRune(`"“‘「『(（`, c)
}

// wordBefore returns the letters and inner full stops right before text[i]
// ("Dr", "e.g", "U.S").
func wordBefore(text []rune, i int) string {
	w := i
	for w > 0 && (unicode.IsLetter(text[w-1]) || text[w-1] == '.' && w-1 > 0 && unicode.IsLetter(text[w-2])) {
		w--
	}
	return string(text[w:i])
}

func isCJKRune(c rune) bool {
	return IsCJK(c) || c >= 0x3000 && c <= 0x303F || c >= 0xFF00 && c <= 0xFFEF
}

func onlySpace(t []rune) bool {
	for _, c := range t {
		if !unicode.IsSpace(c) {
			return false
		}
	}
	return true
}
