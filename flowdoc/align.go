package flowdoc

import (
	"bytes"
	"unicode"
)

// Align gives the blocks of next that have no id the ids of the blocks of
// cur they continue, so that a document written again from outside (a
// Markdown file imported once more, FlowDocument JSON without ids) keeps
// the identity of its blocks: history, suggestions and restores follow
// blocks by id.
//
// Blocks are aligned by content and order, the way Diff tells moves from
// blocks that stay:
//
//  1. A block of next whose content equals that of a block of cur takes
//     its id (equal blocks pair up in order). Of these pairs, those in a
//     longest run kept in order (Diff's lis) are anchors; the others are
//     moved blocks, which keep their id too.
//  2. Between two anchors, the unpaired blocks of next and of cur are
//     paired in order by the similarity of their words (an edited block),
//     maximising the total similarity; a pair needs half of its words in
//     common, and a block changes type only among the text blocks. A
//     paragraph split in two keeps its id in the part most like it.
//     Blocks still unpaired there pair in order when both sides have as
//     many, of matching types: a stretch rewritten block for block keeps
//     its ids, as git sees changed lines.
//  3. What is left is paired anywhere when at least 4 in 5 of its words
//     are common (a block moved and edited).
//
// Blocks inside a paired details or columns block are aligned with its
// children the same way. Every other block without an id is new: it gets
// a fresh id, unused in cur and next (the ids Apply generates). A block of
// next that has an id keeps it, and the block of cur with that id is not
// paired with another. The result is deterministic; next is not modified.
func Align(cur, next Document) Document {
	out := next
	out.Blocks = cloneBlocks(next.Blocks)
	g := &idGen{used: collectIDs(cur.Blocks, nil)}
	collectIDs(out.Blocks, g.used)
	claimed := collectIDs(out.Blocks, nil)
	alignBlocks(g, claimed, cur.Blocks, out.Blocks)
	return out
}

func cloneBlocks(bs []Block) []Block {
	if bs == nil {
		return nil
	}
	out := make([]Block, len(bs))
	for i, b := range bs {
		out[i] = b
		out[i].Children = cloneBlocks(b.Children)
		if b.Cols != nil {
			out[i].Cols = make([]Column, len(b.Cols))
			for c, col := range b.Cols {
				out[i].Cols[c].Blocks = cloneBlocks(col.Blocks)
			}
		}
		out[i].Items = cloneItems(b.Items)
	}
	return out
}

// Similarity thresholds of Align, in [0, 1].
const (
	alignEdited = 0.5 // an unpaired block between anchors
	alignMoved  = 0.8 // an unpaired block anywhere
	// alignCells bounds the work of pairing one stretch (its blocks of
	// next times those of cur); a larger stretch is paired greedily.
	alignCells = 1 << 20
)

// alignBlocks fills the empty ids of next (one level: a list of siblings)
// from old, then recurses into paired parents.
func alignBlocks(g *idGen, claimed map[string]bool, old, next []Block) {
	pair := make([]int, len(next)) // next index -> old index, -1 unpaired
	for j := range pair {
		pair[j] = -1
	}
	taken := make([]bool, len(old))
	for i, b := range old {
		taken[i] = claimed[b.ID] // an id next names itself stays its own
	}
	for j, b := range next {
		if b.ID == "" {
			continue
		}
		for i, o := range old {
			if o.ID == b.ID {
				pair[j], taken[i] = i, true
				break
			}
		}
	}
	// 1. Equal content.
	enc := make([][]byte, len(old))
	byContent := map[string][]int{}
	for i, o := range old {
		if taken[i] {
			continue
		}
		enc[i] = EncodeContent(o)
		k := string(o.Type) + "\x00" + string(enc[i])
		byContent[k] = append(byContent[k], i)
	}
	for j, b := range next {
		if b.ID != "" {
			continue
		}
		k := string(b.Type) + "\x00" + string(EncodeContent(b))
		if q := byContent[k]; len(q) > 0 {
			pair[j], taken[q[0]] = q[0], true
			byContent[k] = q[1:]
		}
	}
	// Anchors: the equal pairs kept in order.
	var at []int // next indexes of equal pairs
	var pos []int
	for j, i := range pair {
		if i >= 0 {
			at = append(at, j)
			pos = append(pos, i)
		}
	}
	anchors := make([][2]int, 0, len(at)+2) // (next, old) positions
	anchors = append(anchors, [2]int{-1, -1})
	for _, p := range lis(pos) {
		anchors = append(anchors, [2]int{at[p], pos[p]})
	}
	anchors = append(anchors, [2]int{len(next), len(old)})
	// 2. Edited blocks between anchors.
	words := make(map[*Block]map[string]int)
	wordsOf := func(b *Block) map[string]int {
		if w, ok := words[b]; ok {
			return w
		}
		w := wordBag(b)
		words[b] = w
		return w
	}
	sim := func(j, i int) float64 {
		a, b := &next[j], &old[i]
		if a.Type != b.Type && !(a.Type.IsText() && b.Type.IsText()) {
			return 0
		}
		return dice(wordsOf(a), wordsOf(b))
	}
	for k := 1; k < len(anchors); k++ {
		var js, is []int
		for j := anchors[k-1][0] + 1; j < anchors[k][0]; j++ {
			if pair[j] < 0 && next[j].ID == "" {
				js = append(js, j)
			}
		}
		for i := anchors[k-1][1] + 1; i < anchors[k][1]; i++ {
			if !taken[i] {
				is = append(is, i)
			}
		}
		for _, p := range pairInOrder(js, is, sim, alignEdited) {
			pair[p[0]], taken[p[1]] = p[1], true
		}
		// A stretch rewritten block for block keeps its ids in order.
		var lj, li []int
		for _, j := range js {
			if pair[j] < 0 {
				lj = append(lj, j)
			}
		}
		for _, i := range is {
			if !taken[i] {
				li = append(li, i)
			}
		}
		if len(lj) == len(li) {
			for x := range lj {
				a, b := next[lj[x]].Type, old[li[x]].Type
				if a != b && !(a.IsText() && b.IsText()) {
					lj = nil
					break
				}
			}
			for x := range lj {
				pair[lj[x]], taken[li[x]] = li[x], true
			}
		}
	}
	// 3. Moved and edited blocks.
	for j := range next {
		if pair[j] >= 0 || next[j].ID != "" {
			continue
		}
		best, bestSim := -1, alignMoved
		for i := range old {
			if taken[i] || len(wordsOf(&old[i])) == 0 {
				continue
			}
			if s := sim(j, i); s >= bestSim && (best < 0 || s > bestSim) {
				best, bestSim = i, s
			}
		}
		if best >= 0 {
			pair[j], taken[best] = best, true
		}
	}
	for j := range next {
		b := &next[j]
		i := pair[j]
		if b.ID == "" {
			if i >= 0 {
				b.ID = old[i].ID
			} else {
				b.ID = g.next(b)
				g.used[b.ID] = true
			}
		}
		// The blocks nested in a paired block align with the same
		// place in the one it continues (children, the same column,
		// the same list item).
		var on []*[]Block
		if i >= 0 {
			on = old[i].Nested()
		}
		for k, n := range b.Nested() {
			var oc []Block
			if k < len(on) {
				oc = *on[k]
			}
			alignBlocks(g, claimed, oc, *n)
		}
	}
}

