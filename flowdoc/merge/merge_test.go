package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
)

// richText reads a vector's rich text: a string is one unmarked run.
type richText []flowdoc.Run

func (r *richText) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = nil
		if s != "" {
			*r = []flowdoc.Run{{Text: s}}
		}
		return nil
	}
	var runs []flowdoc.Run
	if err := json.Unmarshal(b, &runs); err != nil {
		return err
	}
	*r = runs
	return nil
}

type vector struct {
	Name     string    `json:"name"`
	Base     richText  `json:"base"`
	Ours     richText  `json:"ours"`
	Theirs   richText  `json:"theirs"`
	Merged   *richText `json:"merged"`
	Conflict bool      `json:"conflict"`
}

func readVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/protocol/merge.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("testdata/protocol/merge.json: %v", err)
	}
	return f.Vectors
}

// TestVectors runs the shared vectors of docs/protocol.md.
func TestVectors(t *testing.T) {
	vs := readVectors(t)
	if len(vs) < 60 {
		t.Fatalf("%d vectors, the spec promises at least 60", len(vs))
	}
	names := map[string]bool{}
	for _, v := range vs {
		if names[v.Name] {
			t.Errorf("vector %q is there twice", v.Name)
		}
		names[v.Name] = true
		if (v.Merged == nil) == !v.Conflict {
			t.Errorf("%s: a vector has either merged or conflict", v.Name)
			continue
		}
		got, err := Runs(v.Base, v.Ours, v.Theirs)
		if v.Conflict {
			if !errors.Is(err, ErrConflict) {
				t.Errorf("%s: got %s, %v; want a conflict", v.Name, show(got), err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			continue
		}
		if want := []flowdoc.Run(*v.Merged); !sameRuns(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", v.Name, show(got), show(want))
		}
	}
}

func sameRuns(a, b []flowdoc.Run) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func show(rs []flowdoc.Run) string {
	b, _ := json.Marshal(rs)
	return string(b)
}

// TestBlock: type and attributes merge as one unit; anything but text
// blocks is not merged.
func TestBlock(t *testing.T) {
	p := func(text string) flowdoc.Block {
		return flowdoc.Block{ID: "p1", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
	}
	h := func(level int, text string) flowdoc.Block {
		return flowdoc.Block{ID: "p1", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: level}, RichText: []flowdoc.Run{{Text: text}}}
	}
	got, err := Block(p("ab"), h(2, "ab"), p("abc"))
	if err != nil || got.Type != flowdoc.Heading || got.Attrs.Level != 2 || flowdoc.PlainText(got.RichText) != "abc" {
		t.Errorf("ours made it a heading, theirs typed: got %+v, %v", got, err)
	}
	got, err = Block(p("ab"), p("Xab"), flowdoc.Block{ID: "p1", Type: flowdoc.Quote, RichText: []flowdoc.Run{{Text: "ab"}}})
	if err != nil || got.Type != flowdoc.Quote || flowdoc.PlainText(got.RichText) != "Xab" {
		t.Errorf("theirs made it a quote, ours typed: got %+v, %v", got, err)
	}
	if _, err := Block(h(1, "ab"), h(2, "ab"), h(3, "ab")); !errors.Is(err, ErrConflict) {
		t.Errorf("both changed the level: %v, want a conflict", err)
	}
	if got, err := Block(h(1, "ab"), h(2, "abX"), h(2, "Yab")); err != nil || got.Attrs.Level != 2 || flowdoc.PlainText(got.RichText) != "YabX" {
		t.Errorf("both set the same level: %+v, %v", got, err)
	}
	code := flowdoc.Block{ID: "p1", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Text: "x"}}
	if _, err := Block(p("ab"), code, p("abc")); !errors.Is(err, ErrConflict) {
		t.Errorf("a code block: %v, want a conflict", err)
	}
}

// --- property tests ------------------------------------------------------

// The pools: base characters are distinct code points (so that a side's
// diff finds exactly the edits its script made); inserted ones come from
// another pool.
var (
	basePool = []rune("abcdefghijklmnopqrstuvwxyz漢字仮名東京都庁日本語😀👋🏽🎉👩\u200d💻\u0301\u0303éñ中文")
	insPool  = []rune("ABCXYZ木火😃🔬\u0302ü")
	fmts     = []flowdoc.Run{{}, {Marks: []flowdoc.Mark{flowdoc.Bold}}, {Marks: []flowdoc.Mark{flowdoc.Italic, flowdoc.Underline}},
		{Link: "https://example.com/"}, {Equation: "x^2"}}
)

func randChar(rng *rand.Rand, pool []rune) char {
	f := fmts[rng.IntN(len(fmts))]
	if f.Equation != "" {
		return char{flowdoc.ObjectReplacement, tf.id(f)}
	}
	return char{pool[rng.IntN(len(pool))], tf.id(f)}
}

// edit replaces base[start:end] with ins.
type edit struct {
	start, end int
	ins        []char
}

// script makes edits of base in the regions [cuts[i], cuts[i+1]) given,
// each replacing, deleting, restyling or inserting before it.
func randEdit(rng *rand.Rand, base []char, start, end int) edit {
	e := edit{start: start, end: end}
	switch rng.IntN(4) {
	case 0: // delete
	case 1: // restyle: the same code points, another formatting
		for _, c := range base[start:end] {
			f := fmts[rng.IntN(len(fmts)-1)]
			if tf.id(f) == c.fmt || c.r == flowdoc.ObjectReplacement {
				e.ins = append(e.ins, char{insPool[rng.IntN(len(insPool))], c.fmt})
				continue
			}
			e.ins = append(e.ins, char{c.r, tf.id(f)})
		}
	default: // replace
		for range 1 + rng.IntN(4) {
			e.ins = append(e.ins, randChar(rng, insPool))
		}
	}
	if start == end && len(e.ins) == 0 {
		e.ins = append(e.ins, randChar(rng, insPool))
	}
	return e
}

func apply(base []char, es []edit) []char {
	var out []char
	pos := 0
	for _, e := range es {
		out = append(out, base[pos:e.start]...)
		out = append(out, e.ins...)
		pos = e.end
	}
	return append(out, base[pos:]...)
}

// both applies two disjoint scripts: at each point the insertions of a,
// then of b, then a range that starts there; an edit of b identical to
// one of a applies once.
func both(base []char, a, b []edit) []char {
	b = slices.DeleteFunc(slices.Clone(b), func(e edit) bool {
		return slices.ContainsFunc(a, func(o edit) bool {
			return o.start == e.start && o.end == e.end && slices.Equal(o.ins, e.ins)
		})
	})
	var out []char
	for p := 0; p <= len(base); {
		var rng *edit
		for _, s := range [][]edit{a, b} {
			for i := range s {
				if s[i].start == p && s[i].end == p {
					out = append(out, s[i].ins...)
				} else if s[i].start == p {
					rng = &s[i]
				}
			}
		}
		if rng != nil {
			out = append(out, rng.ins...)
			p = rng.end
			continue
		}
		if p < len(base) {
			out = append(out, base[p])
		}
		p++
	}
	return out
}

func distinctBase(rng *rand.Rand, n int) []char {
	pool := slices.Clone(basePool)
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	out := make([]char, n)
	for i := range out {
		out[i] = char{pool[i], tf.id(fmts[rng.IntN(len(fmts)-1)])}
	}
	return out
}

// tf interns the test's formats.
var tf = newFormats()

func srcOf() *formats { return tf }

// TestPropertyDisjoint: for a random base and two random non-overlapping
// edit scripts, the merge is both applied (ours' insertions first at a
// shared point), and swapping the sides changes only that order.
func TestPropertyDisjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 23))
	src := srcOf()
	for iter := range 3000 {
		base := distinctBase(rng, rng.IntN(len(basePool)))
		// Cut the base into regions, each left alone or edited by a or b,
		// with insertions at region boundaries too.
		var a, b []edit
		ties := false
		for p := 0; p <= len(base); {
			insA, insB := rng.IntN(6) == 0, rng.IntN(6) == 0
			if insA {
				a = append(a, randEdit(rng, base, p, p))
			}
			if insB {
				b = append(b, randEdit(rng, base, p, p))
			}
			ties = ties || insA && insB
			if p == len(base) {
				break
			}
			n := 1 + rng.IntN(min(4, len(base)-p))
			switch rng.IntN(4) {
			case 0:
				if !insB { // a range of a after an insertion of b there is fine too, but keep scripts simple
					a = append(a, randEdit(rng, base, p, p+n))
				}
			case 1:
				if !insA {
					b = append(b, randEdit(rng, base, p, p+n))
				}
			}
			p += n
		}
		a, b = joinEdits(a), joinEdits(b)
		ours, theirs := apply(base, a), apply(base, b)
		got, err := Runs(src.runsOf(base), src.runsOf(ours), src.runsOf(theirs))
		if err != nil {
			t.Fatalf("iter %d: %v\nbase %q\nours %q\ntheirs %q", iter, err, plain(base), plain(ours), plain(theirs))
		}
		want := src.runsOf(both(base, a, b))
		if !sameRuns(got, want) {
			t.Fatalf("iter %d:\nbase %s\nours %s\ntheirs %s\n got %s\nwant %s", iter, show(src.runsOf(base)),
				show(src.runsOf(ours)), show(src.runsOf(theirs)), show(got), show(want))
		}
		swapped, err := Runs(src.runsOf(base), src.runsOf(theirs), src.runsOf(ours))
		if err != nil {
			t.Fatalf("iter %d swapped: %v", iter, err)
		}
		if wantSwapped := src.runsOf(both(base, b, a)); !sameRuns(swapped, wantSwapped) {
			t.Fatalf("iter %d swapped: got %s want %s", iter, show(swapped), show(wantSwapped))
		}
		if !ties && !sameRuns(swapped, got) {
			t.Fatalf("iter %d: without insertions at one point the merge is symmetric: %s vs %s", iter, show(got), show(swapped))
		}
	}
}

