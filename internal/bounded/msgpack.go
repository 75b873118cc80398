package bounded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// Limits of one decode. They are part of every format that is decoded
// here (docs/objects.md, docs/protocol.md).
const (
	// MaxDepth bounds how deep arrays and maps (JSON: arrays and objects)
	// nest. FlowDocument's own nesting (4 levels of blocks, 8 of list
	// items) needs about 30.
	MaxDepth = 64
	// AllocPerByte and AllocBase bound the memory one decode may allocate:
	// AllocPerByte × len(input) + AllocBase bytes. The most compact valid
	// data Folio has, a list of empty list items ("{}", one byte each in
	// msgpack, three in JSON), takes about 176 bytes per input byte.
	AllocPerByte = 192
	AllocBase    = 64 << 10
	// MaxAlloc caps the memory of one decode whatever the input's size:
	// the largest valid values at Folio's limits (a 32 MiB object, a 1 MiB
	// frame) need well under it, while 192 bytes per byte of a 32 MiB pack
	// entry would be 6 GiB.
	MaxAlloc = 256 << 20
	// CustomPerByte is what a value decoded by its own decoder is charged
	// per byte; such decoders must allocate no more.
	CustomPerByte = 16
)

// ErrMalformed is wrapped by every *Error.
var ErrMalformed = errors.New("bounded: malformed input")

