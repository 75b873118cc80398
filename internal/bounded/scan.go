package bounded

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
)

// MapString returns the string value of key in the msgpack map at the
// top of data, scanning entries in order and validating each one it
// passes. It stops at the first entry it cannot read: a frame broken after
// its id still yields the id. Values longer than maxLen are not returned.
// It allocates only the returned string.
func MapString(data []byte, key string, maxLen int) (string, bool) {
	k, n, p, err := head(data, 0)
	if err != nil || k != mMap {
		return "", false
	}
	w := walker{data: data, pos: p}
	for range n {
		kk, kn, kp, err := head(data, w.pos)
		if err != nil {
			return "", false
		}
		isKey := (kk == mStr || kk == mBin) && string(data[kp:kp+kn]) == key
		if err := w.value(nil, 1); err != nil {
			return "", false
		}
		if isKey {
			vk, vn, vp, err := head(data, w.pos)
			if err != nil || vk != mStr || vn > maxLen {
				return "", false
			}
			return string(data[vp : vp+vn]), true
		}
		if err := w.value(nil, 1); err != nil {
			return "", false
		}
	}
	return "", false
}

// AppendJSON appends the JSON form of the msgpack value data (which must
// pass Validate) to dst: maps with string keys become objects in the same
// key order, arrays arrays, str strings, bin lowercase hex strings (in
// Folio's data every bin is an object hash or a fingerprint, which JSON
// writes as 64 hex digits everywhere), numbers numbers, nil null. Maps with other
// keys, ext values and non-finite floats have no JSON form and are an
// error. It never decodes into Go values: passing data through costs about
// its own size.
func AppendJSON(dst, data []byte) ([]byte, error) {
	w := walker{data: data}
	if err := w.value(nil, 0); err != nil {
		return dst, err
	}
	if err := w.end(); err != nil {
		return dst, err
	}
	out, _, err := appendJSON(dst, data, 0)
	return out, err
}

// appendJSON converts the value at data[i:], already validated, and
// returns the position after it.
func appendJSON(dst, data []byte, i int) ([]byte, int, error) {
	k, n, p, _ := head(data, i)
	c := data[i]
	switch k {
	case mNil:
		return append(dst, "null"...), p, nil
	case mBool:
		return strconv.AppendBool(dst, c == 0xc3), p, nil
	case mInt:
		switch {
		case c <= 0x7f:
			return strconv.AppendInt(dst, int64(c), 10), p, nil
		case c >= 0xe0:
			return strconv.AppendInt(dst, int64(int8(c)), 10), p, nil
		}
		b := data[i+1 : p]
		switch c {
		case 0xcc:
			return strconv.AppendUint(dst, uint64(b[0]), 10), p, nil
		case 0xcd:
			return strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(b)), 10), p, nil
		case 0xce:
			return strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(b)), 10), p, nil
		case 0xcf:
			return strconv.AppendUint(dst, binary.BigEndian.Uint64(b), 10), p, nil
		case 0xd0:
			return strconv.AppendInt(dst, int64(int8(b[0])), 10), p, nil
		case 0xd1:
			return strconv.AppendInt(dst, int64(int16(binary.BigEndian.Uint16(b))), 10), p, nil
		case 0xd2:
			return strconv.AppendInt(dst, int64(int32(binary.BigEndian.Uint32(b))), 10), p, nil
		default: // 0xd3
			return strconv.AppendInt(dst, int64(binary.BigEndian.Uint64(b)), 10), p, nil
		}
	case mFloat:
		var f float64
		bits := 64
		if c == 0xca {
			f, bits = float64(math.Float32frombits(binary.BigEndian.Uint32(data[i+1:]))), 32
		} else {
			f = math.Float64frombits(binary.BigEndian.Uint64(data[i+1:]))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return dst, p, mpErr(i, "%v has no JSON form", f)
		}
		return strconv.AppendFloat(dst, f, 'g', -1, bits), p, nil
	case mStr:
		b, err := json.Marshal(string(data[p : p+n]))
		if err != nil {
			return dst, p, err
		}
		return append(dst, b...), p + n, nil
	case mBin:
		dst = append(dst, '"')
		dst = hex.AppendEncode(dst, data[p:p+n])
		return append(dst, '"'), p + n, nil
	case mExt:
		return dst, p, mpErr(i, "an ext value has no JSON form")
	case mArray:
		dst = append(dst, '[')
		var err error
		for j := range n {
			if j > 0 {
				dst = append(dst, ',')
			}
			if dst, p, err = appendJSON(dst, data, p); err != nil {
				return dst, p, err
			}
		}
		return append(dst, ']'), p, nil
	}
	dst = append(dst, '{')
	for j := range n {
		if j > 0 {
			dst = append(dst, ',')
		}
		kk, _, _, _ := head(data, p)
		if kk != mStr {
			return dst, p, mpErr(p, "a map key that is not a string has no JSON form")
		}
		var err error
		if dst, p, err = appendJSON(dst, data, p); err != nil {
			return dst, p, err
		}
		dst = append(dst, ':')
		if dst, p, err = appendJSON(dst, data, p); err != nil {
			return dst, p, err
		}
	}
	return append(dst, '}'), p, nil
}

