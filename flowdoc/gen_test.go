package flowdoc

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Random documents and operations for the property tests, fuzz seeds and
// benchmarks. Every document randDoc returns is valid.

// pieces are text fragments that stress code-point offsets: ASCII, Latin
// with precomposed and combining accents, CJK (BMP and astral), emoji with
// skin tones, ZWJ sequences and flags.
var pieces = []string{
	"a", "word ", "Hello", " ", ".", "é", "e\u0301", "n\u0303", "漢", "字", "かな", "𠮷", "한국어",
	"👋", "👋🏽", "👨‍👩‍👧‍👦", "🧑‍🤝‍🧑", "🇯🇵", "🇫🇷", "✨", "\u200d", "ﬁ", "Ω", "\t",
}

type docGen struct {
	r  *rand.Rand
	id int
}

func newDocGen(seed uint64) *docGen {
	return &docGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *docGen) nextID() string {
	g.id++
	return fmt.Sprintf("b%d", g.id)
}

func (g *docGen) text(max int) string {
	var sb strings.Builder
	for n := 1 + g.r.IntN(max); n > 0; n-- {
		sb.WriteString(pieces[g.r.IntN(len(pieces))])
	}
	return sb.String()
}

func (g *docGen) runs(max int) []Run {
	var rs []Run
	for n := g.r.IntN(max + 1); n > 0; n-- {
		if g.r.IntN(8) == 0 {
			rs = append(rs, Run{Equation: `x^{` + fmt.Sprint(g.r.IntN(9)) + `}`})
			continue
		}
		r := Run{Text: g.text(4)}
		for _, m := range Marks {
			if g.r.IntN(4) == 0 {
				r.Marks = append(r.Marks, m)
			}
		}
		switch g.r.IntN(8) {
		case 0:
			r.Link = "https://example.com/" + fmt.Sprint(g.r.IntN(3))
		case 1:
			r.Link = "mailto:a@example.com"
		}
		rs = append(rs, r)
	}
	return rs
}

func (g *docGen) items(depth int) []ListItem {
	var out []ListItem
	for n := 1 + g.r.IntN(3); n > 0; n-- {
		it := ListItem{RichText: g.runs(3)}
		if depth < 3 && g.r.IntN(3) == 0 {
			it.Items = g.items(depth + 1)
		}
		out = append(out, it)
	}
	return out
}

// block returns a random valid block; complex types get rarer with depth.
func (g *docGen) block(depth int) Block {
	b := Block{ID: g.nextID()}
	k := g.r.IntN(20)
	if depth > 1 && k >= 14 {
		k = g.r.IntN(9)
	}
	switch {
	case k < 6:
		b.Type, b.RichText = Paragraph, g.runs(4)
	case k < 8:
		b.Type, b.Attrs, b.RichText = Heading, &Attrs{Level: 1 + g.r.IntN(4)}, g.runs(2)
	case k < 9:
		b.Type, b.RichText = Quote, g.runs(3)
	case k == 9:
		b.Type, b.Attrs, b.Items = List, &Attrs{Ordered: g.r.IntN(2) == 0}, g.items(1)
	case k == 10:
		b.Type, b.Attrs = Code, &Attrs{Language: "go", Text: "x := " + fmt.Sprint(g.r.IntN(100))}
	case k == 11:
		b.Type, b.Attrs = Equation, &Attrs{Latex: `\sum_i x_i`}
	case k == 12:
		b.Type, b.Attrs = Media, &Attrs{Kind: "image", Src: "https://cdn.example.com/i.png", Alt: g.text(2)}
	case k == 13:
		b.Type, b.Attrs = Table, &Attrs{Header: true}
		cols := 1 + g.r.IntN(3)
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			row := TableRow{}
			for c := 0; c < cols; c++ {
				row.Cells = append(row.Cells, g.runs(2))
			}
			b.Rows = append(b.Rows, row)
		}
	case k == 14:
		b.Type, b.Attrs, b.RichText = Callout, &Attrs{Icon: "💡"}, g.runs(3)
	case k == 15:
		b.Type, b.RichText = Details, g.runs(2)
		for n := g.r.IntN(3); n > 0 && depth < MaxDepth; n-- {
			b.Children = append(b.Children, g.block(depth+1))
		}
	case k == 16:
		b.Type = Columns
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			col := Column{}
			for m := g.r.IntN(3); m > 0 && depth < MaxDepth; m-- {
				col.Blocks = append(col.Blocks, g.block(depth+1))
			}
			b.Cols = append(b.Cols, col)
		}
	case k == 17:
		b.Type, b.Attrs = Bookmark, &Attrs{URL: "https://example.com/post", Title: g.text(3)}
	case k == 18:
		b.Type, b.Attrs = File, &Attrs{Src: "https://example.com/f.pdf", Name: "f.pdf", Size: int64(g.r.IntN(1 << 20))}
	default:
		b.Type, b.Attrs = Embed, &Attrs{URL: "https://video.example.com/v/1", Provider: "example"}
	}
	return b
}

