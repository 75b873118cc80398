package objstore

import (
	"encoding/binary"
	"fmt"
)

// The delta codec works on canonical msgpack bytes without decoding them
// into Go values: it only needs to know where each value starts and ends.
// token is one scalar value, or the header of a map or array (whose
// elements follow as further tokens).
type token struct {
	off, end int // the token's bytes: data[off:end]
}

// tokenize splits canonical msgpack data into its tokens in order. It fails
// on truncated or unknown encodings, so it doubles as a structure check.
func tokenize(data []byte, out []token) ([]token, error) {
	for i := 0; i < len(data); {
		n, err := tokenLen(data[i:])
		if err != nil {
			return nil, fmt.Errorf("%w: msgpack at byte %d: %v", ErrCorrupt, i, err)
		}
		out = append(out, token{i, i + n})
		i += n
	}
	return out, nil
}

// tokenLen returns the length of the token at the start of b: a scalar with
// its payload, or just a container's header.
func tokenLen(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, errShort
	}
	c := b[0]
	var n int
	switch {
	case c <= 0x7f, c >= 0xe0: // fixint
		return 1, nil
	case c >= 0x80 && c <= 0x9f: // fixmap, fixarray headers
		return 1, nil
	case c >= 0xa0 && c <= 0xbf: // fixstr
		n = 1 + int(c&0x1f)
	default:
		switch c {
		case 0xc0, 0xc2, 0xc3: // nil, false, true
			return 1, nil
		case 0xc4, 0xd9: // bin8, str8
			if len(b) < 2 {
				return 0, errShort
			}
			n = 2 + int(b[1])
		case 0xc5, 0xda: // bin16, str16
			if len(b) < 3 {
				return 0, errShort
			}
			n = 3 + int(binary.BigEndian.Uint16(b[1:]))
		case 0xc6, 0xdb: // bin32, str32
			if len(b) < 5 {
				return 0, errShort
			}
			n = 5 + int(binary.BigEndian.Uint32(b[1:]))
		case 0xc7: // ext8
			if len(b) < 2 {
				return 0, errShort
			}
			n = 3 + int(b[1])
		case 0xc8: // ext16
			if len(b) < 3 {
				return 0, errShort
			}
			n = 4 + int(binary.BigEndian.Uint16(b[1:]))
		case 0xc9: // ext32
			if len(b) < 5 {
				return 0, errShort
			}
			n = 6 + int(binary.BigEndian.Uint32(b[1:]))
		case 0xca, 0xce, 0xd2: // float32, uint32, int32
			n = 5
		case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
			n = 9
		case 0xcc, 0xd0: // uint8, int8
			n = 2
		case 0xcd, 0xd1: // uint16, int16
			n = 3
		case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
			n = 2 + 1<<(c-0xd4)
		case 0xdc, 0xde: // array16, map16 headers
			n = 3
		case 0xdd, 0xdf: // array32, map32 headers
			n = 5
		default: // 0xc1 is never used
			return 0, fmt.Errorf("unknown type byte 0x%02x", c)
		}
	}
	if n > len(b) || n < 0 {
		return 0, errShort
	}
	return n, nil
}

var errShort = fmt.Errorf("truncated value")
