package flowdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Parse decodes a FlowDocument from JSON, strictly: the input must be one
// JSON object; unknown fields (field names match exactly, case included)
// and values of the wrong JSON type are problems naming their JSON path;
// schemaVersion must be 1 (missing or 0 reads as 1). null counts as absent.
// The error is a *ValidationError listing every such problem.
//
// Parse checks the encoding only; call Normalize (or Validate) on the
// result before trusting its content.
func Parse(data []byte) (Document, error) {
	if !utf8.Valid(data) {
		return Document{}, invalid("$", "input is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := &walker{}
	raw, err := w.tree(dec, "", 0)
	if err != nil {
		return Document{}, invalid("$", "not JSON: "+jsonErr(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Document{}, invalid("$", "unexpected data after the document")
	}
	if len(w.ps) > 0 { // duplicate keys, nesting too deep
		return Document{}, &ValidationError{Problems: w.ps}
	}
	w.doc(raw)
	if len(w.ps) > 0 {
		return Document{}, &ValidationError{Problems: w.ps}
	}
	var d Document
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&d); err != nil {
		// The walker checks what the decoder checks; this is a backstop.
		return Document{}, invalid("$", "not a FlowDocument: "+jsonErr(err))
	}
	if d.SchemaVersion == 0 {
		d.SchemaVersion = SchemaVersion
	}
	return d, nil
}

// maxJSONDepth bounds the nesting of arrays and objects in a parsed
// document. The deepest valid FlowDocument (MaxDepth blocks, MaxListDepth
// items) stays far below it; the bound keeps the recursive tree builder
// from exhausting the stack on hostile input.
const maxJSONDepth = 100

// tree reads one JSON value from dec into the shapes encoding/json uses
// for any (map[string]any, []any, string, json.Number, bool, nil),
// recording duplicate object keys as problems (encoding/json silently keeps
// the last one, other decoders the first) and refusing deep nesting.
func (w *walker) tree(dec *json.Decoder, path string, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if depth > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth >= maxJSONDepth {
		return nil, fmt.Errorf("nesting deeper than %d levels", maxJSONDepth)
	}
	switch d {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, unexpectedEOF(err)
			}
			k, _ := kt.(string)
			v, err := w.tree(dec, joinPath(path, k), depth+1)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				w.add(joinPath(path, k), "duplicate field")
			}
			m[k] = v
		}
		_, err := dec.Token() // '}'
		return m, unexpectedEOF(err)
	default: // '['
		a := []any{}
		for dec.More() {
			v, err := w.tree(dec, indexPath(path, len(a)), depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ']'
		return a, unexpectedEOF(err)
	}
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func invalid(path, rule string) error {
	return &ValidationError{Problems: []Problem{{Path: path, Rule: rule}}}
}

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", err, se.Offset)
	}
	if errors.Is(err, io.EOF) {
		return "empty input"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

// walker checks a decoded JSON tree against the FlowDocument schema, so
// that problems carry their JSON path (encoding/json reports neither the
// path of an unknown field nor more than one problem).
type walker struct {
	ps []Problem
}

func (w *walker) add(path, rule string) { w.ps = append(w.ps, Problem{Path: path, Rule: rule}) }

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// object checks v is an object with only the known keys and returns it
// with its keys in sorted order.
func (w *walker) object(v any, path, what string, known ...string) (map[string]any, []string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		p := path
		if p == "" {
			p = "$"
		}
		w.add(p, what+" must be a JSON object")
		return nil, nil, false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if !containsString(known, k) {
			w.add(joinPath(path, k), "unknown field in "+what)
			continue
		}
		if m[k] != nil {
			out = append(out, k)
		}
	}
	return m, out, true
}

func (w *walker) str(v any, path string) {
	if _, ok := v.(string); !ok {
		w.add(path, "must be a string")
	}
}

func (w *walker) boolean(v any, path string) {
	if _, ok := v.(bool); !ok {
		w.add(path, "must be true or false")
	}
}

func (w *walker) integer(v any, path string) {
	n, ok := v.(json.Number)
	if !ok {
		w.add(path, "must be a number")
		return
	}
	if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
		w.add(path, "must be an integer")
	}
}

func (w *walker) array(v any, path string, each func(any, string)) {
	a, ok := v.([]any)
	if !ok {
		w.add(path, "must be a JSON array")
		return
	}
	for i, e := range a {
		each(e, indexPath(path, i))
	}
}

func (w *walker) doc(v any) {
	m, keys, ok := w.object(v, "", "document", "schemaVersion", "blocks")
	if !ok {
		return
	}
	for _, k := range keys {
		switch k {
		case "schemaVersion":
			w.integer(m[k], k)
			if n, ok := m[k].(json.Number); ok && string(n) != "0" && string(n) != "1" {
				w.add(k, "schema version must be 1")
			}
		case "blocks":
			w.array(m[k], k, w.block)
		}
	}
}

func (w *walker) block(v any, path string) {
	m, keys, ok := w.object(v, path, "block", "id", "type", "attrs", "richText", "items", "rows", "children", "columns")
	if !ok {
		return
	}
	for _, k := range keys {
		p := joinPath(path, k)
		switch k {
		case "id", "type":
			w.str(m[k], p)
		case "attrs":
			w.attrs(m[k], p)
		case "richText":
			w.array(m[k], p, w.run)
		case "items":
			w.array(m[k], p, w.item)
		case "rows":
			w.array(m[k], p, w.row)
		case "children":
			w.array(m[k], p, w.block)
		case "columns":
			w.array(m[k], p, w.column)
		}
	}
}

var attrKinds = map[string]byte{
	"level": 'i', "ordered": 'b', "language": 's', "text": 's', "latex": 's', "kind": 's',
	"src": 's', "alt": 's', "caption": 's', "header": 'b', "icon": 's', "url": 's',
	"title": 's', "description": 's', "name": 's', "size": 'i', "provider": 's',
}

func (w *walker) attrs(v any, path string) {
	known := make([]string, 0, len(attrKinds))
	for k := range attrKinds {
		known = append(known, k)
	}
	m, keys, ok := w.object(v, path, "attrs", known...)
	if !ok {
		return
	}
	for _, k := range keys {
		p := joinPath(path, k)
		switch attrKinds[k] {
		case 's':
			w.str(m[k], p)
		case 'b':
			w.boolean(m[k], p)
		case 'i':
			w.integer(m[k], p)
		}
	}
}

func (w *walker) run(v any, path string) {
	m, keys, ok := w.object(v, path, "run", "text", "marks", "link", "equation")
	if !ok {
		return
	}
	for _, k := range keys {
		p := joinPath(path, k)
		if k == "marks" {
			w.array(m[k], p, w.str)
			continue
		}
		w.str(m[k], p)
	}
}

func (w *walker) item(v any, path string) {
	m, keys, ok := w.object(v, path, "list item", "richText", "items")
	if !ok {
		return
	}
	for _, k := range keys {
		p := joinPath(path, k)
		if k == "richText" {
			w.array(m[k], p, w.run)
		} else {
			w.array(m[k], p, w.item)
		}
	}
}

func (w *walker) row(v any, path string) {
	m, keys, ok := w.object(v, path, "table row", "cells")
	if !ok {
		return
	}
	for _, k := range keys {
		w.array(m[k], joinPath(path, k), func(cell any, cp string) {
			if cell == nil {
				return
			}
			w.array(cell, cp, w.run)
		})
	}
}

func (w *walker) column(v any, path string) {
	m, keys, ok := w.object(v, path, "column", "blocks")
	if !ok {
		return
	}
	for _, k := range keys {
		w.array(m[k], joinPath(path, k), w.block)
	}
}