func (g *docGen) doc(n int) Document {
	d := Document{SchemaVersion: 1}
	for i := 0; i < n; i++ {
		d.Blocks = append(d.Blocks, g.block(1))
	}
	return Sanitize(d)
}

// allBlocks lists every block of d, nested ones included, in document order.
func allBlocks(bs []Block, out []Block) []Block {
	for _, b := range bs {
		out = append(out, b)
		out = allBlocks(b.Children, out)
		for _, c := range b.Cols {
			out = allBlocks(c.Blocks, out)
		}
	}
	return out
}

// op returns a random operation against d: usually well-formed, sometimes
// not (bad offsets, missing confirmation, unknown ids, complex changes).
func (g *docGen) op(d Document) Op {
	bs := allBlocks(d.Blocks, nil)
	if len(bs) == 0 {
		return Op{Op: ReplaceDocument, Document: &Document{Blocks: []Block{g.block(1)}}}
	}
	b := bs[g.r.IntN(len(bs))]
	switch g.r.IntN(10) {
	case 0, 1, 2, 3:
		n := textLen(b.RichText)
		s := g.r.IntN(n + 2)
		e := s + g.r.IntN(n+2-s)
		return Op{Op: ReplaceSelection, BlockID: b.ID, Start: s, End: e, RichText: g.runs(2)}
	case 4:
		nb := g.block(2)
		nb.ID = ""
		return Op{Op: ReplaceBlock, BlockID: b.ID, Block: &nb}
	case 5:
		nb := g.block(3)
		nb.ID = ""
		kind := InsertBefore
		if g.r.IntN(2) == 0 {
			kind = InsertAfter
		}
		return Op{Op: kind, BlockID: b.ID, Blocks: []Block{nb}}
	case 6:
		return Op{Op: DeleteBlock, BlockID: b.ID, Confirm: g.r.IntN(4) != 0}
	case 7:
		// Rewrite the text of a run of top-level text blocks.
		i := g.r.IntN(len(d.Blocks))
		var sec []Block
		for j := i; j < len(d.Blocks) && j < i+3; j++ {
			nb := d.Blocks[j].Clone()
			if nb.Type.IsText() {
				nb.RichText = g.runs(3)
			}
			sec = append(sec, nb)
		}
		return Op{Op: ReplaceSection, Blocks: sec}
	case 8:
		// A whole-document candidate: text reworked, complex kept (mostly).
		nd := Document{SchemaVersion: 1}
		for _, tb := range d.Blocks {
			if tb.Type.IsText() {
				if g.r.IntN(3) > 0 {
					nd.Blocks = append(nd.Blocks, Block{ID: tb.ID, Type: Paragraph, RichText: g.runs(3)})
				}
				continue
			}
			nd.Blocks = append(nd.Blocks, tb.Clone())
		}
		if g.r.IntN(5) == 0 {
			nd.Blocks = append(nd.Blocks, Block{ID: g.nextID(), Type: Equation, Attrs: &Attrs{Latex: "y"}})
		}
		return Op{Op: ReplaceDocument, Document: &nd}
	default:
		return Op{Op: DeleteBlock, BlockID: "missing-" + b.ID, Confirm: true}
	}
}
