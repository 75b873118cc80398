package flowdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Reader decodes JSON from a stream strictly and within bounds, building
// FlowDocument values (and the requests that carry them) as it reads,
// never a generic tree of the input:
//
//   - the input must be UTF-8; invalid UTF-8 and \u escapes that are half
//     of a surrogate pair are refused (encoding/json would turn both into
//     U+FFFD);
//   - a field given twice in one object, a field the schema does not know
//     (names match exactly, case included) and a value of the wrong JSON
//     type are problems naming their JSON path; null counts as absent;
//   - arrays and objects nest at most 100 deep;
//   - blocks, runs, list items and table cells are counted as they are
//     read against DecodeLimits, and reading stops with a *LimitError as
//     soon as a count passes its limit, so memory stays bounded by the
//     limits (and by the bytes the underlying reader lets through), not by
//     what the input claims.
//
// Problems are collected (up to 100) and reported together by End as a
// *ValidationError; input that is not JSON at all, or not UTF-8, stops
// reading at once with a *ValidationError at path "$". Errors of the
// underlying reader (for example *http.MaxBytesError) are returned as
// they are.
//
// The value readers (Object, Array, String, ...) each consume exactly one
// JSON value. A Reader is not safe for concurrent use.
type Reader struct {
	dec   *json.Decoder
	lim   DecodeLimits
	n     Counts
	depth int
	read  bool // a token was read: EOF is then "unexpected end", not "empty"
	ps    []Problem
}

// maxProblems bounds the problems a Reader collects before it gives up.
const maxProblems = 100

// NewReader returns a Reader of the JSON text in r.
func NewReader(r io.Reader, l DecodeLimits) *Reader {
	dec := json.NewDecoder(&strictText{r: r})
	dec.UseNumber()
	return &Reader{dec: dec, lim: l}
}

// Counts returns what the reader has counted so far.
func (r *Reader) Counts() Counts { return r.n }

// Problem records a problem at path (a caller's own schema rule).
func (r *Reader) Problem(path, rule string) error {
	if path == "" {
		path = "$"
	}
	r.ps = append(r.ps, Problem{Path: path, Rule: rule})
	if len(r.ps) >= maxProblems {
		return &ValidationError{Problems: append(r.ps, Problem{Path: "$", Rule: fmt.Sprintf("more than %d problems; fix these first", maxProblems)})}
	}
	return nil
}

// End checks that nothing but white space follows the value read, and
// returns the problems found as a *ValidationError (nil when none). what
// names the value in the message ("the document", "the request").
func (r *Reader) End(what string) error {
	if _, err := r.dec.Token(); !errors.Is(err, io.EOF) {
		var se *json.SyntaxError
		if err != nil && !errors.As(err, &se) {
			return r.fatal(err) // not UTF-8, or the underlying reader failed
		}
		return invalid("$", "unexpected data after "+what)
	}
	if len(r.ps) > 0 {
		sortProblems(r.ps)
		return &ValidationError{Problems: r.ps}
	}
	return nil
}

// sortProblems orders problems as a walk of the value in document order
// with each object's members in name order would find them, so that the
// same input always lists its problems alike whatever order its members
// came in.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool { return pathLess(ps[i].Path, ps[j].Path) })
}

// pathLess compares JSON paths segment by segment: array indexes as
// numbers, member names as strings, a path before the paths inside it.
func pathLess(a, b string) bool {
	if a == "$" || b == "$" {
		return a == "$" && b != "$"
	}
	for a != "" && b != "" {
		sa, ra := nextSegment(a)
		sb, rb := nextSegment(b)
		if sa != sb {
			ia, ea := strconv.Atoi(sa)
			ib, eb := strconv.Atoi(sb)
			if ea == nil && eb == nil {
				return ia < ib
			}
			return sa < sb
		}
		a, b = ra, rb
	}
	return a == "" && b != ""
}

