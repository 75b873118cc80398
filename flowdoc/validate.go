package flowdoc

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate returns every problem of d (nil when valid), in document order,
// followed by the document-wide limit problems. Each problem names a JSON
// path and the rule broken there. The rules:
//
//   - schemaVersion is 1 (0, i.e. missing, is read as 1);
//   - every block, nested ones included, has an id of 1-64 characters from
//     [A-Za-z0-9_-], unique in the whole document;
//   - the type is one of BlockTypes, and the block uses only the fields and
//     attributes its type documents (see Block); required attributes are
//     present and in range (heading level 1..6, media kind image|video, …);
//   - a run is either text or an inline equation (never both, never
//     neither); an inline equation takes no marks or link; marks are known;
//   - every URL obeys the URL policy (see url.go: links http/https/mailto
//     or relative, media src http/https or relative, other resources
//     http/https);
//   - tables have at least one row, every row the same number of cells
//     (1..MaxTableColumns); lists at least one item; columns 1..MaxColumns;
//   - blocks nest at most MaxDepth deep, list items at most MaxListDepth;
//   - strings are valid UTF-8;
//   - the document has at most l.MaxBlocks blocks (nested included) and its
//     canonical JSON at most l.MaxBytes bytes.
func Validate(d Document, l Limits) []Problem {
	ps, _ := validate(d, l)
	return ps
}

// NormalizeSize is Normalize that also returns the length of the
// canonical JSON of the normalized d, which validating measures anyway
// (for the size limit): a caller that needs it does not encode d again.
func NormalizeSize(d Document, l Limits) (Document, int, error) {
	d = Sanitize(d)
	ps, n := validate(d, l)
	if len(ps) > 0 {
		return Document{}, 0, &ValidationError{Problems: ps}
	}
	return d, n, nil
}

// validate is Validate that also returns the length of d's canonical JSON.
func validate(d Document, l Limits) ([]Problem, int) {
	l = l.withDefaults()
	v := &validator{ids: map[string]string{}}
	if d.SchemaVersion != 0 && d.SchemaVersion != SchemaVersion {
		v.add("schemaVersion", "schema version must be 1")
	}
	v.blocks(d.Blocks, "blocks", 1)
	if v.count > l.MaxBlocks {
		v.add("$", fmt.Sprintf("document has %d blocks (nested included), the limit is %d", v.count, l.MaxBlocks))
	}
	n := len(CanonicalJSON(d))
	if n > l.MaxBytes {
		v.add("$", fmt.Sprintf("document is %d bytes of canonical JSON, the limit is %d", n, l.MaxBytes))
	}
	return v.ps, n
}

type validator struct {
	ps    []Problem
	ids   map[string]string // block id -> path of its first use
	count int               // blocks visited
}

func (v *validator) add(path, rule string) {
	v.ps = append(v.ps, Problem{Path: path, Rule: rule})
}

// shape says which fields and attributes a block type uses.
type shape struct {
	richText, items, rows, children, cols bool
	attrs                                 []string
}

var shapes = map[BlockType]shape{
	Paragraph: {richText: true},
	Heading:   {richText: true, attrs: []string{"level"}},
	Quote:     {richText: true, children: true},
	List:      {items: true, attrs: []string{"ordered", "start", "loose"}},
	Code:      {attrs: []string{"language", "text"}},
	Equation:  {attrs: []string{"latex"}},
	Media:     {attrs: []string{"kind", "src", "alt", "caption"}},
	Table:     {rows: true, attrs: []string{"header"}},
	Callout:   {richText: true, attrs: []string{"icon"}},
	Details:   {richText: true, children: true},
	Columns:   {cols: true},
	Bookmark:  {attrs: []string{"url", "title", "description"}},
	File:      {attrs: []string{"src", "name", "size"}},
	Embed:     {attrs: []string{"url", "provider"}},
	Divider:   {},
}

// attrValue is one attribute by JSON name: whether it is set, and its
// string value (for the UTF-8 check; "" for non-strings).
type attrValue struct {
	name string
	set  bool
	str  string
}

