package bounded

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// tinfo is what the walk needs to know of a target type: how decoding into
// it allocates.
type tinfo struct {
	kind   tkind
	size   int64  // tSlice: element size; tPtr: pointee size; tMap: per entry
	elem   *tinfo // tSlice, tArray, tPtr, tMap
	key    *tinfo // tMap
	n      int    // tArray: length
	fields map[string]*field
	list   []*field // tStruct: fields in the order msgpack decodes an array into them
	// JSON only: fold holds the fields under folded names (appendFolded),
	// for encoding/json's case-insensitive match.
	fold map[string]*field
	// foldNames are the fields' own names under their folded names.
	foldNames map[string]string
}

type field struct {
	info  *tinfo
	extra int64 // allocated when the field is set (an embedded pointer's struct)
}

type tkind uint8

const (
	tSkip   tkind = iota // bool, numbers, and values decoded nowhere
	tString              // string
	tBytes               // []byte
	tCustom              // a type with its own decoder
	tPtr
	tSlice
	tArray
	tMap
	tStruct
)

var skip = &tinfo{kind: tSkip}

var (
	customDecoder     = reflect.TypeFor[msgpack.CustomDecoder]()
	unmarshaler       = reflect.TypeFor[msgpack.Unmarshaler]()
	binaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	textUnmarshaler   = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler   = reflect.TypeFor[json.Unmarshaler]()
)

type cacheKey struct {
	t    reflect.Type
	tag  string
	json bool
}

type cached struct {
	info *tinfo
	err  error
}

var infoCache sync.Map // cacheKey -> cached

// typeInfo returns how decoding into t allocates, for msgpack (with
// fallback struct tag tag) or for encoding/json. A type that holds an
// interface is an error: untrusted input is never decoded into one.
func typeInfo(t reflect.Type, tag string, forJSON bool) (*tinfo, error) {
	k := cacheKey{t, tag, forJSON}
	if c, ok := infoCache.Load(k); ok {
		return c.(cached).info, c.(cached).err
	}
	b := builder{tag: tag, json: forJSON, seen: map[reflect.Type]*tinfo{}}
	info, err := b.build(t, t.String())
	infoCache.Store(k, cached{info, err})
	return info, err
}

type builder struct {
	tag  string
	json bool
	seen map[reflect.Type]*tinfo // types being built, for recursive types
}

func (b *builder) custom(t reflect.Type) bool {
	ifaces := []reflect.Type{customDecoder, unmarshaler, binaryUnmarshaler, textUnmarshaler}
	if b.json {
		ifaces = []reflect.Type{jsonUnmarshaler, textUnmarshaler}
	}
	for _, i := range ifaces {
		if t.Implements(i) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(i)) {
			return true
		}
	}
	return false
}

func (b *builder) build(t reflect.Type, path string) (*tinfo, error) {
	if ti, ok := b.seen[t]; ok {
		return ti, nil
	}
	if t.Kind() == reflect.Pointer {
		ti := &tinfo{kind: tPtr, size: int64(t.Elem().Size())}
		b.seen[t] = ti
		e, err := b.build(t.Elem(), path)
		ti.elem = e
		return ti, err
	}
	if b.custom(t) {
		return &tinfo{kind: tCustom}, nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil, fmt.Errorf("bounded: %s holds an interface (%s); untrusted input is never decoded into one", path, t)
	case reflect.String:
		return &tinfo{kind: tString}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &tinfo{kind: tBytes}, nil
		}
		ti := &tinfo{kind: tSlice, size: int64(t.Elem().Size())}
		b.seen[t] = ti
		e, err := b.build(t.Elem(), path+"[]")
		ti.elem = e
		return ti, err
	case reflect.Array:
		ti := &tinfo{kind: tArray, n: t.Len()}
		b.seen[t] = ti
		e, err := b.build(t.Elem(), path+"[]")
		ti.elem = e
		return ti, err
	case reflect.Map:
		// A Go map costs about twice its keys and values once its
		// buckets' slack and control bytes are counted.
		ti := &tinfo{kind: tMap, size: 2*int64(t.Key().Size()+t.Elem().Size()) + 16}
		b.seen[t] = ti
		k, err := b.build(t.Key(), path+"{key}")
		if err != nil {
			return nil, err
		}
		e, err := b.build(t.Elem(), path+"{}")
		ti.key, ti.elem = k, e
		return ti, err
	case reflect.Struct:
		ti := &tinfo{kind: tStruct, fields: map[string]*field{}}
		b.seen[t] = ti
		if err := b.fields(ti, t, path, 0); err != nil {
			return nil, err
		}
		return ti, nil
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return nil, fmt.Errorf("bounded: %s holds a %s, which input cannot be decoded into", path, t)
	}
	return skip, nil
}

