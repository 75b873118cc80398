package localedit

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// errInvariant is an edit that breaks the sentence invariant.
var errInvariant = errors.New("localedit: edit breaks the sentence invariant")

// checkInvariant is the invariant every edit keeps, checked by the editor on
// every candidate edit (one that breaks it is dropped) and by the tests on
// every result: out has exactly as many sentences as in (no sentence merged
// into another or split in two), and sentence k of out holds every fact of
// sentence k of in — each number, date, name, quote, code span, link,
// equation and first-person fact, verbatim — at least as often as sentence k
// of in does. facts[k] are the facts of sentence k of in (see
// analysis.facts); both texts are split as the editor splits them.
func checkInvariant(in, out []rune, facts [][]string) error {
	return checkSplit(in, splitText(in, nil), out, facts, nil)
}

// checkSplit is checkInvariant with in already split into si (as
// splitText splits it); scratch, when not nil, is reused to split out.
func checkSplit(in []rune, si []sentence, out []rune, facts [][]string, scratch *analysis) error {
	so := splitText(out, scratch)
	if len(si) != len(facts) {
		return fmt.Errorf("%w: %d sentences, %d lists of facts", errInvariant, len(si), len(facts))
	}
	if len(so) != len(si) {
		return fmt.Errorf("%w: %d sentences became %d: %q -> %q", errInvariant, len(si), len(so), string(in), string(out))
	}
	for k, s := range so {
		a, b := string(in[si[k].start:si[k].end]), string(out[s.start:s.end])
		for _, f := range facts[k] {
			if strings.Count(b, f) < strings.Count(a, f) {
				return fmt.Errorf("%w: sentence %d lost %q: %q -> %q", errInvariant, k+1, f, a, b)
			}
		}
	}
	return nil
}

// splitText splits text into sentences as analyse does (the quotes, code
// spans, links and equations that hold no sentence end are found the same
// way), without tokenizing it.
// The sentences are valid until scratch, when not nil, is used again.
func splitText(text []rune, scratch *analysis) []sentence {
	a := scratch
	if a == nil {
		a = &analysis{}
	}
	a.text, a.sents, a.atoms = text, a.sents[:0], a.atoms[:0]
	a.hard = append(a.hard[:0], make([]hardKind, len(text))...)
	a.atom = append(a.atom[:0], make([]int32, len(text))...)
	a.findRegions()
	a.splitSentences()
	return a.sents
}

// facts returns the facts of sentence i, the texts checkInvariant keeps:
// its protected spans (numbers, dates, names, code, links, equations), its
// quotes and its first-person facts. They are computed once per analysis.
func (a *analysis) facts(i int) []string {
	if a.factsOf == nil {
		a.factsOf = make([][]string, len(a.sents))
		a.factsDone = make([]bool, len(a.sents))
	}
	if a.factsDone[i] {
		return a.factsOf[i]
	}
	s := a.sents[i]
	var out []string
	for k := s.start; k < s.end; {
		switch {
		case a.atom[k] != 0:
			at := a.atoms[a.atom[k]-1]
			out = append(out, string(a.text[at.start:min(at.end, s.end)]))
			k = max(at.end, k+1)
		case a.hard[k] != 0:
			j := k
			for j < s.end && a.hard[j] == a.hard[k] && a.atom[j] == 0 {
				j++
			}
			out = append(out, string(a.text[k:j]))
			k = j
		default:
			k++
		}
	}
	a.factsOf[i], a.factsDone[i] = out, true
	return out
}

// keepsInvariant reports whether replacing the current text's [from, to)
// with repl keeps checkInvariant, checked on the sentence the edit falls in
// and its neighbours (where a sentence ends depends only on the text near
// it). An edit across a sentence end never does.
func (a *analysis) keepsInvariant(from, to int, repl string) bool {
	first := sort.Search(len(a.sents), func(k int) bool { return a.sents[k].end > from })
	last := sort.Search(len(a.sents), func(k int) bool { return a.sents[k].end >= to })
	if first >= len(a.sents) || first != last {
		return false
	}
	lo, hi := max(first-1, 0), min(first+1, len(a.sents)-1)
	start, end := a.sents[lo].start, a.sents[hi].end
	facts := make([][]string, 0, hi-lo+1)
	for k := lo; k <= hi; k++ {
		facts = append(facts, a.facts(k))
	}
	if a.scratch == nil {
		a.scratch = &analysis{}
	}
	sc := a.scratch
	sc.out = append(append(append(sc.out[:0], a.text[start:from]...), []rune(repl)...), a.text[to:end]...)
	sc.in = sc.in[:0]
	for _, s := range a.sents[lo : hi+1] {
		sc.in = append(sc.in, sentence{start: s.start - start, end: s.end - start})
	}
	return checkSplit(a.text[start:end], sc.in, sc.out, facts, sc) == nil
}
