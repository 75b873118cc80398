package localedit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// verbForm indexes verbForms.
type verbForm uint8

const (
	formBase verbForm = iota
	formThird
	formPast
	formParticiple
	formING
)

// verbForms are a verb's base, third person, past, past participle and -ing.
type verbForms [5]string

type formRef struct {
	base string
	form verbForm
}

// verbFormsOf returns the forms of base: from forms.en.tsv, else by the
// regular endings.
func (d *data) verbFormsOf(base string) verbForms {
	if f, ok := d.forms[base]; ok {
		return f
	}
	return regularForms(base)
}

func regularForms(b string) verbForms {
	n := len(b)
	last := func(k int) string {
		if n < k {
			return b
		}
		return b[n-k:]
	}
	consY := n >= 2 && b[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(b[n-2]))
	var third, past, ing string
	switch {
	case consY:
		third = b[:n-1] + "ies"
	case strings.HasSuffix(b, "s") || strings.HasSuffix(b, "x") || strings.HasSuffix(b, "z") ||
		last(2) == "ch" || last(2) == "sh" || strings.HasSuffix(b, "o"):
		third = b + "es"
	default:
		third = b + "s"
	}
	switch {
	case strings.HasSuffix(b, "e"):
		past = b + "d"
	case consY:
		past = b[:n-1] + "ied"
	default:
		past = b + "ed"
	}
	switch {
	case strings.HasSuffix(b, "ie"):
		ing = b[:n-2] + "ying"
	case strings.HasSuffix(b, "e") && !strings.HasSuffix(b, "ee") && !strings.HasSuffix(b, "ye") && !strings.HasSuffix(b, "oe"):
		ing = b[:n-1] + "ing"
	default:
		ing = b + "ing"
	}
	return verbForms{b, third, past, past, ing}
}

// inflect returns base in form f.
func (d *data) inflect(base string, f verbForm) string {
	return d.verbFormsOf(base)[f]
}

// participle returns the verb a past participle belongs to: its forms, and
// whether the base form is known (regular -ed participles give their past
// but not their base).
func (d *data) participle(word string) (forms verbForms, baseKnown, ok bool) {
	if ref, ok := d.formOf[word]; ok {
		if f := d.forms[ref.base]; f[formParticiple] == word {
			return f, true, true
		}
		return verbForms{}, false, false
	}
	if strings.HasSuffix(word, "ed") && len(word) > 4 {
		return verbForms{"", "", word, word, ""}, false, true
	}
	return verbForms{}, false, false
}

// tokenizeEN splits s[from:to] into words, punctuation and spaces. A word is
// letters and digits with inner apostrophes and hyphens; a number keeps its
// inner separators (1,000.5, 2024-03-05, 10:30).
func tokenizeEN(text []rune, from, to int, out []token) []token {
	for i := from; i < to; {
		r := text[i]
		j := i + 1
		kind := tokPunct
		switch {
		case unicode.IsSpace(r):
			kind = tokSpace
			for j < to && unicode.IsSpace(text[j]) {
				j++
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			kind = tokWord
			for j < to {
				c := text[j]
				if unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.Is(unicode.Mn, c) {
					j++
					continue
				}
				if j+1 < to && (unicode.IsLetter(text[j+1]) || unicode.IsDigit(text[j+1])) {
					if c == '\'' || c == '’' || c == '-' {
						j++
						continue
					}
					if (c == ',' || c == '.' || c == ':' || c == '/') && unicode.IsDigit(text[j-1]) && unicode.IsDigit(text[j+1]) {
						j++
						continue
					}
				}
				break
			}
		}
		s := string(text[i:j])
		out = append(out, token{start: i, end: j, text: s, lower: normWord(s), kind: kind})
		i = j
	}
	return out
}

// normWord lower-cases s and straightens its apostrophes, for matching.
func normWord(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "’", "'")
}