func attrValues(a *Attrs) []attrValue {
	if a == nil {
		return nil
	}
	return []attrValue{
		{"level", a.Level != 0, ""},
		{"ordered", a.Ordered, ""},
		{"start", a.Start != 0, ""},
		{"loose", a.Loose, ""},
		{"language", a.Language != "", a.Language},
		{"text", a.Text != "", a.Text},
		{"latex", a.Latex != "", a.Latex},
		{"kind", a.Kind != "", a.Kind},
		{"src", a.Src != "", a.Src},
		{"alt", a.Alt != "", a.Alt},
		{"caption", a.Caption != "", a.Caption},
		{"header", a.Header, ""},
		{"icon", a.Icon != "", a.Icon},
		{"url", a.URL != "", a.URL},
		{"title", a.Title != "", a.Title},
		{"description", a.Description != "", a.Description},
		{"name", a.Name != "", a.Name},
		{"size", a.Size != 0, ""},
		{"provider", a.Provider != "", a.Provider},
	}
}

func (v *validator) blocks(bs []Block, path string, depth int) {
	for i := range bs {
		v.block(&bs[i], path+"["+strconv.Itoa(i)+"]", depth)
	}
}

func (v *validator) block(b *Block, path string, depth int) {
	v.count++
	if depth > MaxDepth {
		v.add(path, fmt.Sprintf("blocks nest deeper than %d levels (details, quotes, columns and list items)", MaxDepth))
		return
	}
	v.id(b.ID, path)
	sh, ok := shapes[b.Type]
	if !ok {
		if b.Type == "" {
			v.add(path+".type", "block type is required")
		} else {
			v.add(path+".type", fmt.Sprintf("unknown block type %q (known: %s)", b.Type, typeList()))
		}
		return
	}
	noField := func(field string) {
		v.add(path+"."+field, fmt.Sprintf("%s block has no %s", withArticle(b.Type), field))
	}
	if len(b.RichText) > 0 && !sh.richText {
		noField("richText")
	}
	if len(b.Items) > 0 && !sh.items {
		noField("items")
	}
	if len(b.Rows) > 0 && !sh.rows {
		noField("rows")
	}
	if len(b.Children) > 0 && !sh.children {
		noField("children")
	}
	if len(b.Cols) > 0 && !sh.cols {
		noField("columns")
	}
	for _, av := range attrValues(b.Attrs) {
		if !av.set {
			continue
		}
		if !containsString(sh.attrs, av.name) {
			v.add(path+".attrs."+av.name, fmt.Sprintf("%s block has no %s attribute", withArticle(b.Type), av.name))
			continue
		}
		if !utf8.ValidString(av.str) {
			v.add(path+".attrs."+av.name, "text must be valid UTF-8")
		}
	}
	a := b.Attrs
	if a == nil {
		a = &Attrs{}
	}
	ap := path + ".attrs."
	if sh.richText {
		v.runs(b.RichText, path+".richText")
	}
	switch b.Type {
	case Heading:
		if a.Level < 1 || a.Level > MaxHeadingLevel {
			v.add(ap+"level", "heading level must be 1..6")
		}
	case List:
		if len(b.Items) == 0 {
			v.add(path+".items", "a list needs at least one item")
		}
		switch {
		case a.Start < 0 || a.Start == 1 || a.Start > MaxListStart:
			v.add(ap+"start", "list start must be 2..999999999 (absent is 1)")
		case a.Start != 0 && !a.Ordered:
			v.add(ap+"start", "a bullet list has no start; set ordered")
		}
		v.items(b.Items, path+".items", 1, depth)
	case Code:
		if utf8.RuneCountInString(a.Language) > 32 || strings.ContainsFunc(a.Language, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			v.add(ap+"language", "code language must be at most 32 characters without spaces")
		}
	case Equation:
		if strings.TrimSpace(a.Latex) == "" {
			v.add(ap+"latex", "an equation needs latex")
		}
	case Media:
		if a.Kind != "image" && a.Kind != "video" {
			v.add(ap+"kind", "media kind must be image or video")
		}
		v.source(a.Src, ap+"src", "media needs a src URL", checkSource)
	case Table:
		v.table(b, path)
	case Callout:
		if utf8.RuneCountInString(a.Icon) > 16 {
			v.add(ap+"icon", "callout icon must be at most 16 code points")
		}
	case Details, Quote:
		v.blocks(b.Children, path+".children", depth+1)
	case Columns:
		if len(b.Cols) == 0 || len(b.Cols) > MaxColumns {
			v.add(path+".columns", fmt.Sprintf("a columns block needs 1..%d columns", MaxColumns))
		}
		for i, col := range b.Cols {
			v.blocks(col.Blocks, fmt.Sprintf("%s.columns[%d].blocks", path, i), depth+1)
		}
	case Bookmark:
		v.resource(a.URL, ap+"url", "a bookmark needs a url")
	case File:
		v.source(a.Src, ap+"src", "a file needs a src URL", checkFileSource)
		if strings.TrimSpace(a.Name) == "" {
			v.add(ap+"name", "a file needs a name")
		}
		if a.Size < 0 {
			v.add(ap+"size", "file size must not be negative")
		}
	case Embed:
		v.resource(a.URL, ap+"url", "an embed needs a url")
	}
}