// joinEdits joins edits of one script that touch (an insertion right
// before a range, adjacent ranges): a diff sees them as one hunk.
func joinEdits(es []edit) []edit {
	var out []edit
	for _, e := range es {
		if n := len(out); n > 0 && out[n-1].end == e.start {
			out[n-1].end = e.end
			out[n-1].ins = append(out[n-1].ins, e.ins...)
			continue
		}
		out = append(out, e)
	}
	return out
}

func plain(cs []char) string {
	rs := make([]rune, len(cs))
	for i, c := range cs {
		rs[i] = c.r
	}
	return string(rs)
}

// TestPropertyOverlap: scripts with a range of a overlapping a range of
// b, or an insertion of one strictly inside a range of the other, always
// conflict, whichever side is ours.
func TestPropertyOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 23))
	src := srcOf()
	for iter := range 3000 {
		base := distinctBase(rng, 3+rng.IntN(len(basePool)-3))
		s := rng.IntN(len(base) - 2)
		e := s + 2 + rng.IntN(len(base)-s-1)
		a := edit{start: s, end: e}
		if rng.IntN(2) == 0 {
			a.ins = []char{randChar(rng, insPool)}
		}
		var b edit
		switch rng.IntN(3) {
		case 0: // an insertion strictly inside
			p := s + 1 + rng.IntN(e-s-1)
			b = edit{start: p, end: p, ins: []char{randChar(rng, insPool)}}
		case 1: // a range starting inside
			p := s + 1 + rng.IntN(e-s-1)
			b = edit{start: p, end: p + 1 + rng.IntN(len(base)-p)}
		default: // a range covering the start
			p := rng.IntN(s + 1)
			b = edit{start: p, end: s + 1 + rng.IntN(len(base)-s)}
		}
		if b.end > b.start || rng.IntN(2) == 0 {
			b.ins = append(b.ins, char{insPool[rng.IntN(len(insPool))], 0})
		}
		if b.start == a.start && b.end == a.end {
			continue
		}
		ours, theirs := apply(base, []edit{a}), apply(base, []edit{b})
		for _, pair := range [][2][]char{{ours, theirs}, {theirs, ours}} {
			got, err := Runs(src.runsOf(base), src.runsOf(pair[0]), src.runsOf(pair[1]))
			var c *Conflict
			if !errors.As(err, &c) || c.Reason == "" {
				t.Fatalf("iter %d: base %q ours %q theirs %q: got %s, %v; want a conflict", iter,
					plain(base), plain(pair[0]), plain(pair[1]), show(got), err)
			}
		}
	}
}