// nextSegment splits the first member name or [index] off a path.
func nextSegment(p string) (seg, rest string) {
	if p[0] == '[' {
		if i := strings.IndexByte(p, ']'); i > 0 {
			return p[1:i], strings.TrimPrefix(p[i+1:], ".")
		}
	}
	i := strings.IndexAny(p, ".[")
	if i < 0 {
		return p, ""
	}
	return p[:i], strings.TrimPrefix(p[i:], ".")
}

// fatal turns an error of the decoder into what the Reader reports.
func (r *Reader) fatal(err error) error {
	var te *textError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return invalid("$", te.Error())
	case errors.As(err, &se):
		return invalid("$", "not JSON: "+jsonErr(err))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if !r.read && errors.Is(err, io.EOF) {
			return invalid("$", "not JSON: empty input")
		}
		return invalid("$", "not JSON: unexpected end of input")
	}
	return err
}

func (r *Reader) token() (json.Token, error) {
	t, err := r.dec.Token()
	if err != nil {
		return nil, r.fatal(err)
	}
	r.read = true
	return t, nil
}

// skipRest skips the rest of a container whose opening delimiter was read.
func (r *Reader) skipRest() error {
	for d := 1; d > 0; {
		t, err := r.token()
		if err != nil {
			return err
		}
		if delim, ok := t.(json.Delim); ok {
			switch delim {
			case '{', '[':
				if d++; r.depth+d > maxJSONDepth {
					return invalid("$", fmt.Sprintf("not JSON: nesting deeper than %d levels", maxJSONDepth))
				}
			default:
				d--
			}
		}
	}
	return nil
}

// wrongType records that the value starting with t is not of the wanted
// type, and skips it.
func (r *Reader) wrongType(t json.Token, path, rule string) error {
	if err := r.Problem(path, rule); err != nil {
		return err
	}
	if d, ok := t.(json.Delim); ok && (d == '{' || d == '[') {
		return r.skipRest()
	}
	return nil
}

// Skip reads and discards one value.
func (r *Reader) Skip() error {
	t, err := r.token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); ok && (d == '{' || d == '[') {
		return r.skipRest()
	}
	return nil
}

// FieldFunc reads the value of member key of an object (path is the
// member's path) with one of the Reader's value readers. It returns false,
// having read nothing, for a key the schema does not know.
type FieldFunc func(key, path string) (known bool, err error)

// Object reads an object, calling field for each member: what names it in
// problems ("block", "request"). A member given twice, or one field does
// not know, is a problem and its value is skipped. present is false for
// null and for a value that is not an object (a problem).
func (r *Reader) Object(path, what string, field FieldFunc) (present bool, err error) {
	t, err := r.token()
	if err != nil {
		return false, err
	}
	return r.object(t, path, what, field)
}

func (r *Reader) object(t json.Token, path, what string, field FieldFunc) (bool, error) {
	if t == nil {
		return false, nil
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return false, r.wrongType(t, path, what+" must be a JSON object")
	}
	if r.depth++; r.depth > maxJSONDepth {
		return false, invalid("$", fmt.Sprintf("not JSON: nesting deeper than %d levels", maxJSONDepth))
	}
	var seen keySet
	for r.dec.More() {
		kt, err := r.token()
		if err != nil {
			return false, err
		}
		key, _ := kt.(string)
		p := joinPath(path, key)
		if seen.has(key) {
			if err := r.Problem(p, "duplicate field"); err != nil {
				return false, err
			}
			if err := r.Skip(); err != nil {
				return false, err
			}
			continue
		}
		known, err := field(key, p)
		if err != nil {
			return false, err
		}
		if !known {
			if err := r.Problem(p, "unknown field in "+what); err != nil {
				return false, err
			}
			if err := r.Skip(); err != nil {
				return false, err
			}
			continue
		}
		seen.add(key)
	}
	if _, err := r.token(); err != nil { // '}'
		return false, err
	}
	r.depth--
	return true, nil
}

// Array reads an array, calling each for every element (which it must
// read). present is false for null and for a value that is not an array
// (a problem).
func (r *Reader) Array(path string, each func(i int, path string) error) (present bool, err error) {
	t, err := r.token()
	if err != nil {
		return false, err
	}
	return r.array(t, path, each)
}