func (v *validator) id(id, path string) {
	switch {
	case id == "":
		v.add(path+".id", "block id is required")
	case !ValidID(id):
		v.add(path+".id", "block id must be 1-64 characters of A-Z, a-z, 0-9, _ and -")
	default:
		if first, dup := v.ids[id]; dup {
			v.add(path+".id", fmt.Sprintf("block id %q is already used at %s", id, first))
			return
		}
		v.ids[id] = path
	}
}

// ValidID reports whether id is a well-formed block id: 1-64 characters of
// [A-Za-z0-9_-].
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (v *validator) resource(u, path, missing string) {
	if u == "" {
		v.add(path, missing)
		return
	}
	if rule := notAsset(u); rule != "" {
		v.add(path, rule)
	} else if rule := checkResource(u); rule != "" {
		v.add(path, rule)
	}
}

func (v *validator) table(b *Block, path string) {
	if len(b.Rows) == 0 {
		v.add(path+".rows", "a table needs at least one row")
		return
	}
	want := len(b.Rows[0].Cells)
	for i, row := range b.Rows {
		rp := fmt.Sprintf("%s.rows[%d]", path, i)
		switch n := len(row.Cells); {
		case n == 0 || n > MaxTableColumns:
			v.add(rp+".cells", fmt.Sprintf("a table row needs 1..%d cells", MaxTableColumns))
		case n != want && want > 0:
			v.add(rp+".cells", fmt.Sprintf("row has %d cell(s) but the first row has %d; every row needs the same number", n, want))
		}
		for j, cell := range row.Cells {
			v.runs(cell, fmt.Sprintf("%s.cells[%d]", rp, j))
		}
	}
}

// items checks list items nested depth deep in a list block at
// blockDepth; the blocks of an item are one block level deeper.
func (v *validator) items(items []ListItem, path string, depth, blockDepth int) {
	for i, it := range items {
		ip := path + "[" + strconv.Itoa(i) + "]"
		if depth > MaxListDepth {
			v.add(ip, fmt.Sprintf("list items nest deeper than %d levels", MaxListDepth))
			return
		}
		if it.Task != "" && it.Task != TaskOpen && it.Task != TaskDone {
			v.add(ip+".task", "task must be open or done")
		}
		v.runs(it.RichText, ip+".richText")
		v.blocks(it.Blocks, ip+".blocks", blockDepth+1)
		v.items(it.Items, ip+".items", depth+1, blockDepth)
	}
}

func (v *validator) runs(rs []Run, path string) {
	for i, r := range rs {
		rp := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case r.Text != "" && r.Equation != "":
			v.add(rp, "a run is either text or an inline equation, not both")
		case r.Text == "" && r.Equation == "":
			v.add(rp, "a run needs text or an equation")
		}
		if !utf8.ValidString(r.Text) || !utf8.ValidString(r.Equation) || !utf8.ValidString(r.Title) {
			v.add(rp, "text must be valid UTF-8")
		}
		if r.Equation != "" && len(r.Marks) > 0 {
			v.add(rp+".marks", "an inline equation takes no marks")
		}
		for j, m := range r.Marks {
			if !knownMark(m) {
				v.add(fmt.Sprintf("%s.marks[%d]", rp, j), fmt.Sprintf("unknown mark %q (known: bold, italic, underline, strike, code)", m))
			}
		}
		if r.Link == "" {
			if r.Title != "" {
				v.add(rp+".title", "a link title needs a link")
			}
			continue
		}
		if r.Equation != "" {
			v.add(rp+".link", "an inline equation takes no link")
		} else if rule := notAsset(r.Link); rule != "" {
			v.add(rp+".link", rule)
		} else if rule := checkLink(r.Link); rule != "" {
			v.add(rp+".link", rule)
		}
	}
}

func typeList() string {
	s := make([]string, len(BlockTypes))
	for i, t := range BlockTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// withArticle returns "a paragraph", "an embed", …
func withArticle(t BlockType) string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + string(t)
	}
	return "a " + string(t)
}