// TestDiffBound: past MaxCells a side's diff is one hunk, still correct.
func TestDiffBound(t *testing.T) {
	a := make([]char, 2100)
	b := make([]char, 2100)
	for i := range a {
		a[i] = char{rune('a' + i%26), 0}
		b[i] = char{rune('a' + (i+1)%26), 0}
	}
	hs := diff(a, b, 0)
	if len(hs) != 1 || hs[0].start != 0 || hs[0].end != 2100 {
		t.Fatalf("got %d hunks, want one over the whole middle", len(hs))
	}
	if got := apply(a, []edit{{hs[0].start, hs[0].end, hs[0].ins}}); !slices.Equal(got, b) {
		t.Fatal("the hunk does not make b")
	}
}

// TestDiffRepeats: on text made of few letters (where equal characters
// abound and edits can slide), applying a side's hunks gives the side.
func TestDiffRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 23))
	word := func() []char {
		out := make([]char, rng.IntN(12))
		for i := range out {
			out[i] = char{rune("ab "[rng.IntN(3)]), 0}
		}
		return out
	}
	for range 20000 {
		a, b := word(), word()
		var es []edit
		for _, h := range diff(a, b, 0) {
			es = append(es, edit{h.start, h.end, h.ins})
		}
		if got := apply(a, es); !slices.Equal(got, b) {
			t.Fatalf("%q -> %q: the hunks make %q", plain(a), plain(b), plain(got))
		}
	}
}

