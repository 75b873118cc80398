package objstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Delta ops, see docs/objects.md. A delta rebuilds a target from a base
// (the canonical bytes of another object) and the base's id:
//
//	0x00             insert the 32 bytes of the base's id
//	0x01..0x7f n     insert the next n bytes literally
//	0x80 d l         copy l bytes of the base from offset cursor+d, where d is
//	                 a zigzag varint, l a uvarint and cursor the end of the
//	                 previous copy (0 at the start)
const (
	opBaseID  byte = 0x00
	opCopy    byte = 0x80
	maxInsert      = 0x7f
)

// minAnchor is the shortest msgpack token used to look for a match: shorter
// ones (small ints, one-letter keys) match everywhere and say nothing.
// minCopy is the shortest match worth a copy op (a copy costs 3-5 bytes).
const (
	minAnchor = 4
	minCopy   = 8
)

// makeDelta returns ops that rebuild target from base, whose id is baseID.
// Both are canonical msgpack. Matching is anchored on msgpack tokens (keys,
// strings, hashes) of the target found in the base and extended byte by
// byte both ways, which finds every unchanged run of a version's block list
// in one pass without a rolling hash.
func makeDelta(base []byte, baseID ID, target []byte) ([]byte, error) {
	btoks, err := tokenize(base, make([]token, 0, 1024))
	if err != nil {
		return nil, err
	}
	ttoks, err := tokenize(target, make([]token, 0, 1024))
	if err != nil {
		return nil, err
	}
	// Anchors are keyed by a hash of the token; a hit is confirmed by
	// comparing bytes, so a collision only costs a missed match.
	anchors := make(map[uint64]int32, len(btoks)/2)
	for _, t := range btoks {
		if t.end-t.off >= minAnchor {
			k := anchorHash(base[t.off:t.end])
			if _, dup := anchors[k]; !dup {
				anchors[k] = int32(t.off)
			}
		}
	}
	// Where the target holds the base's id (a version's first parent), a
	// literal insert of it becomes opBaseID.
	d := deltaWriter{out: make([]byte, 0, 256), target: target, baseID: baseID}
	for _, t := range ttoks {
		tok := target[t.off:t.end]
		if len(tok) == 34 && tok[0] == 0xc4 && tok[1] == 32 && bytes.Equal(tok[2:], baseID[:]) {
			d.idAt = append(d.idAt, t.off+2)
		}
	}
	emitted := 0 // target[:emitted] is covered by ops
	for _, t := range ttoks {
		if t.off < emitted {
			continue
		}
		tok := target[t.off:t.end]
		if len(tok) < minAnchor {
			continue
		}
		p32, ok := anchors[anchorHash(tok)]
		p := int(p32)
		if !ok || p+len(tok) > len(base) || !bytes.Equal(base[p:p+len(tok)], tok) {
			continue
		}
		ts, bs := t.off, p
		for ts > emitted && bs > 0 && target[ts-1] == base[bs-1] {
			ts--
			bs--
		}
		te, be := t.end, p+len(tok)
		for te < len(target) && be < len(base) && target[te] == base[be] {
			te++
			be++
		}
		if te-ts < minCopy {
			continue
		}
		d.insertRange(emitted, ts)
		d.copy(bs, te-ts)
		emitted = te
	}
	d.insertRange(emitted, len(target))
	return d.out, nil
}

// anchorHash is FNV-1a over a token's bytes.
func anchorHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

type deltaWriter struct {
	out    []byte
	cursor int
	target []byte
	baseID ID
	idAt   []int // offsets in target where the base's 32-byte id starts
}

// insertRange adds target[from:to] as literals, with opBaseID for every
// whole occurrence of the base's id recorded in idAt.
func (d *deltaWriter) insertRange(from, to int) {
	for _, at := range d.idAt {
		if at >= from && at+len(d.baseID) <= to {
			d.insert(d.target[from:at])
			d.out = append(d.out, opBaseID)
			from = at + len(d.baseID)
		}
	}
	d.insert(d.target[from:to])
}

func (d *deltaWriter) insert(lit []byte) {
	for len(lit) > 0 {
		n := min(len(lit), maxInsert)
		d.out = append(d.out, byte(n))
		d.out = append(d.out, lit[:n]...)
		lit = lit[n:]
	}
}

func (d *deltaWriter) copy(off, n int) {
	d.out = append(d.out, opCopy)
	d.out = binary.AppendVarint(d.out, int64(off-d.cursor))
	d.out = binary.AppendUvarint(d.out, uint64(n))
	d.cursor = off + n
}

