package flowdoc

import "strings"

// WithoutTitle returns d without its first block when that block is a
// level-1 heading whose text is title (white space collapsed, case kept):
// the heading a Markdown import or an editor puts above the body repeats
// the article's title attribute, and a page that shows the title shows it
// once. Any other document comes back as it is; d is not modified.
func WithoutTitle(d Document, title string) Document {
	if len(d.Blocks) == 0 || title == "" {
		return d
	}
	b := d.Blocks[0]
	if b.Type != Heading || b.Attrs == nil || b.Attrs.Level != 1 {
		return d
	}
	if collapseSpace(PlainText(b.RichText)) != collapseSpace(title) {
		return d
	}
	out := d
	out.Blocks = d.Blocks[1:]
	return out
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
