package flowdoc

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ChangeKind says how a block differs between two documents.
type ChangeKind string

// Kinds of block change.
const (
	Added    ChangeKind = "added"
	Deleted  ChangeKind = "deleted"
	Modified ChangeKind = "modified"
	Moved    ChangeKind = "moved"
)

// The operations of a WordEdit.
const (
	OpEqual  = "equal"
	OpInsert = "insert"
	OpDelete = "delete"
)

// WordEdit is one step of a word-level text diff. Concatenating the equal
// and delete steps gives the old text, the equal and insert steps the new.
type WordEdit struct {
	Op   string `json:"op"` // equal | insert | delete
	Text string `json:"text"`
}

// BlockChange is one block's difference between two documents.
type BlockChange struct {
	Kind    ChangeKind `json:"kind"`
	BlockID string     `json:"blockId"`
	Type    BlockType  `json:"type"`
	From    int        `json:"from"` // index in a, -1 when added
	To      int        `json:"to"`   // index in b, -1 when deleted
	Moved   bool       `json:"moved,omitempty"`
	Words   []WordEdit `json:"words,omitempty"`
}

// Diff compares two documents block by block, matching top-level blocks by
// id (a nested block is part of its parent's content):
//
//   - added: the id is only in b; deleted: only in a.
//   - modified: the content differs (type, attrs, text, children). Moved is
//     also set when the block changed its place relative to the others.
//   - moved: same content, different place. Of the blocks in both
//     documents, the longest subsequence kept in order stays put; only the
//     others count as moved, so moving one block flags one block.
//
// For a modified block whose plain text differs, Words is a word-level
// diff: Latin-like words, single CJK characters, runs of white space and
// single punctuation marks are the units, so a changed character in a
// Chinese sentence is one small edit. Unchanged blocks are not listed.
// Changes come in the order of b, each deleted block where it stood in a.
// The result is deterministic and never nil (empty when nothing changed).
func Diff(a, b Document) []BlockChange {
	// Keys are ids; a repeated id (an invalid document) gets its
	// occurrence number so that every block has a partner or none.
	keysOf := func(d Document) []string {
		seen := map[string]int{}
		keys := make([]string, len(d.Blocks))
		for i, bl := range d.Blocks {
			n := seen[bl.ID]
			seen[bl.ID] = n + 1
			if n == 0 {
				keys[i] = bl.ID
			} else {
				keys[i] = bl.ID + "\x00" + strconv.Itoa(n)
			}
		}
		return keys
	}
	ka, kb := keysOf(a), keysOf(b)
	inA := make(map[string]int, len(ka))
	for i, k := range ka {
		inA[k] = i
	}
	inB := make(map[string]int, len(kb))
	for j, k := range kb {
		inB[k] = j
	}
	// a-index of each common block, in b's order.
	var common []int
	for _, k := range kb {
		if i, ok := inA[k]; ok {
			common = append(common, i)
		}
	}
	stays := make(map[int]bool, len(common)) // by a-index
	for _, p := range lis(common) {
		stays[common[p]] = true
	}

	type keyed struct {
		primary, secondary int
		c                  BlockChange
	}
	var out []keyed
	for j, k := range kb {
		bb := b.Blocks[j]
		i, ok := inA[k]
		if !ok {
			out = append(out, keyed{2*j + 2, 0, BlockChange{Kind: Added, BlockID: bb.ID, Type: bb.Type, From: -1, To: j}})
			continue
		}
		ab := a.Blocks[i]
		moved := !stays[i]
		same := ab.Type == bb.Type && bytes.Equal(EncodeContent(ab), EncodeContent(bb))
		switch {
		case !same:
			c := BlockChange{Kind: Modified, BlockID: bb.ID, Type: bb.Type, From: i, To: j, Moved: moved}
			ta, tb := diffText(ab), diffText(bb)
			if ta != tb {
				c.Words = WordDiff(ta, tb)
			}
			out = append(out, keyed{2*j + 2, 0, c})
		case moved:
			out = append(out, keyed{2*j + 2, 0, BlockChange{Kind: Moved, BlockID: bb.ID, Type: bb.Type, From: i, To: j, Moved: true}})
		}
	}
	// A deleted block follows the change of the nearest block before it
	// in a that is still in b.
	anchor := -1
	for i, k := range ka {
		if j, ok := inB[k]; ok {
			anchor = j
			continue
		}
		ab := a.Blocks[i]
		out = append(out, keyed{2*anchor + 3, i, BlockChange{Kind: Deleted, BlockID: ab.ID, Type: ab.Type, From: i, To: -1}})
	}
	sort.SliceStable(out, func(x, y int) bool {
		if out[x].primary != out[y].primary {
			return out[x].primary < out[y].primary
		}
		return out[x].secondary < out[y].secondary
	})
	changes := make([]BlockChange, len(out))
	for i, k := range out {
		changes[i] = k.c
	}
	return changes
}