// MapEntries walks data, which must be exactly one msgpack map, checking
// it as Validate does (every length within what remains, nesting within
// MaxDepth, nothing after the map), and calls fn with each entry's key
// and the bytes of its value, in order, without decoding or copying
// anything; the slices alias data. Keys must be strings. fn returning
// false stops the walk (MapEntries then returns nil without checking the
// rest). It is for hand-written decoders of hot, small messages; the
// values are read with String, Uint and Int.
func MapEntries(data []byte, fn func(key, val []byte) bool) error {
	k, n, p, err := head(data, 0)
	if err != nil {
		return err
	}
	if k != mMap {
		return mpErr(0, "a map was expected, found a %s", k)
	}
	w := walker{data: data, pos: p}
	for range n {
		kk, kn, kp, err := head(data, w.pos)
		if err != nil {
			return err
		}
		if kk != mStr {
			return mpErr(w.pos, "a map key that is a %s, not a string", kk)
		}
		key := data[kp : kp+kn]
		w.pos = kp + kn
		start := w.pos
		if err := w.value(nil, 1); err != nil {
			return err
		}
		if !fn(key, data[start:w.pos]) {
			return nil
		}
	}
	return w.end()
}

// String returns the msgpack str val (one whole value, as MapEntries
// gives it); ok is false for any other value.
func String(val []byte) (string, bool) {
	k, n, p, err := head(val, 0)
	if err != nil || k != mStr || p+n != len(val) {
		return "", false
	}
	return string(val[p : p+n]), true
}

// Uint returns the msgpack integer val when it is one and not negative.
func Uint(val []byte) (uint64, bool) {
	if len(val) == 0 {
		return 0, false
	}
	c, b := val[0], val[1:]
	switch {
	case c <= 0x7f && len(val) == 1:
		return uint64(c), true
	case c == 0xcc && len(b) == 1:
		return uint64(b[0]), true
	case c == 0xcd && len(b) == 2:
		return uint64(binary.BigEndian.Uint16(b)), true
	case c == 0xce && len(b) == 4:
		return uint64(binary.BigEndian.Uint32(b)), true
	case c == 0xcf && len(b) == 8:
		return binary.BigEndian.Uint64(b), true
	case c >= 0xd0 && c <= 0xd3:
		if i, ok := Int(val); ok && i >= 0 {
			return uint64(i), true
		}
	}
	return 0, false
}

// Int returns the msgpack integer val when it fits an int64.
func Int(val []byte) (int64, bool) {
	if len(val) == 0 {
		return 0, false
	}
	c, b := val[0], val[1:]
	switch {
	case (c <= 0x7f || c >= 0xe0) && len(val) == 1:
		return int64(int8(c)), true
	case c == 0xd0 && len(b) == 1:
		return int64(int8(b[0])), true
	case c == 0xd1 && len(b) == 2:
		return int64(int16(binary.BigEndian.Uint16(b))), true
	case c == 0xd2 && len(b) == 4:
		return int64(int32(binary.BigEndian.Uint32(b))), true
	case c == 0xd3 && len(b) == 8:
		return int64(binary.BigEndian.Uint64(b)), true
	case c >= 0xcc && c <= 0xcf:
		if u, ok := Uint(val); ok && u <= 1<<63-1 {
			return int64(u), true
		}
	}
	return 0, false
}