// applyDelta rebuilds a target of size n from base, its id and ops. Every
// op is bounds-checked: a damaged delta gives ErrCorrupt, never a panic.
func applyDelta(base []byte, baseID ID, ops []byte, n int) ([]byte, error) {
	if n < 0 || n > MaxObject {
		return nil, fmt.Errorf("%w: delta target size %d", ErrCorrupt, n)
	}
	// n is what the stored value claims; reserve no more than a delta of
	// this size can plausibly rebuild (a version is mostly copies of its
	// base) and let appends grow the rest as ops actually produce it.
	out := make([]byte, 0, min(n, len(base)+len(ops)))
	cursor := 0
	for i := 0; i < len(ops); {
		op := ops[i]
		i++
		switch {
		case op == opBaseID:
			out = append(out, baseID[:]...)
		case op <= maxInsert:
			if i+int(op) > len(ops) {
				return nil, fmt.Errorf("%w: delta insert runs past the end", ErrCorrupt)
			}
			out = append(out, ops[i:i+int(op)]...)
			i += int(op)
		case op == opCopy:
			d, k := binary.Varint(ops[i:])
			if k <= 0 {
				return nil, fmt.Errorf("%w: delta copy offset", ErrCorrupt)
			}
			i += k
			l, k := binary.Uvarint(ops[i:])
			if k <= 0 {
				return nil, fmt.Errorf("%w: delta copy length", ErrCorrupt)
			}
			i += k
			off := int64(cursor) + d
			if off < 0 || l > uint64(len(base)) || off > int64(len(base))-int64(l) {
				return nil, fmt.Errorf("%w: delta copy outside its base", ErrCorrupt)
			}
			out = append(out, base[off:off+int64(l)]...)
			cursor = int(off) + int(l)
		default:
			return nil, fmt.Errorf("%w: unknown delta op 0x%02x", ErrCorrupt, op)
		}
		if len(out) > n {
			return nil, fmt.Errorf("%w: delta output longer than its recorded size", ErrCorrupt)
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("%w: delta output is %d bytes, recorded size %d", ErrCorrupt, len(out), n)
	}
	return out, nil
}

// firstParent returns the first element of the top-level "parents" array of
// a version's canonical bytes, without decoding the rest.
func firstParent(data []byte) (ID, bool) {
	toks, err := tokenize(data, make([]token, 0, 1024))
	if err != nil || len(toks) == 0 {
		return ID{}, false
	}
	if c := data[0]; (c < 0x80 || c > 0x8f) && c != 0xde && c != 0xdf {
		return ID{}, false // not a map
	}
	n, _ := containerLen(data, toks[0])
	pairs := n / 2
	i := 1
	for ; pairs > 0 && i < len(toks); pairs-- {
		key := data[toks[i].off:toks[i].end]
		i = skipValue(data, toks, i)
		if i >= len(toks) {
			return ID{}, false
		}
		if string(key) == "\xa7parents" {
			if n, ok := containerLen(data, toks[i]); !ok || n == 0 || i+1 >= len(toks) {
				return ID{}, false
			}
			p := data[toks[i+1].off:toks[i+1].end]
			if len(p) != 34 || p[0] != 0xc4 || p[1] != 32 {
				return ID{}, false
			}
			var id ID
			copy(id[:], p[2:])
			return id, true
		}
		i = skipValue(data, toks, i)
	}
	return ID{}, false
}

// containerLen returns the number of tokens a map (2 per entry) or array
// header announces; ok is false for scalars.
func containerLen(data []byte, t token) (int, bool) {
	c := data[t.off]
	switch {
	case c >= 0x80 && c <= 0x8f:
		return 2 * int(c&0x0f), true
	case c >= 0x90 && c <= 0x9f:
		return int(c & 0x0f), true
	case c == 0xdc:
		return int(binary.BigEndian.Uint16(data[t.off+1:])), true
	case c == 0xde:
		return 2 * int(binary.BigEndian.Uint16(data[t.off+1:])), true
	case c == 0xdd:
		return int(binary.BigEndian.Uint32(data[t.off+1:])), true
	case c == 0xdf:
		return 2 * int(binary.BigEndian.Uint32(data[t.off+1:])), true
	}
	return 0, false
}

// skipValue returns the index of the token after the value starting at
// toks[i] (a scalar, or a container with everything inside it).
func skipValue(data []byte, toks []token, i int) int {
	pending := 1
	for pending > 0 && i < len(toks) {
		pending--
		if n, ok := containerLen(data, toks[i]); ok {
			pending += n
		}
		i++
	}
	return i
}
