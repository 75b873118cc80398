package merge

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/flowdoc"
)

// ErrConflict is what every *Conflict matches with errors.Is.
var ErrConflict = errors.New("merge: the edits overlap")

// Conflict says why two edits of a block cannot be merged.
type Conflict struct {
	Reason string
}

func (c *Conflict) Error() string { return "merge: " + c.Reason }

// Unwrap makes errors.Is(err, ErrConflict) true.
func (c *Conflict) Unwrap() error { return ErrConflict }

// MaxCells bounds the longest-common-subsequence table of one side's
// diff: when the changed middle of base (n characters) and of the side
// (m characters) has n*m above it, the side's diff is one hunk replacing
// the whole middle. It bounds a merge to about 8 MiB and a few
// milliseconds whatever the block.
const MaxCells = 1 << 22

// char is one character of rich text: a code point (or U+FFFC for an
// inline equation) and its formatting.
type char struct {
	r   rune
	fmt int32 // index in the merge's formats: equal chars are equal runs
}

// formats interns the formattings of a merge: canonical marks, link and
// equation, keyed by fmtOf.
type formats struct {
	ids  map[string]int32
	runs []flowdoc.Run
}

func newFormats() *formats { return &formats{ids: map[string]int32{}} }

func (f *formats) id(r flowdoc.Run) int32 {
	k := fmtOf(r)
	if id, ok := f.ids[k]; ok {
		return id
	}
	id := int32(len(f.runs))
	f.ids[k] = id
	f.runs = append(f.runs, cloneFormat(r))
	return id
}

// fmtOf is the formatting key of a run: its marks in canonical order, its
// link and its equation, joined so that no two formattings share a key.
func fmtOf(r flowdoc.Run) string {
	if len(r.Marks) == 0 && r.Link == "" && r.Equation == "" {
		return ""
	}
	marks := canonicalMarks(r.Marks)
	var sb strings.Builder
	for _, m := range marks {
		sb.WriteString(string(m))
		sb.WriteByte(0)
	}
	sb.WriteByte(1)
	sb.WriteString(r.Link)
	sb.WriteByte(1)
	sb.WriteString(r.Equation)
	return sb.String()
}

// canonicalMarks sorts marks in flowdoc.Marks order (unknown ones after,
// by name) without duplicates.
func canonicalMarks(ms []flowdoc.Mark) []flowdoc.Mark {
	rank := func(m flowdoc.Mark) int {
		if i := slices.Index(flowdoc.Marks, m); i >= 0 {
			return i
		}
		return len(flowdoc.Marks)
	}
	out := slices.Clone(ms)
	slices.SortStableFunc(out, func(a, b flowdoc.Mark) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(string(a), string(b))
	})
	return slices.Compact(out)
}

// chars spells runs out as characters.
func (fs *formats) chars(runs []flowdoc.Run) []char {
	n := 0
	for _, r := range runs {
		if r.Equation != "" {
			n++
		} else {
			n += utf8.RuneCountInString(r.Text)
		}
	}
	out := make([]char, 0, n)
	for _, r := range runs {
		f := fs.id(r)
		if r.Equation != "" {
			out = append(out, char{flowdoc.ObjectReplacement, f})
			continue
		}
		for _, c := range r.Text {
			out = append(out, char{c, f})
		}
	}
	return out
}

// runsOf joins characters back into runs: adjacent characters of the same
// formatting share a run, an inline equation is a run of its own.
func (fs *formats) runsOf(cs []char) []flowdoc.Run {
	var out []flowdoc.Run
	var sb strings.Builder
	cur := int32(-1)
	open := false
	flush := func() {
		if open {
			r := cloneFormat(fs.runs[cur])
			r.Text = sb.String()
			out = append(out, r)
			sb.Reset()
			open = false
		}
	}
	for _, c := range cs {
		f := fs.runs[c.fmt]
		if f.Equation != "" {
			flush()
			r := cloneFormat(f)
			out = append(out, r)
			continue
		}
		if open && c.fmt != cur {
			flush()
		}
		cur, open = c.fmt, true
		sb.WriteRune(c.r)
	}
	flush()
	return out
}