// fields adds the fields of struct t to ti as the decoder names them:
// msgpack's rules (tag "msgpack", then the fallback tag; "-" skips;
// unexported fields skipped; an embedded struct inlined unless a name it
// brings is taken), or encoding/json's (tag "json"; an embedded struct
// without a tag name promoted; names also matched case-insensitively).
// extra is what setting a field of an inlined embedded pointer allocates.
func (b *builder) fields(ti *tinfo, t reflect.Type, path string, extra int64) error {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts := b.tagOf(f)
		if name == "-" && (!b.json || opts == "") {
			continue
		}
		inlined := false
		if f.Anonymous {
			et, ex := f.Type, int64(0)
			if et.Kind() == reflect.Pointer {
				et, ex = et.Elem(), int64(et.Elem().Size())
			}
			inline := et.Kind() == reflect.Struct && !b.custom(et)
			if b.json {
				inline = inline && name == ""
			} else {
				inline = inline && !hasOpt(opts, "noinline")
			}
			if inline {
				inner := &tinfo{kind: tStruct, fields: map[string]*field{}}
				if err := b.fields(inner, et, path+"."+f.Name, extra+ex); err != nil {
					return err
				}
				shadowed := false
				for n := range inner.fields {
					if _, ok := ti.fields[n]; ok {
						shadowed = true
					}
				}
				if b.json || !shadowed || hasOpt(opts, "inline") {
					ti.list = append(ti.list, inner.list...)
					for n, g := range inner.fields {
						if _, ok := ti.fields[n]; !ok {
							ti.add(n, g)
						}
					}
					if b.json {
						continue
					}
					inlined = true // msgpack also decodes it whole under its own name
				}
			} else if !f.IsExported() {
				continue
			}
		} else if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		info, err := b.build(f.Type, path+"."+f.Name)
		if err != nil {
			return err
		}
		g := &field{info: info, extra: extra}
		if b.json && hasOpt(opts, "string") {
			g.info = &tinfo{kind: tString}
		}
		if !inlined {
			ti.list = append(ti.list, g)
		}
		ti.add(name, g)
	}
	return nil
}

func (ti *tinfo) add(name string, f *field) {
	ti.fields[name] = f
	if ti.fold == nil {
		ti.fold = map[string]*field{}
	}
	if ti.foldNames == nil {
		ti.foldNames = map[string]string{}
	}
	folded := string(appendFolded(nil, []byte(name)))
	if _, ok := ti.fold[folded]; !ok {
		ti.fold[folded] = f
		ti.foldNames[folded] = name
	}
}

func (b *builder) tagOf(f reflect.StructField) (name, opts string) {
	var s string
	if b.json {
		s = f.Tag.Get("json")
	} else {
		s = f.Tag.Get("msgpack")
		if s == "" && b.tag != "" {
			s = f.Tag.Get(b.tag)
		}
	}
	name, opts, _ = strings.Cut(s, ",")
	return name, opts
}

func hasOpt(opts, o string) bool {
	for opts != "" {
		var cur string
		cur, opts, _ = strings.Cut(opts, ",")
		if cur == o {
			return true
		}
	}
	return false
}
