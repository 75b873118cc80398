package specdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// Annotation is a parsed "<!-- check: KIND key=value … -->" comment.
type Annotation struct {
	Kind string
	Args map[string]string
}

// Arg returns the value of argument name, "" when absent.
func (a Annotation) Arg(name string) string { return a.Args[name] }

// Example is one fenced code block.
type Example struct {
	Path  string     // the file, as given to Parse
	Line  int        // 1-based line of the opening fence
	Lang  string     // first word of the info string ("json"), "" when none
	Info  string     // the whole info string
	Check Annotation // Kind is "" when the block is not annotated
	Text  string     // the content, without the fences and without a final newline
}

// Where returns "path:line", for test messages.
func (e Example) Where() string { return fmt.Sprintf("%s:%d", e.Path, e.Line) }

// DecodeJSON decodes the example, which must be exactly one JSON value,
// into v strictly: unknown object fields are errors.
func (e Example) DecodeJSON(v any) error {
	dec := json.NewDecoder(strings.NewReader(e.Text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", e.Where(), err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: more than one JSON value", e.Where())
	}
	return nil
}

// JSONValues splits the example into the JSON values it holds one after
// the other (a fence may show several messages), each compacted.
func (e Example) JSONValues() ([]json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(e.Text))
	var out []json.RawMessage
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: value %d: %w", e.Where(), len(out), err)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, fmt.Errorf("%s: value %d: %w", e.Where(), len(out), err)
		}
		out = append(out, buf.Bytes())
	}
}

// Table is one pipe table.
type Table struct {
	Path   string
	Line   int // 1-based line of the header row
	Check  Annotation
	Header []string // header cells, as written
	Rows   []Row
}

// Where returns "path:line", for test messages.
func (t *Table) Where() string { return fmt.Sprintf("%s:%d", t.Path, t.Line) }

// Column returns the index of the header cell named name (compared after
// Plain, case-insensitively), or -1.
func (t *Table) Column(name string) int {
	for i, h := range t.Header {
		if strings.EqualFold(Plain(h), name) {
			return i
		}
	}
	return -1
}

// RequireColumns returns an error naming the first of names the table
// lacks.
func (t *Table) RequireColumns(names ...string) error {
	for _, n := range names {
		if t.Column(n) < 0 {
			return fmt.Errorf("%s: table has no column %q (header %q)", t.Where(), n, t.Header)
		}
	}
	return nil
}

// Row is one body row of a table.
type Row struct {
	Line  int
	Cells []string // as written, trimmed, with \| unescaped
	table *Table
}

// Where returns "path:line", for test messages.
func (r Row) Where() string { return fmt.Sprintf("%s:%d", r.table.Path, r.Line) }

// Cell returns the cell under the header named name ("" when the table
// has no such column).
func (r Row) Cell(name string) string {
	i := r.table.Column(name)
	if i < 0 || i >= len(r.Cells) {
		return ""
	}
	return r.Cells[i]
}

// Plain strips one pair of backticks around s, if s is exactly one code
// span, and surrounding spaces: "`MaxDepth`" gives "MaxDepth".
func Plain(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' && !strings.Contains(s[1:len(s)-1], "`") {
		return s[1 : len(s)-1]
	}
	return s
}

// Heading is one ATX heading ("## Blocks").
type Heading struct {
	Line  int
	Level int
	Text  string
}

// Link is one inline Markdown link, [text](Target), outside fences.
type Link struct {
	Line   int
	Target string
}

// Doc is a parsed spec.
type Doc struct {
	Path     string
	Examples []Example // in document order
	Tables   []*Table  // in document order
	Headings []Heading // in document order
	Links    []Link    // in document order
}

