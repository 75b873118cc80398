package objstore

import (
	"bytes"
	"testing"

	"github.com/foliodev/folio/internal/kv"
)

// FuzzDelta checks that makeDelta/applyDelta round-trip any pair of
// msgpack values and that applying arbitrary ops never panics.
func FuzzDelta(f *testing.F) {
	v1 := &Version{Doc: "d", Seq: 1, Label: "v1.r0", Blocks: []BlockEntry{{ID: "a", Content: ID{1}}, {ID: "b", Content: ID{2}}}}
	d1, id1, _ := v1.Encode()
	v2 := &Version{Doc: "d", Seq: 2, Label: "v1.r1", Parents: []ID{id1}, Blocks: []BlockEntry{{ID: "a", Content: ID{3}}, {ID: "b", Content: ID{2}}}}
	d2, _, _ := v2.Encode()
	f.Add(d1, d2, []byte{0x80, 0x02, 0x05, 0x03, 'a', 'b', 'c', 0x00})
	f.Fuzz(func(t *testing.T, base, target, ops []byte) {
		var id ID
		copy(id[:], base)
		if out, err := applyDelta(base, id, ops, len(target)); err == nil && len(out) != len(target) {
			t.Fatalf("applyDelta returned %d bytes, want %d", len(out), len(target))
		}
		parseDeltaHeader(append([]byte{codecDelta, byte(KindVersion)}, ops...))
		parseStored(ops)
		firstParent(target)
		var c compactTxn
		if kv.Unmarshal(ops, &c) == nil {
			c.expand(v2, v1)
		}
		d, err := makeDelta(base, id, target)
		if err != nil {
			return // not msgpack
		}
		got, err := applyDelta(base, id, d, len(target))
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}