func cloneFormat(r flowdoc.Run) flowdoc.Run {
	out := flowdoc.Run{Link: r.Link, Equation: r.Equation}
	if len(r.Marks) > 0 {
		out.Marks = canonicalMarks(r.Marks)
	}
	return out
}

// hunk replaces base[start:end] with ins. lo and hi bound the places an
// equivalent edit could be (see slide): for a pure insertion the first
// and last point, for a pure deletion the first start and last end; for
// a replacement start and end.
type hunk struct {
	start, end int
	ins        []char
	side       int // 0 ours, 1 theirs
	lo, hi     int
}

// diff is the hunks that turn a into b: the common prefix and suffix are
// kept, and the middle is walked by its longest common subsequence (see
// docs/protocol.md).
func diff(a, b []char, side int) []hunk {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	am, bm := a[p:len(a)-s], b[p:len(b)-s]
	n, m := len(am), len(bm)
	if n == 0 && m == 0 {
		return nil
	}
	if n == 0 || m == 0 || n*m > MaxCells {
		out := []hunk{{start: p, end: p + n, ins: slices.Clone(bm), side: side}}
		slide(a, out)
		return out
	}
	var t table
	if e := editsOf(am, bm, maxEdits); e != nil {
		t = e
	} else {
		t = lcsOf(am, bm)
	}
	out := walk(t, am, bm, p, side)
	slide(a, out)
	return out
}

// walk turns the table of the middles am and bm (which start at p in
// base) into hunks.
func walk(t table, am, bm []char, p, side int) []hunk {
	n, m := len(am), len(bm)
	var out []hunk
	var cur *hunk
	i, j := 0, 0
	// The walk inserts while that keeps the common subsequence's length,
	// else keeps an equal character, else deletes. Edits so stay whole:
	// a word typed before an equal letter is one insertion, and a word
	// deleted after equal letters one deletion, not pieces around them.
	for i < n || j < m {
		ins := j < m && t.insertKeeps(i, j)
		keep := !ins && i < n && j < m && am[i] == bm[j]
		del := !ins && !keep
		if keep {
			cur = nil
			i++
			j++
			continue
		}
		if cur == nil {
			out = append(out, hunk{start: p + i, end: p + i, side: side})
			cur = &out[len(out)-1]
		}
		if del {
			i++
			cur.end = p + i
		} else {
			cur.ins = append(cur.ins, bm[j])
			j++
		}
	}
	return out
}

// table answers the walk's one question about L(i, j), the length of the
// longest common subsequence of am[i:] and bm[j:]: whether L(i, j+1) =
// L(i, j), that is whether inserting bm[j] keeps an optimal path. The
// walk asks it only at cells on an optimal path.
type table interface {
	insertKeeps(i, j int) bool
}

// maxEdits bounds the edits table: a diff of more insertions and
// deletions uses lcsOf's band or full table instead.
const maxEdits = 256

// edits answers from the distances to the end: D(i, j), the fewest
// insertions and deletions that turn am[i:] into bm[j:], is
// (n-i)+(m-j)-2·L(i, j), so L(i, j+1) = L(i, j) exactly when D(i, j+1) =
// D(i, j)-1. The distances come from Myers' greedy algorithm run from the
// end: v[d] holds, for each diagonal k = (n-i)-(m-j), the farthest point
// from the end (the largest n-i) reachable with d edits. On a diagonal
// D never grows towards the end (D(i+1, j+1) <= D(i, j)), so D(i, j) is
// the least d whose v[d] reaches n-i on the cell's diagonal. It costs
// O(n+m+E²) for a diff of E edits, against the band's O((n+m)·E).
type edits struct {
	n, m int
	// v[d*d+k+d] is v[d][k+d], k = -d, -d+2, ..., d (-1 when
	// unreachable): the rows of d = 0, 1, ... one after the other, row d
	// starting at d² (the 2i+1 cells of the rows before it); d runs to D.
	v []int
	D int
}

// at is v[d][k+d].
func (e *edits) at(d, k int) int { return e.v[d*d+k+d] }