func (r *Reader) array(t json.Token, path string, each func(i int, path string) error) (bool, error) {
	if t == nil {
		return false, nil
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return false, r.wrongType(t, path, "must be a JSON array")
	}
	if r.depth++; r.depth > maxJSONDepth {
		return false, invalid("$", fmt.Sprintf("not JSON: nesting deeper than %d levels", maxJSONDepth))
	}
	for i := 0; r.dec.More(); i++ {
		if err := each(i, indexPath(path, i)); err != nil {
			return false, err
		}
	}
	if _, err := r.token(); err != nil { // ']'
		return false, err
	}
	r.depth--
	return true, nil
}

// String reads a string ("" for null or a value of another type, which is
// a problem).
func (r *Reader) String(path string) (string, error) {
	t, err := r.token()
	if err != nil {
		return "", err
	}
	switch v := t.(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	}
	return "", r.wrongType(t, path, "must be a string")
}

// OptString reads a string, or null (nil); a value of another type is a
// problem (nil).
func (r *Reader) OptString(path string) (*string, error) {
	t, err := r.token()
	if err != nil {
		return nil, err
	}
	switch v := t.(type) {
	case string:
		return &v, nil
	case nil:
		return nil, nil
	}
	return nil, r.wrongType(t, path, "must be a string")
}

// Bool reads true or false (false for null).
func (r *Reader) Bool(path string) (bool, error) {
	t, err := r.token()
	if err != nil {
		return false, err
	}
	switch v := t.(type) {
	case bool:
		return v, nil
	case nil:
		return false, nil
	}
	return false, r.wrongType(t, path, "must be true or false")
}

// Int reads an integer that fits in 64 bits (0 for null).
func (r *Reader) Int(path string) (int64, error) {
	t, err := r.token()
	if err != nil {
		return 0, err
	}
	switch v := t.(type) {
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, r.Problem(path, "must be an integer")
		}
		return n, nil
	case nil:
		return 0, nil
	}
	return 0, r.wrongType(t, path, "must be a number")
}

// Uint reads a non-negative integer that fits in 64 bits (0 for null).
func (r *Reader) Uint(path string) (uint64, error) {
	t, err := r.token()
	if err != nil {
		return 0, err
	}
	switch v := t.(type) {
	case json.Number:
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, r.Problem(path, "must be a non-negative integer")
		}
		return n, nil
	case nil:
		return 0, nil
	}
	return 0, r.wrongType(t, path, "must be a number")
}

// Document reads a FlowDocument (nil for null). A missing or 0
// schemaVersion reads as 1; any other but 1 is a problem.
func (r *Reader) Document(path string) (*Document, error) {
	var d Document
	ok, err := r.Object(path, "document", func(key, p string) (bool, error) {
		switch key {
		case "schemaVersion":
			n, err := r.Int(p)
			if err == nil && n != 0 && n != SchemaVersion {
				err = r.Problem(p, "schema version must be 1")
			}
			return true, err
		case "blocks":
			_, err := r.Array(p, func(_ int, ip string) error {
				b, err := r.Block(ip)
				if b != nil {
					d.Blocks = append(d.Blocks, *b)
				}
				return err
			})
			return true, err
		}
		return false, nil
	})
	if err != nil || !ok {
		return nil, err
	}
	d.SchemaVersion = SchemaVersion
	return &d, nil
}