// Slug returns the anchor GitHub gives a heading: lowercase, punctuation
// (backticks, dots, colons, plus signs …) dropped, spaces turned into
// hyphens; letters, digits, '_' and '-' kept.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Anchors returns the anchors of d's headings; a repeated slug gets
// GitHub's suffixes "-1", "-2", ….
func (d *Doc) Anchors() map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, h := range d.Headings {
		s := Slug(h.Text)
		if n := count[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

// CheckLinks returns an error for every link of d that points nowhere: a
// "#anchor" d lacks, or a relative "file.md" / "file.md#anchor" (resolved
// against d's directory) that is missing or lacks the anchor. Other links
// (http, other files) are not checked.
func (d *Doc) CheckLinks() []error {
	var errs []error
	others := map[string]*Doc{}
	for _, l := range d.Links {
		file, anchor, _ := strings.Cut(l.Target, "#")
		target := d
		if file != "" {
			if !strings.HasSuffix(file, ".md") || strings.Contains(file, "://") {
				continue
			}
			path := filepath.Join(filepath.Dir(d.Path), file)
			if others[path] == nil {
				src, err := os.ReadFile(path)
				if err == nil {
					others[path], err = Parse(path, src)
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("%s:%d: link %s: %w", d.Path, l.Line, l.Target, err))
					continue
				}
			}
			target = others[path]
		}
		if anchor != "" && !target.Anchors()[anchor] {
			errs = append(errs, fmt.Errorf("%s:%d: link %s: %s has no heading with anchor #%s", d.Path, l.Line, l.Target, target.Path, anchor))
		}
	}
	return errs
}

// Load reads and parses the spec at path; a read or parse error fails tb.
func Load(tb testing.TB, path string) *Doc {
	tb.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	d, err := Parse(path, src)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// Annotated returns the examples annotated with kind, in document order.
func (d *Doc) Annotated(kind string) []Example {
	var out []Example
	for _, e := range d.Examples {
		if e.Check.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// Unannotated returns the fences in language lang that carry no
// annotation.
func (d *Doc) Unannotated(lang string) []Example {
	var out []Example
	for _, e := range d.Examples {
		if e.Lang == lang && e.Check.Kind == "" {
			out = append(out, e)
		}
	}
	return out
}

// Table returns the one table annotated with kind.
func (d *Doc) Table(kind string) (*Table, error) {
	var found *Table
	for _, t := range d.Tables {
		if t.Check.Kind != kind {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%s: a second table annotated %q (the first is at line %d)", t.Where(), kind, found.Line)
		}
		found = t
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no table annotated %q", d.Path, kind)
	}
	return found, nil
}

// TablesAnnotated returns every table annotated with kind.
func (d *Doc) TablesAnnotated(kind string) []*Table {
	var out []*Table
	for _, t := range d.Tables {
		if t.Check.Kind == kind {
			out = append(out, t)
		}
	}
	return out
}

var (
	annotationRE = regexp.MustCompile(`^\s*<!--\s*check:\s*(.*?)\s*-->\s*$`)
	fenceRE      = regexp.MustCompile("^( {0,3})(`{3,}|~{3,})(.*)$")
	headingRE    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	delimRE      = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)
	linkRE       = regexp.MustCompile(`\]\(([^()\s]+)\)`)
)

// Parse reads a Markdown spec. path is only recorded, for messages.
func Parse(path string, src []byte) (*Doc, error) {
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	d := &Doc{Path: path}
	var pending *Annotation
	pendingLine := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		n := i + 1
		if m := annotationRE.FindStringSubmatch(line); m != nil {
			if pending != nil {
				return nil, fmt.Errorf("%s:%d: annotation is not followed by a fenced block or a table", path, pendingLine)
			}
			a, err := parseAnnotation(m[1])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			pending, pendingLine = &a, n
			continue
		}
		var check Annotation
		if pending != nil {
			check = *pending
		}
		switch {
		case fenceRE.MatchString(line):
			m := fenceRE.FindStringSubmatch(line)
			indent, fence, info := len(m[1]), m[2], strings.TrimSpace(m[3])
			if fence[0] == '`' && strings.Contains(info, "`") {
				break // not a fence (CommonMark): an inline code span
			}
			var body []string
			closed := false
			for i++; i < len(lines); i++ {
				l := lines[i]
				t := strings.TrimLeft(l, " ")
				if len(l)-len(t) <= 3 && strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]+" ") == "" {
					closed = true
					break
				}
				for k := 0; k < indent && strings.HasPrefix(l, " "); k++ {
					l = l[1:]
				}
				body = append(body, l)
			}
			if !closed {
				return nil, fmt.Errorf("%s:%d: fence is never closed", path, n)
			}
			lang, _, _ := strings.Cut(info, " ")
			d.Examples = append(d.Examples, Example{Path: path, Line: n, Lang: lang, Info: info,
				Check: check, Text: strings.Join(body, "\n")})
			pending = nil
			continue
		case strings.HasPrefix(strings.TrimSpace(line), "|"):
			t, next, err := parseTable(path, lines, i)
			if err != nil {
				return nil, err
			}
			for k := i; k < next; k++ {
				d.Links = append(d.Links, links(lines[k], k+1)...)
			}
			t.Check = check
			d.Tables = append(d.Tables, t)
			pending = nil
			i = next - 1
			continue
		case pending != nil:
			return nil, fmt.Errorf("%s:%d: annotation is not followed by a fenced block or a table", path, pendingLine)
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			d.Headings = append(d.Headings, Heading{Line: n, Level: len(m[1]), Text: m[2]})
		}
		d.Links = append(d.Links, links(line, n)...)
	}
	if pending != nil {
		return nil, fmt.Errorf("%s:%d: annotation is not followed by a fenced block or a table", path, pendingLine)
	}
	return d, nil
}