// editsOf runs the search up to limit edits; nil when the diff needs more.
func editsOf(a, b []char, limit int) *edits {
	n, m := len(a), len(b)
	// D >= |n-m|, and is that for a diff of insertions (or deletions)
	// alone, the common case: room for the rows up to it and a few more,
	// doubled when a diff needs more.
	guess := min(max(n-m, m-n)+4, limit) + 1
	e := &edits{n: n, m: m, v: make([]int, 0, guess*guess)}
	// x counts characters of a consumed from its end, y of b: the cell
	// (i, j) = (n-x, m-y), and the diagonal k = x-y.
	var prev []int
	for d := 0; d <= limit; d++ {
		if need := (d + 1) * (d + 1); need > cap(e.v) {
			v := make([]int, len(e.v), max(need, 2*cap(e.v)))
			copy(v, e.v)
			e.v = v
		}
		e.v = e.v[:(d+1)*(d+1)]
		cur := e.v[d*d:]
		if d > 0 {
			prev = e.v[(d-1)*(d-1) : d*d]
		}
		for k := -d; k <= d; k += 2 {
			// From diagonal k+1 (one more of b consumed: an insertion) or
			// k-1 (one more of a: a deletion), the farther. Past the grid
			// it stops at the diagonal's last cell, which the nearer cells
			// of the diagonal it came from reach with one edit too.
			x := 0
			if d > 0 {
				x = -1
				if k+1 <= d-1 {
					x = prev[k+1+d-1]
				}
				if k-1 >= -(d-1) && prev[k-1+d-1] >= 0 {
					x = max(x, prev[k-1+d-1]+1)
				}
				if last := min(n, m+k); x > last {
					x = last
				}
			}
			if x >= 0 && x >= k {
				for y := x - k; x < n && y < m && a[n-1-x] == b[m-1-y]; y++ {
					x++
				}
			} else {
				x = -1
			}
			cur[k+d] = x
		}
		if k := n - m; k >= -d && k <= d && (k+d)%2 == 0 && cur[k+d] == n {
			e.D = d
			return e // reached (0, 0): D(0, 0) = d
		}
	}
	return nil
}

// dist is D(i, j), or a number above every computed distance when it is
// larger than those.
func (e *edits) dist(i, j int) int {
	x, y := e.n-i, e.m-j
	k := x - y
	lo := max(k, -k)
	last := e.D
	if lo > last {
		return last + 1
	}
	// The least d >= lo of k's parity with v[d][k+d] >= x; v[d] on a
	// diagonal never decreases with d.
	if (last-lo)%2 != 0 {
		last--
	}
	if e.at(last, k) < x {
		return e.D + 1
	}
	for lo < last {
		mid := lo + (last-lo)/4*2
		if e.at(mid, k) >= x {
			last = mid
		} else {
			lo = mid + 2
		}
	}
	return lo
}

func (e *edits) insertKeeps(i, j int) bool {
	return e.dist(i, j+1) == e.dist(i, j)-1
}

func (t *lcs) insertKeeps(i, j int) bool { return t.at(i, j+1) == t.at(i, j) }

// lcs holds L(i, j), the length of the longest common subsequence of
// a[i:] and b[j:], for the cells the walk of diff can ask about: every
// cell when w is 0, else only the diagonals |j-i| <= w (a band), where a
// cell outside reads 0. The walk asks only about cells on an optimal
// path and their right neighbours; a path with D insertions and
// deletions never leaves the diagonals |j-i| <= D, so with w >= D those
// cells read their exact value and any other cell at most its own, which
// leaves every decision of the walk as the full table makes it.
type lcs struct {
	n, m, w int
	L       []uint16
}

func (t *lcs) at(i, j int) uint16 {
	if i >= t.n || j >= t.m {
		return 0
	}
	if t.w == 0 {
		return t.L[i*(t.m+1)+j]
	}
	k := j - i + t.w
	if k < 0 || k > 2*t.w {
		return 0
	}
	return t.L[i*(2*t.w+1)+k]
}

// lcsOf computes the table for the changed middles a and b (both
// non-empty). It tries a band as wide as the lengths' difference (at
// least 32 diagonals): when the band's LCS implies no more than w
// insertions and deletions it is exact; else the implied count, an upper
// bound of the true one, is the width of a second and final try. The full
// table is used when a band would be as wide as it.
func lcsOf(a, b []char) *lcs {
	n, m := len(a), len(b)
	w := max(n-m, m-n, 32)
	for {
		if 2*w+1 >= m+1 {
			return lcsFull(a, b)
		}
		t := lcsBand(a, b, w)
		d := n + m - 2*int(t.at(0, 0))
		if d <= w {
			return t
		}
		w = d
	}
}

