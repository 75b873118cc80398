package flowdoc

import (
	"strconv"
	"strings"
)

// readableRuns is the text of runs for reading: an inline equation shows
// its LaTeX instead of U+FFFC.
func readableRuns(runs []Run) string {
	var b strings.Builder
	for _, r := range runs {
		if r.Equation != "" && r.Text == "" {
			b.WriteString(r.Equation)
			continue
		}
		b.WriteString(r.Text)
	}
	return b.String()
}

// RenderText renders d as readable plain text: one paragraph per block,
// separated by blank lines. Lists get bullets or numbers with nested items
// indented under their parent's text, tables become tab-separated rows,
// code keeps its text, and media, files and embeds become bracketed
// placeholders such as "[image: alt]".
func RenderText(d Document) string {
	parts := make([]string, 0, len(d.Blocks))
	for _, b := range d.Blocks {
		if s := blockText(b); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n\n") + "\n"
}

// BlockText is the readable plain text of one block, as RenderText
// renders it (a nested block's text included in its parent's).
func BlockText(b Block) string { return blockText(b) }

func attrsOf(b Block) Attrs {
	if b.Attrs == nil {
		return Attrs{}
	}
	return *b.Attrs
}

// blockText renders one block as plain text without a trailing newline.
func blockText(b Block) string {
	a := attrsOf(b)
	switch b.Type {
	case Paragraph, Heading:
		return readableRuns(b.RichText)
	case Quote:
		parts := []string{readableRuns(b.RichText)}
		for _, ch := range b.Children {
			if s := blockText(ch); s != "" {
				parts = append(parts, s)
			}
		}
		return prefixLines(strings.Join(parts, "\n\n"), "> ", "> ")
	case List:
		var sb strings.Builder
		listText(&sb, b.Items, a.Ordered, "", max(a.Start, 1))
		return strings.TrimSuffix(sb.String(), "\n")
	case Code:
		return strings.TrimSuffix(a.Text, "\n")
	case Equation:
		return a.Latex
	case Media:
		kind := a.Kind
		if kind == "" {
			kind = "image"
		}
		label := firstNonEmpty(a.Alt, a.Caption, a.Src)
		s := "[" + kind + ": " + label + "]"
		if a.Caption != "" && a.Caption != label {
			s += "\n" + a.Caption
		}
		return s
	case Table:
		rows := make([]string, len(b.Rows))
		for i, r := range b.Rows {
			cells := make([]string, len(r.Cells))
			for j, c := range r.Cells {
				cells[j] = strings.NewReplacer("\t", " ", "\n", " ").Replace(readableRuns(c))
			}
			rows[i] = strings.Join(cells, "\t")
		}
		return strings.Join(rows, "\n")
	case Callout:
		text := readableRuns(b.RichText)
		if a.Icon != "" {
			return a.Icon + " " + text
		}
		return text
	case Details:
		parts := []string{readableRuns(b.RichText)}
		for _, ch := range b.Children {
			if s := blockText(ch); s != "" {
				parts = append(parts, prefixLines(s, "  ", "  "))
			}
		}
		return strings.Join(parts, "\n\n")
	case Columns:
		var parts []string
		for _, col := range b.Cols {
			for _, ch := range col.Blocks {
				if s := blockText(ch); s != "" {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n\n")
	case Bookmark:
		s := firstNonEmpty(a.Title, a.URL)
		if a.URL != "" && a.URL != s {
			s += " <" + a.URL + ">"
		}
		if a.Description != "" {
			s += "\n" + a.Description
		}
		return s
	case File:
		s := "[file: " + firstNonEmpty(a.Name, a.Src)
		if a.Size > 0 {
			s += ", " + humanSize(a.Size)
		}
		return s + "]"
	case Divider:
		return "* * *"
	case Embed:
		if a.Provider != "" {
			return "[embed: " + a.Provider + " " + a.URL + "]"
		}
		return "[embed: " + a.URL + "]"
	}
	return readableRuns(b.RichText)
}

// listText writes items, each nested level indented under the text of
// its parent item.
func listText(sb *strings.Builder, items []ListItem, ordered bool, indent string, start int) {
	for i, it := range items {
		marker := "• "
		if ordered {
			marker = strconv.Itoa(start+i) + ". "
		}
		cont := indent + strings.Repeat(" ", len([]rune(marker)))
		text := readableRuns(it.RichText)
		switch it.Task {
		case TaskOpen:
			text = taskOpen + " " + text
		case TaskDone:
			text = taskDone + " " + text
		}
		sb.WriteString(prefixLines(text, indent+marker, cont))
		sb.WriteByte('\n')
		for _, b := range it.Blocks {
			if s := blockText(b); s != "" {
				sb.WriteString(prefixLines(s, cont, cont))
				sb.WriteByte('\n')
			}
		}
		listText(sb, it.Items, ordered, cont, 1)
	}
}

// prefixLines puts first before the first line of s and rest before every
// other line.
func prefixLines(s, first, rest string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTP"[exp]) + "iB"
}
