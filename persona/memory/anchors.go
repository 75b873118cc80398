package memory

import (
	"strings"
	"unicode"

	"github.com/foliodev/folio/persona/source"
)

// Anchors are every time, place, organisation, number and role a text
// mentions, in the extractor's normal form, first person or not: what a
// text can support.
type Anchors struct {
	Times   map[string]bool // Time.Value of dated times; relative ones by their words
	Places  []string
	Orgs    []string
	Numbers []Number
	Roles   []string
	// Folded is the text lowercased without white space, for containment
	// checks of names.
	Folded string
}

// AnchorsOf collects the anchors of text, clause by clause (so that two
// dates in one sentence are both found).
func AnchorsOf(text string) Anchors {
	a := Anchors{Times: map[string]bool{}, Folded: Fold(text)}
	rs := []rune(text)
	for _, s := range source.Sentences(text) {
		sent := string(rs[s.Start:s.End])
		units := []string{sent}
		cr := []rune(sent)
		for _, c := range source.Clauses(sent) {
			units = append(units, string(cr[c.Start:c.End]))
		}
		for _, u := range units {
			f := analyse(u)
			if f.Time != nil {
				a.Times[f.Time.Value] = true
			}
			a.Places = append(a.Places, f.Places...)
			a.Orgs = append(a.Orgs, f.Orgs...)
			a.Numbers = append(a.Numbers, f.Numbers...)
			if f.Role != "" {
				a.Roles = append(a.Roles, f.Role)
			}
		}
	}
	return a
}

// Fold lowercases s and drops white space and punctuation.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '%' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SupportsTime reports whether a supports time t: the same value, or a
// finer one within it (2019-03 supports 2019); a relative time only by
// its very words.
func (a Anchors) SupportsTime(t Time) bool {
	if t.Precision == PrecisionRelative {
		return strings.Contains(a.Folded, Fold(t.Value))
	}
	for v := range a.Times {
		if v == t.Value || strings.HasPrefix(v, t.Value+"-") {
			return true
		}
	}
	return false
}

// SupportsName reports whether a names name (a place, organisation or
// role): the folded text contains it, or it contains a name of a found
// anchor of at least two characters (字节跳动公司 is supported by 字节跳动).
func (a Anchors) SupportsName(name string, found []string) bool {
	n := Fold(name)
	if n == "" {
		return true
	}
	if strings.Contains(a.Folded, n) {
		return true
	}
	for _, f := range found {
		if ff := Fold(f); len([]rune(ff)) >= 2 && strings.Contains(n, ff) {
			return true
		}
	}
	return false
}

// unitFamily puts units that mean the same in one family.
var unitFamily = map[string]string{"年": "year", "year": "year", "years": "year", "岁": "age", "%": "percent",
	"percent": "percent", "个": "count", "次": "times", "times": "times", "天": "day", "days": "day", "day": "day",
	"月": "month", "months": "month", "month": "month", "人": "people", "people": "people", "名": "people", "位": "people",
	"篇": "article", "articles": "article"}

// SupportsNumber reports whether a mentions n: the same value with the
// same unit, a unit of the same family, or no unit on either side.
func (a Anchors) SupportsNumber(n Number) bool {
	for _, m := range a.Numbers {
		if m.Value != n.Value {
			continue
		}
		if m.Unit == n.Unit || m.Unit == "" || n.Unit == "" {
			return true
		}
		if f, ok := unitFamily[strings.ToLower(m.Unit)]; ok && f == unitFamily[strings.ToLower(n.Unit)] {
			return true
		}
	}
	return false
}
