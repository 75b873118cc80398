package main

import (
	"bytes"
	"io"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// table lays out tab-separated cells in columns as text/tabwriter does
// (cells end with a tab, the last one of a line is not aligned, a column
// block is the run of lines that have a cell in it), but measures each
// cell by its display width on a terminal: an East Asian wide or
// fullwidth character takes two cells, a combining mark none.
// text/tabwriter counts runes, so a column after Chinese text ends early.
type table struct {
	w       io.Writer
	padding int
	buf     bytes.Buffer
}

// newTable is the writer of the CLI's text tables: columns two spaces
// apart. Write the rows, then Flush.
func newTable(w io.Writer) *table { return &table{w: w, padding: 2} }

func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the table and empties it.
func (t *table) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	if text == "" {
		return nil
	}
	ended := strings.HasSuffix(text, "\n")
	raw := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	lines := make([][]string, len(raw))
	for i, l := range raw {
		lines[i] = strings.Split(l, "\t")
	}
	var out strings.Builder
	t.format(&out, lines, nil, 0, 0, len(lines))
	s := out.String()
	if !ended {
		s = strings.TrimSuffix(s, "\n")
	}
	_, err := io.WriteString(t.w, s)
	return err
}

// format writes lines[line0:line1] whose first column cells have the
// widths; column is the next column to size (tabwriter's algorithm).
func (t *table) format(out *strings.Builder, lines [][]string, widths []int, column, line0, line1 int) {
	for this := line0; this < line1; this++ {
		if column >= len(lines[this])-1 {
			continue
		}
		t.writeLines(out, lines[line0:this], widths)
		line0 = this
		w := 0
		for ; this < line1; this++ {
			if column >= len(lines[this])-1 {
				break
			}
			if cw := cellWidth(lines[this][column]) + t.padding; cw > w {
				w = cw
			}
		}
		t.format(out, lines, append(widths, w), column+1, line0, this)
		line0 = this
		this-- // the loop's this++ looks at the line that ended the block again
	}
	t.writeLines(out, lines[line0:line1], widths)
}

func (t *table) writeLines(out *strings.Builder, lines [][]string, widths []int) {
	for _, cells := range lines {
		for j, c := range cells {
			out.WriteString(c)
			if j < len(cells)-1 && j < len(widths) {
				out.WriteString(strings.Repeat(" ", max(widths[j]-cellWidth(c), 0)))
			}
		}
		out.WriteByte('\n')
	}
}

// cellWidth is how many terminal cells s takes: two for each East Asian
// wide or fullwidth character, none for combining marks, format and
// control characters, one for the rest.
func cellWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
		case r < 0x300:
			n++
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || r >= 0xfe00 && r <= 0xfe0f:
		default:
			switch width.LookupRune(r).Kind() {
			case width.EastAsianWide, width.EastAsianFullwidth:
				n += 2
			default:
				n++
			}
		}
	}
	return n
}