func isCapitalised(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func uncapitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsUpper(r) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// passiveEN finds "X aux participle by Y" clauses with a stated agent and
// proposes "Y verb X" (rule 3). X must be the whole subject from the start of
// the sentence, and both X and Y must start with a determiner, a pronoun or
// a name, so that nothing is guessed: without an agent, or with "by" naming
// a time ("by 2020", "by the end of May"), nothing is proposed.
func (e *engine) passiveEN(a *analysis, s *sentence, add func(from, to int, repl string)) {
	w := s.words
	if len(w) < 5 {
		return
	}
	tok := func(i int) *token { return &a.toks[w[i]] }
	lists := e.d.enLists
	// Find the auxiliary and the participle.
	for i := 1; i+2 < len(w); i++ {
		aux := tok(i).lower
		var auxLen int
		var tense string // past, present, perfect, pastperfect, modal
		switch {
		case aux == "was" || aux == "were":
			auxLen, tense = 1, "past"
		case aux == "is" || aux == "are":
			auxLen, tense = 1, "present"
		case (aux == "has" || aux == "have") && tok(i+1).lower == "been":
			auxLen, tense = 2, "perfect"
		case aux == "had" && tok(i+1).lower == "been":
			auxLen, tense = 2, "pastperfect"
		case lists["modal"] != nil && hasKey(lists["modal"], aux) && tok(i+1).lower == "be":
			auxLen, tense = 2, "modal"
		default:
			continue
		}
		p := i + auxLen
		var adverb string
		if p+1 < len(w) && strings.HasSuffix(tok(p).lower, "ly") && tok(p).kind == tokWord {
			if _, _, ok := e.d.participle(tok(p + 1).lower); ok {
				adverb = tok(p).text
				p++
			}
		}
		if p+2 >= len(w) || tok(p+1).lower != "by" {
			return
		}
		forms, baseKnown, ok := e.d.participle(tok(p).lower)
		if !ok {
			return
		}
		// X: words 0..i-1, no punctuation.
		for k := 0; k < i; k++ {
			if tok(k).kind != tokWord {
				return
			}
		}
		if i > 8 {
			return
		}
		xFrom, xTo := tok(0).start, tok(i-1).end
		x := string(a.text[xFrom:xTo])
		first := tok(0).lower
		var xOut string
		switch {
		case i == 1 && hasKey(lists["pronoun"], first):
			xOut = lists["pronoun"][first]
		case hasKey(lists["determiner"], first) && a.atom[tok(0).start] == 0:
			xOut = uncapitalise(x)
		case a.atom[tok(0).start] != 0 && a.atoms[a.atom[tok(0).start]-1].kind == atomName:
			xOut = x
		default:
			return
		}
		// Y: from the word after "by" to a stop word, punctuation or the end.
		y0 := p + 2
		y1 := y0
		for y1 < len(w) && tok(y1).kind == tokWord && !hasKey(lists["stop"], tok(y1).lower) {
			y1++
		}
		if y1 == y0 || y1-y0 > 6 {
			return
		}
		yFirst := tok(y0)
		var yOut string
		plural := false
		yText := string(a.text[yFirst.start:tok(y1-1).end])
		objToSubj := map[string]string{}
		for subj, obj := range lists["pronoun"] {
			objToSubj[obj] = subj
		}
		switch {
		case y1-y0 == 1 && objToSubj[yFirst.lower] != "":
			yOut = objToSubj[yFirst.lower]
			plural = yOut == "we" || yOut == "they" || yOut == "you" || yOut == "i"
			if yOut == "i" {
				yOut = "I"
			}
		case hasKey(lists["determiner"], yFirst.lower) && a.atom[yFirst.start] == 0:
			if y1-y0 > 1 && hasKey(lists["not-agent"], tok(y0+1).lower) {
				return
			}
			if y1 < len(w) && tok(y1).text == "." && y1 != len(w)-1 {
				return // a full stop inside the sentence: an abbreviation in the agent
			}
			yOut = yText
			head := tok(y1 - 1).lower
			plural = hasKey(lists["plural"], head) ||
				(strings.HasSuffix(head, "s") && !strings.HasSuffix(head, "ss") && !strings.HasSuffix(head, "us") && !strings.HasSuffix(head, "is"))
			for k := y0; k < y1; k++ {
				if tok(k).lower == "and" {
					plural = true
				}
			}
		case a.atom[yFirst.start] != 0 && a.atoms[a.atom[yFirst.start]-1].kind == atomName:
			at := a.atoms[a.atom[yFirst.start]-1]
			for y1 < len(w) && tok(y1).end <= at.end {
				y1++ // a name with full stops inside ("Dr. Chen")
			}
			if at.end != tok(y1-1).end || y1 < len(w) && tok(y1).kind == tokWord && !hasKey(lists["stop"], tok(y1).lower) {
				return // only a whole name is an agent
			}
			yText = string(a.text[yFirst.start:at.end])
			yOut = yText
		default:
			return
		}
		var verb string
		switch tense {
		case "past":
			verb = forms[formPast]
		case "present":
			if !baseKnown {
				return
			}
			verb = forms[formThird]
			if plural {
				verb = forms[formBase]
			}
		case "perfect":
			verb = "has " + forms[formParticiple]
			if plural {
				verb = "have " + forms[formParticiple]
			}
		case "pastperfect":
			verb = "had " + forms[formParticiple]
		case "modal":
			if !baseKnown {
				return
			}
			verb = aux + " " + forms[formBase]
		}
		if adverb != "" {
			verb = adverb + " " + verb
		}
		if isCapitalised(x) {
			yOut = capitalise(yOut)
		}
		add(xFrom, tok(y1-1).end, yOut+" "+verb+" "+xOut)
		return
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
