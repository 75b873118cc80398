package bounded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// jsonGrowth is what encoding/json allocates for a slice of n elements,
// in elements: it appends one element at a time, so the slice is
// reallocated as it grows (by 2× while small, then by about 1.25×) and the
// sum of its allocations reaches about 6n.
const jsonGrowth = 6

// UnmarshalJSON decodes JSON text into v (a non-nil pointer) with
// encoding/json, after checking that the text nests at most MaxDepth deep
// and that decoding it into v's type allocates at most AllocPerByte ×
// len(data) + AllocBase bytes. A type that holds an interface is refused.
// Syntax errors are left to encoding/json, which reports them.
func UnmarshalJSON(data []byte, v any) error {
	if err := CheckJSON(data, v); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// UnmarshalJSONExact is UnmarshalJSON matching member names to struct
// fields exactly, case included: a member whose name differs from a
// field's only in case, which encoding/json would decode into that field,
// is refused with a *CaseError (at any depth). Other unknown members are
// ignored.
func UnmarshalJSONExact(data []byte, v any) error {
	if err := checkJSON(data, v, true); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// CaseError is a JSON member whose name matches a struct field's only
// when case is ignored (UnmarshalJSONExact, UnmarshalJSONStrict).
type CaseError struct {
	Offset int    // of the member's name
	Name   string // as written
	Field  string // the field's name
}

func (e *CaseError) Error() string {
	return fmt.Sprintf("unknown field %q (field names match exactly, case included: the field is %q)", e.Name, e.Field)
}

// UnmarshalJSONStrict is UnmarshalJSON refusing, at any depth, a member
// that names no field of the struct it decodes into
// (json.Decoder.DisallowUnknownFields) — names match exactly, case
// included (a *CaseError) — and anything after the value.
func UnmarshalJSONStrict(data []byte, v any) error {
	if err := checkJSON(data, v, true); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Format: "JSON", Offset: int(dec.InputOffset()), Reason: "data after the value"}
	}
	return nil
}

// CheckJSON is UnmarshalJSON without the decoding: it checks nesting and
// the memory decoding data into v's type would allocate.
func CheckJSON(data []byte, v any) error { return checkJSON(data, v, false) }

func checkJSON(data []byte, v any, exact bool) error {
	rv := reflect.TypeOf(v)
	if rv == nil || rv.Kind() != reflect.Pointer {
		return fmt.Errorf("bounded: UnmarshalJSON needs a non-nil pointer, got %T", v)
	}
	ti, err := typeInfo(rv.Elem(), "", true)
	if err != nil {
		return err
	}
	w := jwalker{data: data, exact: exact}
	if err := w.value(ti, 0); err != nil {
		return err
	}
	if limit := Budget(len(data)); w.cost > limit {
		return &Error{Format: "JSON", Reason: fmt.Sprintf("decoding %d bytes into %s would allocate about %d bytes, more than the %d allowed",
			len(data), rv.Elem(), w.cost, limit)}
	}
	return nil
}

// jwalker walks JSON text as encoding/json would decode it into a type
// and adds up what that allocates. It stops quietly at the first syntax
// error (encoding/json reports it); it only needs to see every array,
// object and string that valid text holds.
type jwalker struct {
	data []byte
	pos  int
	cost int64
	bad  bool // a syntax error was seen: stop counting
	// exact refuses a member that matches a field only case-insensitively.
	exact bool
}