// pairInOrder pairs elements of js with elements of is, both in order
// (no two pairs cross), maximising the summed similarity of the pairs
// whose similarity reaches min. It returns (j, i) pairs.
func pairInOrder(js, is []int, sim func(j, i int) float64, min float64) [][2]int {
	n, m := len(js), len(is)
	if n == 0 || m == 0 {
		return nil
	}
	if n*m > alignCells {
		// Greedy: each block takes the first block of cur after the last
		// one paired that is similar enough.
		var out [][2]int
		from := 0
		for _, j := range js {
			for x := from; x < m; x++ {
				if sim(j, is[x]) >= min {
					out = append(out, [2]int{j, is[x]})
					from = x + 1
					break
				}
			}
		}
		return out
	}
	s := make([]float64, n*m)
	for a := 0; a < n; a++ {
		for b := 0; b < m; b++ {
			if v := sim(js[a], is[b]); v >= min {
				s[a*m+b] = v
			}
		}
	}
	// best[a][b]: the best total of js[a:] with is[b:].
	best := make([]float64, (n+1)*(m+1))
	at := func(a, b int) *float64 { return &best[a*(m+1)+b] }
	for a := n - 1; a >= 0; a-- {
		for b := m - 1; b >= 0; b-- {
			v := max(*at(a+1, b), *at(a, b+1))
			if w := s[a*m+b]; w > 0 {
				v = max(v, w+*at(a+1, b+1))
			}
			*at(a, b) = v
		}
	}
	var out [][2]int
	for a, b := 0, 0; a < n && b < m; {
		switch w := s[a*m+b]; {
		case w > 0 && *at(a, b) == w+*at(a+1, b+1):
			out = append(out, [2]int{js[a], is[b]})
			a, b = a+1, b+1
		case *at(a, b) == *at(a+1, b):
			a++
		default:
			b++
		}
	}
	return out
}

// wordBag counts the words of a block's readable text (the units of
// WordDiff, without white space and punctuation), with its children.
func wordBag(b *Block) map[string]int {
	w := map[string]int{}
	var add func(b *Block)
	add = func(b *Block) {
		for _, t := range Tokenize(diffText(*b)) {
			if r := []rune(t); len(r) > 0 && (unicode.IsLetter(r[0]) || unicode.IsDigit(r[0])) {
				w[string(bytes.ToLower([]byte(t)))]++
			}
		}
		for _, n := range b.Nested() {
			for i := range *n {
				add(&(*n)[i])
			}
		}
	}
	add(b)
	return w
}

// dice is the Dice coefficient of two bags of words: twice the words in
// common over the words of both. Two empty bags are alike (a divider, an
// image without alt text).
func dice(a, b map[string]int) float64 {
	na, nb := 0, 0
	for _, n := range a {
		na += n
	}
	for _, n := range b {
		nb += n
	}
	if na+nb == 0 {
		return 1
	}
	common := 0
	for w, n := range a {
		common += min(n, b[w])
	}
	return 2 * float64(common) / float64(na+nb)
}
