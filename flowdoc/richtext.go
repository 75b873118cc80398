package flowdoc

import (
	"strings"
	"unicode/utf8"
)

// ObjectReplacement is the code point an inline equation stands for in
// PlainText and in operation offsets.
const ObjectReplacement = '\uFFFC'

// PlainText returns the text of runs; an inline equation counts as U+FFFC.
// Offsets of replace_selection are code-point offsets into this string.
func PlainText(runs []Run) string {
	var sb strings.Builder
	for _, r := range runs {
		if r.Equation != "" {
			sb.WriteRune(ObjectReplacement)
			continue
		}
		sb.WriteString(r.Text)
	}
	return sb.String()
}

// runLen is a run's length in code points (an inline equation is one).
func runLen(r Run) int {
	if r.Equation != "" {
		return 1
	}
	return utf8.RuneCountInString(r.Text)
}

// textLen is the length of runs in code points.
func textLen(runs []Run) int {
	n := 0
	for _, r := range runs {
		n += runLen(r)
	}
	return n
}

// splitRuns cuts runs at code-point offset off (0 <= off <= textLen): the
// runs before and after it. A text run straddling off is split in two, both
// halves keeping its marks and link. The results share no memory with runs.
func splitRuns(runs []Run, off int) (before, after []Run) {
	pos := 0
	for i, r := range runs {
		n := runLen(r)
		switch {
		case pos+n <= off:
			before = append(before, cloneRun(r))
		case pos >= off:
			after = append(after, cloneRuns(runs[i:])...)
			return before, after
		default: // off falls inside a text run (an equation has n == 1)
			cut := byteOffset(r.Text, off-pos)
			head, tail := cloneRun(r), cloneRun(r)
			head.Text, tail.Text = r.Text[:cut], r.Text[cut:]
			before = append(before, head)
			after = append(after, tail)
			after = append(after, cloneRuns(runs[i+1:])...)
			return before, after
		}
		pos += n
	}
	return before, after
}

// byteOffset returns the byte index of the n-th code point of s.
func byteOffset(s string, n int) int {
	i := 0
	for j := range s {
		if i == n {
			return j
		}
		i++
	}
	return len(s)
}

func cloneRun(r Run) Run {
	if r.Marks != nil {
		r.Marks = append([]Mark(nil), r.Marks...)
	}
	return r
}