// lcsFull is the whole table, in uint16: L never exceeds min(n, m),
// which MaxCells keeps below 2048.
func lcsFull(a, b []char) *lcs {
	n, m := len(a), len(b)
	w := m + 1
	L := make([]uint16, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				L[i*w+j] = L[(i+1)*w+j+1] + 1
			case L[(i+1)*w+j] >= L[i*w+j+1]:
				L[i*w+j] = L[(i+1)*w+j]
			default:
				L[i*w+j] = L[i*w+j+1]
			}
		}
	}
	return &lcs{n: n, m: m, L: L}
}

// lcsBand is the table on the diagonals |j-i| <= w, each cell computed
// from its neighbours as lcsFull does, a neighbour outside the band
// reading 0.
func lcsBand(a, b []char, w int) *lcs {
	n, m := len(a), len(b)
	cols := 2*w + 1
	t := &lcs{n: n, m: m, w: w, L: make([]uint16, n*cols)}
	for i := n - 1; i >= 0; i-- {
		// Cell (i, j) is row[k] with k = j-i+w; (i+1, j+1) is next[k],
		// (i+1, j) next[k-1] and (i, j+1) row[k+1].
		row := t.L[i*cols : (i+1)*cols]
		var next []uint16
		if i+1 < n {
			next = t.L[(i+1)*cols : (i+2)*cols]
		}
		for j := min(m-1, i+w); j >= max(0, i-w); j-- {
			k := j - i + w
			var diag, down, right uint16
			if next != nil {
				if j+1 < m {
					diag = next[k]
				}
				if k > 0 {
					down = next[k-1]
				}
			}
			if j+1 < m && k+1 < cols {
				right = row[k+1]
			}
			if a[i] == b[j] {
				row[k] = diag + 1
			} else {
				row[k] = max(down, right)
			}
		}
	}
	return t
}

// slide places each pure insertion or deletion at the leftmost place that
// gives the same text, not past the side's neighbouring hunks, and notes
// in lo and hi how far it could go either way. Both sides so put an edit
// of repeated text at the same place (where the tie rule orders it), and
// a clash is judged over every place an edit could be.
func slide(a []char, hs []hunk) {
	for k := range hs {
		h := &hs[k]
		prev, next := 0, len(a)
		if k > 0 {
			prev = hs[k-1].end
		}
		if k+1 < len(hs) {
			next = hs[k+1].start
		}
		h.lo, h.hi = h.start, h.end
		switch {
		case h.start == h.end && len(h.ins) > 0:
			// Right: inserting x+rest at p is inserting rest+x at p+1
			// when a[p] == x.
			for q, ins := h.start, h.ins; q < next && a[q] == ins[0]; q++ {
				ins = append(slices.Clone(ins[1:]), a[q])
				h.hi = q + 1
			}
			for h.start > prev && a[h.start-1] == h.ins[len(h.ins)-1] {
				h.ins = append([]char{a[h.start-1]}, h.ins[:len(h.ins)-1]...)
				h.start--
				h.end--
			}
			h.lo = h.start
		case len(h.ins) == 0:
			for e := h.end; e < next && a[e] == a[e-(h.end-h.start)]; e++ {
				h.hi = e + 1
			}
			for h.start > prev && a[h.start-1] == a[h.end-1] {
				h.start--
				h.end--
			}
			h.lo = h.start
		}
	}
}

func (h hunk) equal(o hunk) bool {
	return h.start == o.start && h.end == o.end && slices.Equal(h.ins, o.ins)
}

// clash reports whether hunks of the two sides cannot both apply: two
// ranges whose places overlap, or an insertion that could be strictly
// inside the other's range. Two insertions never clash.
func clash(a, b hunk) bool {
	ai, bi := a.start == a.end, b.start == b.end
	switch {
	case ai && bi:
		return false // the tie rule orders them
	case ai:
		return a.lo < b.hi && a.hi > b.lo
	case bi:
		return b.lo < a.hi && b.hi > a.lo
	default:
		return a.lo < b.hi && b.lo < a.hi
	}
}