// parseAnnotation reads `KIND key=value key="a value"`.
func parseAnnotation(s string) (Annotation, error) {
	a := Annotation{Args: map[string]string{}}
	rest := strings.TrimSpace(s)
	a.Kind, rest, _ = strings.Cut(rest, " ")
	if a.Kind == "" || strings.Contains(a.Kind, "=") {
		return Annotation{}, fmt.Errorf("annotation %q has no kind", s)
	}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		key, after, ok := strings.Cut(rest, "=")
		if !ok || key == "" || strings.ContainsAny(key, " \"") {
			return Annotation{}, fmt.Errorf("annotation %q: want key=value, found %q", s, rest)
		}
		var val string
		if strings.HasPrefix(after, `"`) {
			end := strings.Index(after[1:], `"`)
			if end < 0 {
				return Annotation{}, fmt.Errorf("annotation %q: unterminated quoted value of %s", s, key)
			}
			val, rest = after[1:1+end], after[2+end:]
		} else {
			val, rest, _ = strings.Cut(after, " ")
		}
		if _, dup := a.Args[key]; dup {
			return Annotation{}, fmt.Errorf("annotation %q: argument %s given twice", s, key)
		}
		a.Args[key] = val
	}
	return a, nil
}

// parseTable reads the table whose header is lines[i]; next is the index
// of the first line after it.
func parseTable(path string, lines []string, i int) (t *Table, next int, err error) {
	t = &Table{Path: path, Line: i + 1, Header: splitRow(lines[i])}
	if i+1 >= len(lines) || !delimRE.MatchString(strings.TrimSpace(lines[i+1])) {
		return nil, 0, fmt.Errorf("%s:%d: table header is not followed by a delimiter row (|---|)", path, i+1)
	}
	j := i + 2
	for ; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|"); j++ {
		cells := splitRow(lines[j])
		if len(cells) != len(t.Header) {
			return nil, 0, fmt.Errorf("%s:%d: row has %d cell(s), the header has %d", path, j+1, len(cells), len(t.Header))
		}
		t.Rows = append(t.Rows, Row{Line: j + 1, Cells: cells, table: t})
	}
	return t, j, nil
}

// splitRow splits "| a | b \| c |" into ["a", "b | c"].
func splitRow(line string) []string {
	s := strings.TrimSpace(line)
	s = strings.TrimPrefix(s, "|")
	if strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		s = s[:len(s)-1]
	}
	var cells []string
	var cur strings.Builder
	for k := 0; k < len(s); k++ {
		switch {
		case s[k] == '\\' && k+1 < len(s) && s[k+1] == '|':
			cur.WriteByte('|')
			k++
		case s[k] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[k])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// links returns the inline links of one line.
func links(line string, n int) []Link {
	var out []Link
	for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
		out = append(out, Link{Line: n, Target: m[1]})
	}
	return out
}