func (w *jwalker) ws() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func jsonErr(off int, format string, args ...any) error {
	return &Error{Format: "JSON", Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// str skips the string starting at w.pos (a '"') and returns its raw
// content.
func (w *jwalker) str() []byte {
	start := w.pos + 1
	for i := start; i < len(w.data); i++ {
		switch w.data[i] {
		case '\\':
			i++
		case '"':
			w.pos = i + 1
			return w.data[start:i]
		}
	}
	w.bad = true
	w.pos = len(w.data)
	return nil
}

func (w *jwalker) value(t *tinfo, depth int) error {
	w.ws()
	if w.bad || w.pos >= len(w.data) {
		w.bad = true
		return nil
	}
	start := w.pos
	if t != nil && t.kind == tCustom {
		if err := w.value(nil, depth); err != nil {
			return err
		}
		w.cost += CustomPerByte*int64(w.pos-start) + 64
		return nil
	}
	c := w.data[w.pos]
	if t != nil && t.kind == tPtr {
		if c != 'n' {
			w.cost += t.size
		}
		return w.value(t.elem, depth)
	}
	if t == nil {
		t = skip
	}
	switch c {
	case '"':
		s := w.str()
		if t.kind == tString || t.kind == tBytes {
			w.cost += 2 * int64(len(s))
		}
		return nil
	case '[', '{':
	default: // number, true, false, null
		for w.pos < len(w.data) && !strings.ContainsRune(" \t\r\n,]}:", rune(w.data[w.pos])) {
			w.pos++
		}
		if w.pos == start {
			w.bad = true
		}
		return nil
	}
	if depth >= MaxDepth {
		return jsonErr(start, "nested more than %d deep", MaxDepth)
	}
	w.pos++
	if c == '[' {
		elem := (*tinfo)(nil)
		size := int64(0)
		switch t.kind {
		case tSlice:
			elem, size = t.elem, t.size
		case tBytes: // encoding/json also reads []byte from an array of numbers
			size = 1
		case tArray:
			elem = t.elem
		}
		for n := 0; ; n++ {
			w.ws()
			if w.pos < len(w.data) && w.data[w.pos] == ']' {
				w.pos++
				return nil
			}
			if n > 0 {
				if w.pos >= len(w.data) || w.data[w.pos] != ',' {
					w.bad = true
					return nil
				}
				w.pos++
			}
			w.cost += jsonGrowth * size
			if t.kind == tArray && n >= t.n {
				elem = nil
			}
			if err := w.value(elem, depth+1); err != nil || w.bad {
				return err
			}
		}
	}
	for n := 0; ; n++ {
		w.ws()
		if w.pos < len(w.data) && w.data[w.pos] == '}' {
			w.pos++
			return nil
		}
		if n > 0 {
			if w.pos >= len(w.data) || w.data[w.pos] != ',' {
				w.bad = true
				return nil
			}
			w.pos++
			w.ws()
		}
		if w.pos >= len(w.data) || w.data[w.pos] != '"' {
			w.bad = true
			return nil
		}
		keyStart := w.pos
		key := w.str()
		w.ws()
		if w.pos >= len(w.data) || w.data[w.pos] != ':' {
			w.bad = true
			return nil
		}
		w.pos++
		var vt *tinfo
		switch t.kind {
		case tStruct:
			if bytes.IndexByte(key, '\\') >= 0 {
				var k string
				if json.Unmarshal(w.data[keyStart:keyStart+len(key)+2], &k) != nil {
					w.bad = true
					return nil
				}
				key = []byte(k)
			}
			f := t.fields[string(key)]
			if f == nil {
				var buf [32]byte
				folded := appendFolded(buf[:0], key)
				f = t.fold[string(folded)]
				if f != nil && w.exact {
					return &CaseError{Offset: keyStart, Name: string(key), Field: t.foldNames[string(folded)]}
				}
			}
			if f != nil {
				w.cost += f.extra
				vt = f.info
			}
		case tMap:
			w.cost += jsonGrowth*t.size/2 + 2*int64(len(key))
			vt = t.elem
		}
		if err := w.value(vt, depth+1); err != nil || w.bad {
			return err
		}
	}
}

// appendFolded appends name folded as encoding/json folds field names to
// match them case-insensitively (bytes.EqualFold: Unicode simple folding,
// so "K" (U+212A) matches "k" and "ſ" matches "s").
func appendFolded(out, name []byte) []byte {
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}
