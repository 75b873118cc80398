package flowdoc

import "slices"

// Sanitize returns a normalized copy of d; d is not modified. It
//
//   - drops unknown marks, removes duplicate marks and orders them as in
//     Marks;
//   - removes text runs with no text (inline equations stay);
//   - merges adjacent text runs whose marks and link are equal;
//   - turns empty slices into nil and all-zero Attrs into nil, and a missing
//     schema version into SchemaVersion.
//
// Sanitize never "repairs" content that means something: unsafe URLs, bad
// ids, wrong fields for a block type and the like are left as they are for
// Validate to report. Sanitize is idempotent: Sanitize(Sanitize(d)) has the
// same canonical encoding as Sanitize(d).
func Sanitize(d Document) Document {
	return sanitizeDoc(d)
}

// Normalize sanitizes and validates d; the error is a *ValidationError.
func Normalize(d Document, l Limits) (Document, error) {
	d = Sanitize(d)
	if ps := Validate(d, l); len(ps) > 0 {
		return Document{}, &ValidationError{Problems: ps}
	}
	return d, nil
}

func sanitizeDoc(d Document) Document {
	out := Document{SchemaVersion: d.SchemaVersion}
	if out.SchemaVersion == 0 {
		out.SchemaVersion = SchemaVersion
	}
	out.Blocks = sanitizeBlocks(d.Blocks)
	return out
}

func sanitizeBlocks(bs []Block) []Block {
	if len(bs) == 0 {
		return nil
	}
	out := make([]Block, len(bs))
	for i, b := range bs {
		out[i] = sanitizeBlock(b)
	}
	return out
}

func sanitizeBlock(b Block) Block {
	c := Block{ID: b.ID, Type: b.Type}
	if b.Attrs != nil && *b.Attrs != (Attrs{}) {
		a := *b.Attrs
		c.Attrs = &a
	}
	c.RichText = sanitizeRuns(b.RichText)
	c.Items = sanitizeItems(b.Items)
	if len(b.Rows) > 0 {
		c.Rows = make([]TableRow, len(b.Rows))
		for i, r := range b.Rows {
			if len(r.Cells) == 0 {
				continue
			}
			cells := make([][]Run, len(r.Cells))
			for j, cell := range r.Cells {
				cells[j] = sanitizeRuns(cell)
			}
			c.Rows[i] = TableRow{Cells: cells}
		}
	}
	c.Children = sanitizeBlocks(b.Children)
	if len(b.Cols) > 0 {
		c.Cols = make([]Column, len(b.Cols))
		for i, col := range b.Cols {
			c.Cols[i] = Column{Blocks: sanitizeBlocks(col.Blocks)}
		}
	}
	return c
}

func sanitizeItems(items []ListItem) []ListItem {
	if len(items) == 0 {
		return nil
	}
	out := make([]ListItem, len(items))
	for i, it := range items {
		out[i] = ListItem{Task: it.Task, RichText: sanitizeRuns(it.RichText), Blocks: sanitizeBlocks(it.Blocks), Items: sanitizeItems(it.Items)}
	}
	return out
}

// sanitizeRuns canonicalizes marks, drops empty text runs and merges
// adjacent text runs with equal marks, link and link title, in that order, so that a
// second pass finds nothing to do.
func sanitizeRuns(rs []Run) []Run {
	var out []Run
	for _, r := range rs {
		r.Marks = canonicalMarks(r.Marks)
		if r.Equation == "" && r.Text == "" {
			continue
		}
		if n := len(out); n > 0 && r.Equation == "" && out[n-1].Equation == "" &&
			out[n-1].Link == r.Link && out[n-1].Title == r.Title && slices.Equal(out[n-1].Marks, r.Marks) {
			out[n-1].Text += r.Text
			continue
		}
		out = append(out, r)
	}
	return out
}

// canonicalMarks returns the known marks of ms, each once, in the order of
// Marks; nil when there are none. It never aliases ms.
func canonicalMarks(ms []Mark) []Mark {
	if len(ms) == 0 {
		return nil
	}
	var out []Mark
	for _, m := range Marks {
		for _, x := range ms {
			if x == m {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

func knownMark(m Mark) bool {
	for _, k := range Marks {
		if k == m {
			return true
		}
	}
	return false
}