// Block reads one block (nil for null, which is a problem inside a
// document) and counts it.
func (r *Reader) Block(path string) (*Block, error) {
	var b Block
	t, err := r.token()
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, r.Problem(path, "block must be a JSON object")
	}
	ok, err := r.object(t, path, "block", func(key, p string) (bool, error) {
		var err error
		switch key {
		case "id":
			b.ID, err = r.String(p)
		case "type":
			var s string
			s, err = r.String(p)
			b.Type = BlockType(s)
		case "attrs":
			b.Attrs, err = r.blockAttrs(p)
		case "richText":
			b.RichText, err = r.runs(p)
		case "items":
			b.Items, err = r.items(p)
		case "rows":
			_, err = r.Array(p, func(_ int, ip string) error {
				row, err := r.row(ip)
				if row != nil {
					b.Rows = append(b.Rows, *row)
				}
				return err
			})
		case "children":
			b.Children, err = r.blocks(p)
		case "columns":
			_, err = r.Array(p, func(_ int, ip string) error {
				var col Column
				ok, err := r.Object(ip, "column", func(key, p string) (bool, error) {
					if key != "blocks" {
						return false, nil
					}
					var err error
					col.Blocks, err = r.blocks(p)
					return true, err
				})
				if ok {
					b.Cols = append(b.Cols, col)
				} else if err == nil {
					err = r.Required(ip, "column")
				}
				return err
			})
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil || !ok {
		return nil, err
	}
	if err := r.n.AddBlock(r.lim); err != nil {
		return nil, err
	}
	return &b, nil
}

// Required reports a null where an object is needed (at path, named
// what); a value of another type was reported already when read.
func (r *Reader) Required(path, what string) error {
	if len(r.ps) > 0 && r.ps[len(r.ps)-1].Path == path {
		return nil
	}
	return r.Problem(path, what+" must be a JSON object")
}

func (r *Reader) blocks(path string) ([]Block, error) {
	var out []Block
	_, err := r.Array(path, func(_ int, ip string) error {
		b, err := r.Block(ip)
		if b != nil {
			out = append(out, *b)
		}
		return err
	})
	return out, err
}

func (r *Reader) blockAttrs(path string) (*Attrs, error) {
	var a Attrs
	ok, err := r.Object(path, "attrs", func(key, p string) (bool, error) {
		var s *string
		switch key {
		case "level", "size", "start":
			n, err := r.Int(p)
			switch key {
			case "level":
				a.Level = int(n)
			case "start":
				a.Start = int(n)
			default:
				a.Size = n
			}
			return true, err
		case "ordered", "header", "loose":
			v, err := r.Bool(p)
			switch key {
			case "ordered":
				a.Ordered = v
			case "loose":
				a.Loose = v
			default:
				a.Header = v
			}
			return true, err
		case "language":
			s = &a.Language
		case "text":
			s = &a.Text
		case "latex":
			s = &a.Latex
		case "kind":
			s = &a.Kind
		case "src":
			s = &a.Src
		case "alt":
			s = &a.Alt
		case "caption":
			s = &a.Caption
		case "icon":
			s = &a.Icon
		case "url":
			s = &a.URL
		case "title":
			s = &a.Title
		case "description":
			s = &a.Description
		case "name":
			s = &a.Name
		case "provider":
			s = &a.Provider
		default:
			return false, nil
		}
		var err error
		*s, err = r.String(p)
		return true, err
	})
	if err != nil || !ok {
		return nil, err
	}
	return &a, nil
}

func (r *Reader) runs(path string) ([]Run, error) {
	t, err := r.token()
	if err != nil {
		return nil, err
	}
	return r.runsTok(t, path)
}

// runsTok reads an array of runs whose first token t was read.
func (r *Reader) runsTok(t json.Token, path string) ([]Run, error) {
	var out []Run
	_, err := r.array(t, path, func(_ int, ip string) error {
		var run Run
		ok, err := r.Object(ip, "run", func(key, p string) (bool, error) {
			var err error
			switch key {
			case "text":
				run.Text, err = r.String(p)
			case "link":
				run.Link, err = r.String(p)
			case "title":
				run.Title, err = r.String(p)
			case "equation":
				run.Equation, err = r.String(p)
			case "marks":
				_, err = r.Array(p, func(_ int, mp string) error {
					s, err := r.String(mp)
					run.Marks = append(run.Marks, Mark(s))
					return err
				})
			default:
				return false, nil
			}
			return true, err
		})
		if err != nil {
			return err
		}
		if !ok {
			return r.Required(ip, "run")
		}
		out = append(out, run)
		return r.n.AddRun(r.lim)
	})
	return out, err
}

func (r *Reader) items(path string) ([]ListItem, error) {
	var out []ListItem
	_, err := r.Array(path, func(_ int, ip string) error {
		var it ListItem
		ok, err := r.Object(ip, "list item", func(key, p string) (bool, error) {
			var err error
			switch key {
			case "richText":
				it.RichText, err = r.runs(p)
			case "items":
				it.Items, err = r.items(p)
			case "blocks":
				it.Blocks, err = r.blocks(p)
			case "task":
				it.Task, err = r.String(p)
			default:
				return false, nil
			}
			return true, err
		})
		if err != nil {
			return err
		}
		if !ok {
			return r.Required(ip, "list item")
		}
		out = append(out, it)
		return r.n.AddRun(r.lim)
	})
	return out, err
}

func (r *Reader) row(path string) (*TableRow, error) {
	var row TableRow
	ok, err := r.Object(path, "table row", func(key, p string) (bool, error) {
		if key != "cells" {
			return false, nil
		}
		_, err := r.Array(p, func(_ int, cp string) error {
			t, err := r.token()
			if err != nil {
				return err
			}
			var cell []Run
			if t != nil { // a null cell is an empty one
				if cell, err = r.runsTok(t, cp); err != nil {
					return err
				}
			}
			row.Cells = append(row.Cells, cell)
			return r.n.AddRun(r.lim)
		})
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, r.Required(path, "table row")
	}
	return &row, nil
}

// Attributes reads article attributes (nil for null).
func (r *Reader) Attributes(path string) (*Attributes, error) {
	var a Attributes
	ok, err := r.Object(path, "attributes", func(key, p string) (bool, error) {
		var err error
		switch key {
		case "title":
			a.Title, err = r.String(p)
		case "summary":
			a.Summary, err = r.String(p)
		case "slug":
			a.Slug, err = r.String(p)
		case "category":
			a.Category, err = r.String(p)
		case "status":
			a.Status, err = r.String(p)
		case "visibility":
			a.Visibility, err = r.String(p)
		case "tags":
			_, err = r.Array(p, func(_ int, tp string) error {
				s, err := r.String(tp)
				a.Tags = append(a.Tags, s)
				return err
			})
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil || !ok {
		return nil, err
	}
	return &a, nil
}

// keySet holds the member names of one object: a slice while small, a map
// once an object has many (arbitrary JSON may).
type keySet struct {
	list []string
	m    map[string]struct{}
}

func (k *keySet) has(key string) bool {
	if k.m != nil {
		_, ok := k.m[key]
		return ok
	}
	return containsString(k.list, key)
}

func (k *keySet) add(key string) {
	if k.m == nil && len(k.list) < 16 {
		k.list = append(k.list, key)
		return
	}
	if k.m == nil {
		k.m = make(map[string]struct{}, 32)
		for _, s := range k.list {
			k.m[s] = struct{}{}
		}
	}
	k.m[key] = struct{}{}
}

// CheckJSON checks that data is one JSON value that a Reader would accept
// as text, whatever its schema: UTF-8 without lone surrogates, no member
// given twice in one object (each named by its path), nesting at most 100
// deep. Transports that decode with encoding/json run it first, so that
// they refuse what the Reader refuses instead of keeping the last of two
// members or turning bad text into U+FFFD. The error is a
// *ValidationError.
func CheckJSON(data []byte) error {
	r := NewReader(bytes.NewReader(data), DecodeLimits{})
	if err := r.anyValue(""); err != nil {
		return err
	}
	return r.End("the JSON value")
}

func (r *Reader) anyValue(path string) error {
	t, err := r.token()
	if err != nil {
		return err
	}
	switch t {
	case json.Delim('{'):
		_, err = r.object(t, path, "object", func(_, p string) (bool, error) { return true, r.anyValue(p) })
	case json.Delim('['):
		_, err = r.array(t, path, func(_ int, p string) error { return r.anyValue(p) })
	}
	return err
}