// BenchmarkParagraph merges two edits of a 2,000-character paragraph:
// one types at the start and one at the end, or both in the middle of a
// mixed-script text with marks.
func BenchmarkParagraph(b *testing.B) {
	text := []rune{}
	for len(text) < 2000 {
		text = append(text, []rune(fmt.Sprintf("word%d 漢字 👋 ", len(text)))...)
	}
	text = text[:2000]
	base := []flowdoc.Run{{Text: string(text[:1000])}, {Text: string(text[1000:1200]), Marks: []flowdoc.Mark{flowdoc.Bold}}, {Text: string(text[1200:])}}
	ours := []flowdoc.Run{{Text: "Start " + string(text[:1000])}, base[1], base[2]}
	theirs := []flowdoc.Run{base[0], base[1], {Text: string(text[1200:]) + " end."}}
	mid := []flowdoc.Run{{Text: string(text[:500]) + "typed here" + string(text[510:1000])}, base[1], base[2]}
	// spread: nine words typed across the paragraph by other editors
	// (what a same-block editor's base lags behind), one at its end.
	var typed []rune
	for k, r := range text {
		if k > 0 && k%200 == 0 {
			typed = append(typed, []rune(fmt.Sprintf("typed%d ", k/200))...)
		}
		typed = append(typed, r)
	}
	spread := []flowdoc.Run{{Text: string(typed)}}
	plain := []flowdoc.Run{{Text: string(text)}}
	plainEnd := []flowdoc.Run{{Text: string(text) + " end."}}
	for _, c := range []struct {
		name         string
		ours, theirs []flowdoc.Run
		base         []flowdoc.Run
	}{{"start-end", ours, theirs, base}, {"middle-end", mid, theirs, base}, {"spread-end", spread, plainEnd, plain}} {
		b.Run(c.name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := Runs(c.base, c.ours, c.theirs); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(t0))
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// TestBandedTableWalksAsTheFullOne: the banded table and the edits table
// give every diff the walk over the full table gives, on edits of every size over a small
// alphabet (many equal characters, so many ties between alignments).
func TestBandedTableWalksAsTheFullOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	banded, searched := 0, 0
	for iter := 0; iter < 4000; iter++ {
		alpha := 2 + rng.IntN(4)
		a := make([]char, 1+rng.IntN(300))
		for i := range a {
			a[i] = char{r: rune('a' + rng.IntN(alpha)), fmt: int32(rng.IntN(2))}
		}
		b := slices.Clone(a)
		for e := rng.IntN(1 + rng.IntN(60)); e >= 0 && len(b) > 0; e-- {
			at := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b = slices.Delete(b, at, min(len(b), at+1+rng.IntN(4)))
			default:
				ins := make([]char, 1+rng.IntN(6))
				for i := range ins {
					ins[i] = char{r: rune('a' + rng.IntN(alpha))}
				}
				b = slices.Insert(b, at, ins...)
			}
		}
		if len(b) == 0 {
			continue
		}
		got := lcsOf(a, b)
		if got.w > 0 {
			banded++
		}
		want := walk(lcsFull(a, b), a, b, 0, 0)
		if have := walk(got, a, b, 0, 0); !slices.EqualFunc(have, want, hunk.equal) {
			t.Fatalf("iteration %d: banded walk %v, full walk %v", iter, have, want)
		}
		if e := editsOf(a, b, maxEdits); e != nil {
			searched++
			if have := walk(e, a, b, 0, 0); !slices.EqualFunc(have, want, hunk.equal) {
				t.Fatalf("iteration %d: edits walk %v, full walk %v", iter, have, want)
			}
		}
	}
	if banded < 1000 || searched < 1000 {
		t.Fatalf("only %d of the diffs used a band and %d the edits table: the test does not test them", banded, searched)
	}
}
