package search

import (
	"sort"
	"strings"
	"unicode/utf8"

	bsearch "github.com/blevesearch/bleve/v2/search"
)

// snippet cuts from body the text around the first match of locs (byte
// offsets of matched terms), about snippetLen bytes, split where the
// matched words begin and end; without a match, the body's beginning.
// CJK unigrams and bigrams overlap: overlapping marks are merged.
func snippet(body string, locs bsearch.TermLocationMap) []Segment {
	if body == "" {
		return nil
	}
	type span struct{ start, end int }
	var marks []span
	for _, ls := range locs {
		for _, l := range ls {
			s, e := int(l.Start), int(l.End)
			if s < 0 || e > len(body) || s >= e {
				continue
			}
			marks = append(marks, span{s, e})
		}
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].start < marks[j].start })
	from := 0
	if len(marks) > 0 {
		from = marks[0].start - snippetLen/4
	}
	from = max(from, 0)
	to := min(from+snippetLen, len(body))
	// Cut on rune boundaries, and on a space when one is near.
	for from > 0 && !utf8.RuneStart(body[from]) {
		from--
	}
	if from > 0 {
		if i := strings.IndexAny(body[from:min(from+20, len(body))], " \n"); i >= 0 && (len(marks) == 0 || from+i < marks[0].start) {
			from += i + 1
		}
	}
	for to < len(body) && !utf8.RuneStart(body[to]) {
		to++
	}
	var out []Segment
	add := func(s string, mark bool) {
		s = strings.ReplaceAll(s, "\n", " ")
		if s == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Mark == mark {
			out[n-1].Text += s
			return
		}
		out = append(out, Segment{Text: s, Mark: mark})
	}
	if from > 0 {
		add("…", false)
	}
	at := from
	for _, m := range marks {
		if m.end <= at || m.start >= to {
			continue
		}
		s, e := max(m.start, at), min(m.end, to)
		add(body[at:s], false)
		add(body[s:e], true)
		at = e
	}
	add(body[at:to], false)
	if to < len(body) {
		add("…", false)
	}
	return out
}