// Error says where and why input was refused.
type Error struct {
	Format string // "msgpack" or "JSON"
	Offset int    // byte offset of the token that failed
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at byte %d: %s", e.Format, e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrMalformed) true.
func (e *Error) Unwrap() error { return ErrMalformed }

func mpErr(off int, format string, args ...any) error {
	return &Error{Format: "msgpack", Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// token kinds of msgpack.
type mkind uint8

const (
	mNil mkind = iota
	mBool
	mInt
	mFloat
	mStr
	mBin
	mExt
	mArray
	mMap
)

// head reads the header of the msgpack value at data[i:]. For str, bin
// and ext, n is the payload length (ext: including its type byte) and the
// payload is data[p:p+n]; for arrays and maps n is the element or entry
// count and the elements start at p; for scalars the value is data[i:p].
// Every length is checked against the bytes that remain, and every count
// against the least bytes its elements need.
func head(data []byte, i int) (k mkind, n, p int, err error) {
	if i >= len(data) {
		return 0, 0, 0, mpErr(i, "truncated: a value was expected")
	}
	c := data[i]
	rest := len(data) - i
	need := func(h int) error {
		if rest < h {
			return mpErr(i, "truncated header of type byte 0x%02x", c)
		}
		return nil
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		return mInt, 0, i + 1, nil
	case c <= 0x8f:
		k, n, p = mMap, int(c&0x0f), i+1
	case c <= 0x9f:
		k, n, p = mArray, int(c&0x0f), i+1
	case c <= 0xbf:
		k, n, p = mStr, int(c&0x1f), i+1
	default:
		switch c {
		case 0xc0:
			return mNil, 0, i + 1, nil
		case 0xc2, 0xc3:
			return mBool, 0, i + 1, nil
		case 0xcc, 0xd0:
			k, p = mInt, i+2
		case 0xcd, 0xd1:
			k, p = mInt, i+3
		case 0xce, 0xd2:
			k, p = mInt, i+5
		case 0xcf, 0xd3:
			k, p = mInt, i+9
		case 0xca:
			k, p = mFloat, i+5
		case 0xcb:
			k, p = mFloat, i+9
		case 0xc4, 0xd9:
			if err := need(2); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mBin, int(data[i+1]), i+2
		case 0xc5, 0xda:
			if err := need(3); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mBin, int(binary.BigEndian.Uint16(data[i+1:])), i+3
		case 0xc6, 0xdb:
			if err := need(5); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mBin, int(binary.BigEndian.Uint32(data[i+1:])), i+5
		case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
			k, n, p = mExt, 1+1<<(c-0xd4), i+1
		case 0xc7:
			if err := need(2); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mExt, 1+int(data[i+1]), i+2
		case 0xc8:
			if err := need(3); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mExt, 1+int(binary.BigEndian.Uint16(data[i+1:])), i+3
		case 0xc9:
			if err := need(5); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mExt, 1+int(binary.BigEndian.Uint32(data[i+1:])), i+5
		case 0xdc, 0xde:
			if err := need(3); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mArray, int(binary.BigEndian.Uint16(data[i+1:])), i+3
			if c == 0xde {
				k = mMap
			}
		case 0xdd, 0xdf:
			if err := need(5); err != nil {
				return 0, 0, 0, err
			}
			k, n, p = mArray, int(binary.BigEndian.Uint32(data[i+1:])), i+5
			if c == 0xdf {
				k = mMap
			}
		default: // 0xc1 is never used
			return 0, 0, 0, mpErr(i, "unknown type byte 0xc1")
		}
		if c >= 0xd9 && c <= 0xdb {
			k = mStr
		}
	}
	if p > len(data) {
		return 0, 0, 0, mpErr(i, "truncated value of type byte 0x%02x", c)
	}
	left := len(data) - p
	switch k {
	case mStr, mBin, mExt:
		if n > left {
			return 0, 0, 0, mpErr(i, "%s of %d bytes, only %d remain", k, n, left)
		}
	case mArray:
		if n > left {
			return 0, 0, 0, mpErr(i, "array of %d elements, only %d bytes remain", n, left)
		}
	case mMap:
		if n > left/2 {
			return 0, 0, 0, mpErr(i, "map of %d entries, only %d bytes remain", n, left)
		}
	}
	return k, n, p, nil
}

func (k mkind) String() string {
	switch k {
	case mStr:
		return "string"
	case mBin:
		return "bin"
	case mExt:
		return "ext"
	case mArray:
		return "array"
	case mMap:
		return "map"
	}
	return "scalar"
}

// Validate checks that data is exactly one well-formed msgpack value
// within the limits above (every length and count fits in what remains,
// nesting at most MaxDepth, nothing after the value). It allocates
// nothing.
func Validate(data []byte) error {
	w := walker{data: data}
	if err := w.value(nil, 0); err != nil {
		return err
	}
	return w.end()
}

// Unmarshal decodes data, exactly one msgpack value, into v (a non-nil
// pointer) after checking it with Validate's rules and checking that
// decoding into v's type allocates at most AllocPerByte × len(data) +
// AllocBase bytes. A type that holds an interface is refused. Struct
// fields are named by their msgpack tags, as msgpack.Unmarshal does.
func Unmarshal(data []byte, v any) error { return UnmarshalTag(data, v, "") }

// UnmarshalTag is Unmarshal with a fallback struct tag for fields without
// a msgpack tag (msgpack.Decoder.SetCustomStructTag).
func UnmarshalTag(data []byte, v any, tag string) error { return unmarshal(data, v, tag, false) }

// UnmarshalTagStrict is UnmarshalTag refusing, at any depth, a map key
// that names no field of the struct it decodes into
// (msgpack.Decoder.DisallowUnknownFields).
func UnmarshalTagStrict(data []byte, v any, tag string) error { return unmarshal(data, v, tag, true) }

func unmarshal(data []byte, v any, tag string, strict bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("bounded: Unmarshal needs a non-nil pointer, got %T", v)
	}
	if err := check(data, rv.Type().Elem(), tag); err != nil {
		return err
	}
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	r := bytes.NewReader(data)
	dec.Reset(r)
	if tag != "" {
		dec.SetCustomStructTag(tag)
	}
	dec.DisallowUnknownFields(strict)
	if err := dec.Decode(v); err != nil {
		return err
	}
	if r.Len() > 0 { // Validate saw one value; the decoder must agree
		return mpErr(len(data)-r.Len(), "%d bytes after the value", r.Len())
	}
	return nil
}

// Check applies Unmarshal's checks to data for a decode into v's type (v
// is a pointer, possibly nil: (*T)(nil) will do) without decoding
// anything: data is one well-formed value within the limits that would
// decode into a T within the memory bound. It is what a reader that only
// passes data on (a pack's first pass) needs, at a fraction of a decode's
// cost; whether every field has the right type is left to the decode.
func Check(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("bounded: Check needs a pointer type, got %T", v)
	}
	return check(data, t.Elem(), "")
}

func check(data []byte, t reflect.Type, tag string) error {
	ti, err := typeInfo(t, tag, false)
	if err != nil {
		return err
	}
	w := walker{data: data}
	if err := w.value(ti, 0); err != nil {
		return err
	}
	if err := w.end(); err != nil {
		return err
	}
	if limit := Budget(len(data)); w.cost > limit {
		return mpErr(0, "decoding %d bytes into %s would allocate about %d bytes, more than the %d allowed",
			len(data), t, w.cost, limit)
	}
	return nil
}

// Budget is the most memory a decode of n input bytes may allocate.
func Budget(n int) int64 { return min(AllocPerByte*int64(n)+AllocBase, MaxAlloc) }

// walker walks msgpack data token by token, checking it, and adds up what
// decoding it into a type would allocate.
type walker struct {
	data []byte
	pos  int
	cost int64 // bytes decoding allocates, estimated from above
}

func (w *walker) end() error {
	if w.pos != len(w.data) {
		return mpErr(w.pos, "%d bytes after the value", len(w.data)-w.pos)
	}
	return nil
}

// value walks one value at w.pos, decoded into t (nil: skipped).
func (w *walker) value(t *tinfo, depth int) error {
	start := w.pos
	k, n, p, err := head(w.data, w.pos)
	if err != nil {
		return err
	}
	if t != nil && t.kind == tCustom {
		if err := w.value(nil, depth); err != nil {
			return err
		}
		w.cost += CustomPerByte*int64(w.pos-start) + 64
		return nil
	}
	if t != nil && t.kind == tPtr && k != mNil {
		w.cost += t.size
		return w.value(t.elem, depth)
	}
	switch k {
	case mNil, mBool, mInt, mFloat:
		w.pos = p
		return nil
	case mStr, mBin, mExt:
		w.pos = p + n
		if t != nil && (t.kind == tString || t.kind == tBytes) && k != mExt {
			w.cost += 2 * int64(n) // the decoder's buffer and the copy
		}
		return nil
	}
	if depth >= MaxDepth {
		return mpErr(start, "%s nested more than %d deep", k, MaxDepth)
	}
	w.pos = p
	if t == nil {
		t = skip
	}
	switch k {
	case mArray:
		switch t.kind {
		case tSlice:
			// msgpack makes the n elements, then appends them to the
			// empty slice: twice n elements.
			w.cost += 2 * int64(n) * t.size
			for range n {
				if err := w.value(t.elem, depth+1); err != nil {
					return err
				}
			}
			return nil
		case tBytes: // msgpack refuses an array for []byte; charge it anyway
			w.cost += int64(n)
		case tArray:
			for i := range n {
				e := t.elem
				if i >= t.n {
					e = nil
				}
				if err := w.value(e, depth+1); err != nil {
					return err
				}
			}
			return nil
		case tStruct:
			// msgpack first tries the array as a map, making an error.
			w.cost += 64
			if n == len(t.list) { // msgpack decodes an array into a struct field by field
				for _, f := range t.list {
					w.cost += f.extra
					if err := w.value(f.info, depth+1); err != nil {
						return err
					}
				}
				return nil
			}
		}
		for range n {
			if err := w.value(nil, depth+1); err != nil {
				return err
			}
		}
		return nil
	default: // mMap
		switch t.kind {
		case tStruct:
			for range n {
				kk, kn, kp, err := head(w.data, w.pos)
				if err != nil {
					return err
				}
				var f *field
				if kk == mStr || kk == mBin {
					f = t.fields[string(w.data[kp:kp+kn])] // no allocation: a map index by a converted []byte
					w.pos = kp + kn
				} else if err := w.value(nil, depth+1); err != nil {
					return err
				}
				if f == nil {
					if err := w.value(nil, depth+1); err != nil {
						return err
					}
					continue
				}
				w.cost += f.extra
				if err := w.value(f.info, depth+1); err != nil {
					return err
				}
			}
			return nil
		case tMap:
			w.cost += int64(n)*t.size + 256
			for range n {
				if err := w.value(t.key, depth+1); err != nil {
					return err
				}
				if err := w.value(t.elem, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		for range 2 * n {
			if err := w.value(nil, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
}