// Runs merges two edits of the rich text base: ours (the version already
// in the draft) and theirs (the incoming one). The result is a fresh
// slice; a *Conflict when the edits overlap.
func Runs(base, ours, theirs []flowdoc.Run) ([]flowdoc.Run, error) {
	fs := newFormats()
	b := fs.chars(base)
	ho, ht := diff(b, fs.chars(ours), 0), diff(b, fs.chars(theirs), 1)
	all := make([]hunk, 0, len(ho)+len(ht))
	// Both lists are sorted by position: a sweep finds every clash and
	// drops a hunk of theirs identical to one of ours.
	j := 0
	for _, t := range ht {
		for j < len(ho) && ho[j].hi < t.lo {
			j++
		}
		dup := false
		for k := j; k < len(ho) && ho[k].lo <= t.hi; k++ {
			if ho[k].equal(t) {
				dup = true
				break
			}
			if clash(ho[k], t) {
				return nil, conflictOf(b, ho[k], t)
			}
		}
		if !dup {
			all = append(all, t)
		}
	}
	all = append(all, ho...)
	slices.SortStableFunc(all, func(x, y hunk) int {
		if x.start != y.start {
			return x.start - y.start
		}
		xr, yr := x.end > x.start, y.end > y.start
		if xr != yr { // an insertion before a range that starts where it is
			if xr {
				return 1
			}
			return -1
		}
		return x.side - y.side // the tie rule: ours first
	})
	out := make([]char, 0, len(b))
	pos := 0
	for _, h := range all {
		out = append(out, b[pos:h.start]...)
		out = append(out, h.ins...)
		pos = max(pos, h.end)
	}
	out = append(out, b[pos:]...)
	return fs.runsOf(out), nil
}

func conflictOf(b []char, o, t hunk) error {
	span := func(h hunk) string {
		if h.start == h.end {
			return fmt.Sprintf("inserts at %d", h.start)
		}
		return fmt.Sprintf("changes %d..%d", h.start, h.end)
	}
	return &Conflict{Reason: fmt.Sprintf("ours %s and theirs %s of a %d-character base overlap", span(o), span(t), len(b))}
}

// Mergeable reports whether blocks of type t are merged inside: the text
// blocks (paragraph, heading, quote).
func Mergeable(t flowdoc.BlockType) bool { return t.IsText() }

// Block merges two edits of a text block: the type and attributes as one
// unit (taken from the side that changed them; both changing them
// differently is a conflict) and the rich text with Runs. All three must
// be text blocks with the same id.
func Block(base, ours, theirs flowdoc.Block) (flowdoc.Block, error) {
	for _, b := range []flowdoc.Block{base, ours, theirs} {
		if !Mergeable(b.Type) {
			return flowdoc.Block{}, &Conflict{Reason: fmt.Sprintf("a %s block is not merged inside", b.Type)}
		}
		if b.ID != base.ID {
			return flowdoc.Block{}, &Conflict{Reason: fmt.Sprintf("blocks %q and %q are not one block", base.ID, b.ID)}
		}
	}
	out := flowdoc.Block{ID: base.ID}
	bo, bt := sameHead(base, ours), sameHead(base, theirs)
	switch {
	case bo:
		out.Type, out.Attrs = theirs.Type, cloneAttrs(theirs.Attrs)
	case bt || sameHead(ours, theirs):
		out.Type, out.Attrs = ours.Type, cloneAttrs(ours.Attrs)
	default:
		return flowdoc.Block{}, &Conflict{Reason: "both sides changed the block's type or attributes"}
	}
	rt, err := Runs(base.RichText, ours.RichText, theirs.RichText)
	if err != nil {
		return flowdoc.Block{}, err
	}
	out.RichText = rt
	return out, nil
}

// sameHead reports whether a and b have the same type and attributes.
func sameHead(a, b flowdoc.Block) bool {
	if a.Type != b.Type {
		return false
	}
	var x, y flowdoc.Attrs
	if a.Attrs != nil {
		x = *a.Attrs
	}
	if b.Attrs != nil {
		y = *b.Attrs
	}
	return x == y
}

func cloneAttrs(a *flowdoc.Attrs) *flowdoc.Attrs {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}