// diffText is the text a word diff compares: the plain text of a text
// block (inline equations as U+FFFC), the readable text of any other.
func diffText(b Block) string {
	if b.Type.IsText() {
		return PlainText(b.RichText)
	}
	return blockText(b)
}

// lis returns the positions in s of one longest strictly increasing
// subsequence (the leftmost-ending one, so the choice is deterministic).
func lis(s []int) []int {
	if len(s) == 0 {
		return nil
	}
	tails := []int{} // positions; s[tails[k]] is the smallest tail of length k+1
	prev := make([]int, len(s))
	for p, v := range s {
		k := sort.Search(len(tails), func(k int) bool { return s[tails[k]] >= v })
		if k > 0 {
			prev[p] = tails[k-1]
		} else {
			prev[p] = -1
		}
		if k == len(tails) {
			tails = append(tails, p)
		} else {
			tails[k] = p
		}
	}
	out := make([]int, len(tails))
	for p, k := tails[len(tails)-1], len(tails)-1; k >= 0; p, k = prev[p], k-1 {
		out[k] = p
	}
	return out
}

// WordDiff returns a word-level diff of two texts (see Diff for the
// units). Adjacent edits of one kind are coalesced, and within a changed
// stretch the deletion comes before the insertion.
func WordDiff(a, b string) []WordEdit {
	ta, tb := Tokenize(a), Tokenize(b)
	// Trim the common prefix and suffix: most edits are small.
	pre := 0
	for pre < len(ta) && pre < len(tb) && ta[pre] == tb[pre] {
		pre++
	}
	suf := 0
	for suf < len(ta)-pre && suf < len(tb)-pre && ta[len(ta)-1-suf] == tb[len(tb)-1-suf] {
		suf++
	}
	var edits []WordEdit
	emit := func(op string, toks []string) {
		for _, t := range toks {
			edits = append(edits, WordEdit{Op: op, Text: t})
		}
	}
	emit(OpEqual, ta[:pre])
	edits = append(edits, myers(ta[pre:len(ta)-suf], tb[pre:len(tb)-suf])...)
	emit(OpEqual, ta[len(ta)-suf:])
	return coalesce(edits)
}

// maxEditDistance bounds the work of one word diff: beyond it the changed
// middle is shown as one deletion and one insertion.
const maxEditDistance = 1000

// myers is the O((N+M)·D) shortest edit script over tokens.
func myers(a, b []string) []WordEdit {
	n, m := len(a), len(b)
	whole := func() []WordEdit {
		var out []WordEdit
		for _, t := range a {
			out = append(out, WordEdit{OpDelete, t})
		}
		for _, t := range b {
			out = append(out, WordEdit{OpInsert, t})
		}
		return out
	}
	if n == 0 || m == 0 {
		return whole()
	}
	// Compare small integers rather than strings.
	ids := map[string]int{}
	ia, ib := make([]int32, n), make([]int32, m)
	for i, t := range a {
		if _, ok := ids[t]; !ok {
			ids[t] = len(ids)
		}
		ia[i] = int32(ids[t])
	}
	for i, t := range b {
		if _, ok := ids[t]; !ok {
			ids[t] = len(ids)
		}
		ib[i] = int32(ids[t])
	}
	maxD := min(n+m, maxEditDistance)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	var trace [][]int32
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		snap := make([]int32, 2*d+1)
		for k := -d; k <= d; k += 2 {
			var x int32
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - int32(k)
			for int(x) < n && int(y) < m && ia[x] == ib[y] {
				x++
				y++
			}
			v[off+k] = x
			if int(x) >= n && int(y) >= m {
				found = d
			}
		}
		for k := -d; k <= d; k++ {
			snap[k+d] = v[off+k]
		}
		trace = append(trace, snap)
	}
	if found < 0 {
		return whole()
	}
	// Walk back from (n, m).
	var rev []WordEdit
	x, y := n, m
	for d := found; d > 0; d-- {
		prevV := trace[d-1]
		get := func(k int) int { return int(prevV[k+(d-1)]) }
		k := x - y
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, WordEdit{OpEqual, a[x]})
		}
		if x == px {
			y--
			rev = append(rev, WordEdit{OpInsert, b[y]})
		} else {
			x--
			rev = append(rev, WordEdit{OpDelete, a[x]})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, WordEdit{OpEqual, a[x]})
	}
	out := make([]WordEdit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// coalesce merges adjacent edits of one kind and puts, in every stretch
// between equal edits, all deleted text before all inserted text.
func coalesce(edits []WordEdit) []WordEdit {
	var out []WordEdit
	var del, ins strings.Builder
	flush := func() {
		if del.Len() > 0 {
			out = append(out, WordEdit{OpDelete, del.String()})
			del.Reset()
		}
		if ins.Len() > 0 {
			out = append(out, WordEdit{OpInsert, ins.String()})
			ins.Reset()
		}
	}
	for _, e := range edits {
		switch e.Op {
		case OpDelete:
			del.WriteString(e.Text)
		case OpInsert:
			ins.WriteString(e.Text)
		default:
			flush()
			if n := len(out); n > 0 && out[n-1].Op == OpEqual {
				out[n-1].Text += e.Text
			} else if e.Text != "" {
				out = append(out, e)
			}
		}
	}
	flush()
	return out
}

// Tokenize splits text into the units of a word diff: runs of letters and
// digits (with their combining marks) for Latin-like scripts, single
// characters for Han, kana and Hangul, runs of white space, and single
// punctuation marks or symbols (an emoji with its modifiers, variation
// selectors and zero-width-joined parts is one unit). Concatenating the
// tokens gives the text back.
func Tokenize(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		j := i + size
		switch {
		case unicode.IsSpace(c):
			for j < len(s) {
				d, sz := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(d) {
					break
				}
				j += sz
			}
		case isIdeographic(c):
			j += marksTail(s[j:])
		case unicode.IsLetter(c) || unicode.IsDigit(c) || unicode.IsMark(c):
			for j < len(s) {
				d, sz := utf8.DecodeRuneInString(s[j:])
				if isIdeographic(d) || !(unicode.IsLetter(d) || unicode.IsDigit(d) || unicode.IsMark(d) || d == '\u200d') {
					break
				}
				j += sz
			}
		case isRegionalIndicator(c):
			if d, sz := utf8.DecodeRuneInString(s[j:]); isRegionalIndicator(d) {
				j += sz
			}
		default:
			j += emojiTail(s[j:])
		}
		toks = append(toks, s[i:j])
		i = j
	}
	return toks
}

// isIdeographic reports scripts written without spaces between words,
// where one character is the sensible unit of a diff.
func isIdeographic(c rune) bool {
	return unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) ||
		c == 'ー' || c == '々'
}

func isRegionalIndicator(c rune) bool { return c >= 0x1F1E6 && c <= 0x1F1FF }

// marksTail is the length of the combining marks and variation selectors
// at the start of s.
func marksTail(s string) int {
	n := 0
	for n < len(s) {
		d, sz := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsMark(d) && !isVariationSelector(d) {
			break
		}
		n += sz
	}
	return n
}

func isVariationSelector(c rune) bool {
	return c >= 0xFE00 && c <= 0xFE0F || c >= 0xE0100 && c <= 0xE01EF
}

// emojiTail is the length of what belongs to the symbol before s: marks,
// variation selectors, skin-tone modifiers, keycap and tag characters,
// and further symbols joined by U+200D.
func emojiTail(s string) int {
	n := 0
	for n < len(s) {
		d, sz := utf8.DecodeRuneInString(s[n:])
		switch {
		case unicode.IsMark(d) || isVariationSelector(d) || d >= 0x1F3FB && d <= 0x1F3FF || d >= 0xE0020 && d <= 0xE007F:
			n += sz
		case d == '\u200d':
			n += sz
			if n < len(s) {
				_, sz2 := utf8.DecodeRuneInString(s[n:])
				n += sz2
			}
		default:
			return n
		}
	}
	return n
}

// Text is the readable text of the document, one line per top-level
// block (what a full-text index reads).
func (d Document) Text() string {
	var sb strings.Builder
	for i, b := range d.Blocks {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(diffText(b))
	}
	return sb.String()
}
