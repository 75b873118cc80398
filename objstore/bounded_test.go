package objstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
)

// The decoders of objects that arrive from disk and from packs, fuzzed and
// held to the memory bound of package bounded.

// craftedVersion is 13 bytes that claim a version with 2^32-1 blocks:
// {"blocks": array32 0xffffffff}. Decoded without bounds it asks for
// 2 × 2^32 × 48 bytes.
var craftedVersion = []byte{0x81, 0xa6, 'b', 'l', 'o', 'c', 'k', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}

// samples returns a content object, a version v1, its child v2 and v2's
// transaction, with their canonical bytes.
func samples() (content []byte, v1, v2 *Version, t2 *Txn, d1, d2, dt []byte) {
	blk := flowdoc.Block{Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "Hello, 世界", Marks: []flowdoc.Mark{flowdoc.Bold}}}}
	content = flowdoc.EncodeContent(blk)
	cid := Sum(KindContent, content)
	v1 = &Version{Doc: "d", Seq: 1, Label: "v1.r0", Kind: KindCreate, Author: "author-a", Time: 1767225600000,
		Attrs: flowdoc.Attributes{Title: "Notes", Tags: []string{"go"}}}
	for i := range 40 {
		v1.Blocks = append(v1.Blocks, BlockEntry{ID: "b" + string(rune('A'+i)), Content: cid})
	}
	d1, id1, _ := v1.Encode()
	t2 = &Txn{Doc: "d", Actor: "author-a", Kind: KindCheckpoint, Reason: ReasonIdle, BaseVersion: id1, Time: 1767225630000,
		Events: []TxnEvent{{Op: EventModify, BlockID: "bA", Before: cid, After: ID{7}}, {Op: EventAdd, BlockID: "new", After: ID{8}}}}
	dt, tid, _ := t2.Encode()
	v2 = cloneVersion(v1)
	v2.Seq, v2.Label, v2.Kind, v2.Reason, v2.Parents, v2.Txn, v2.Time = 2, "v1.r1", KindCheckpoint, ReasonIdle, []ID{id1}, tid, t2.Time
	v2.Blocks[0].Content = ID{7}
	v2.Blocks = append(v2.Blocks, BlockEntry{ID: "new", Content: ID{8}})
	d2, _, _ = v2.Encode()
	return
}

// zstdClaiming is a zstd frame header that claims size bytes of content
// and then holds one empty raw block.
func zstdClaiming(size uint64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic; FCS 8 bytes, single segment
	b = binary.LittleEndian.AppendUint64(b, size)
	return append(b, 0x01, 0x00, 0x00) // last block, raw, 0 bytes
}

// deltaValue is the stored form of a delta against base whose rebuilt
// size is size.
func deltaValue(base ID, size int, ops []byte) []byte {
	out := []byte{codecDelta, byte(KindVersion)}
	out = binary.AppendUvarint(out, 1)
	out = append(out, base[:refLen]...)
	out = binary.AppendUvarint(out, uint64(size))
	return append(out, ops...)
}

func objectTarget() boundedtest.Target {
	content, _, _, _, d1, d2, dt := samples()
	seeds := [][]byte{content, d1, d2, dt, craftedVersion,
		{0x81, 0xa6, 'e', 'v', 'e', 'n', 't', 's', 0xdc, 0xff, 0xff},
		{0x81, 0xa7, 'p', 'a', 'r', 'e', 'n', 't', 's', 0xdd, 0x00, 0x10, 0x00, 0x00},
		{0x81, 0xa1, 'r', 0xdd, 0x7f, 0xff, 0xff, 0xff},
		{0x81, 0xa5, 'a', 't', 't', 'r', 's', 0x81, 0xa4, 't', 'a', 'g', 's', 0xdb, 0xff, 0xff, 0xff, 0xff},
		// 4,000 one-byte blocks, each a 48-byte BlockEntry.
		append([]byte{0x81, 0xa6, 'b', 'l', 'o', 'c', 'k', 's', 0xdc, 0x0f, 0xa0}, bytes.Repeat([]byte{0x80}, 4000)...),
		// An asset whose data claims 4 GiB.
		{0x82, 0xa4, 'm', 'i', 'm', 'e', 0xa9, 'i', 'm', 'a', 'g', 'e', '/', 'p', 'n', 'g', 0xa4, 'd', 'a', 't', 'a', 0xc6, 0xff, 0xff, 0xff, 0xff},
		// A media block naming an asset.
		[]byte("\x82\xa1t\xa5media\xa1a\x82\xa4kind\xa5image\xa3src\xd9Lfolio-asset:" + strings.Repeat("ab", 32)),
	}
	seeds = append(seeds, boundedtest.Hostile("blocks")...)
	seeds = append(seeds, boundedtest.Hostile("events")...)
	seeds = append(seeds, boundedtest.Hostile("r")...)
	return boundedtest.Target{Name: "FuzzDecodeObject", Seeds: seeds, Decoders: []boundedtest.Decoder{
		{Name: "content", Fn: func(data []byte) { DecodeContent(data) }},
		{Name: "version", Fn: func(data []byte) { References(KindVersion, data) }},
		{Name: "txn", Fn: func(data []byte) { References(KindTxn, data) }},
		{Name: "content refs", Fn: func(data []byte) { References(KindContent, data) }},
		{Name: "asset", Fn: func(data []byte) { CheckAsset(data) }},
		{Name: "parents", Fn: func(data []byte) { versionParents(data) }},
	}}
}

// FuzzDecodeObject decodes arbitrary bytes as each kind of object.
func FuzzDecodeObject(f *testing.F) { boundedtest.Fuzz(f, objectTarget()) }

func storedTarget() boundedtest.Target {
	content, _, _, _, d1, d2, dt := samples()
	seeds := [][]byte{EncodeStored(KindContent, content), EncodeStored(KindVersion, d1), EncodeStored(KindVersion, d2),
		EncodeStored(KindTxn, dt), append([]byte{codecRaw, byte(KindVersion)}, craftedVersion...),
		append([]byte{codecZstd, byte(KindVersion)}, zstdClaiming(1<<40)...),
		append([]byte{codecZstd, byte(KindVersion)}, zstdClaiming(MaxObject)...),
		{codecZstd, byte(KindContent)}, {}, {9, 1, 2}}
	return boundedtest.Target{Name: "FuzzDecodeStored", Seeds: seeds,
		Decoders: []boundedtest.Decoder{{Name: "stored", Fn: func(v []byte) {
			if k, data, err := DecodeStored(v); err == nil {
				References(k, data)
			}
			parseStored(v)
		}}},
		// zstd payloads legitimately expand; the decoder may reserve what
		// the compressed bytes can expand to (32768× at most), never more
		// than MaxObject.
		Expands: func(v []byte) int {
			if len(v) < 2 || v[0] != codecZstd {
				return 0
			}
			return min(32768*len(v), MaxObject)
		}}
}

// FuzzDecodeStored decodes arbitrary bytes as a stored value (codecs 0
// and 1 decode alone; 2 and 3 are parsed).
func FuzzDecodeStored(f *testing.F) { boundedtest.Fuzz(f, storedTarget()) }

func deltaTarget() boundedtest.Target {
	_, _, _, _, d1, d2, _ := samples()
	id1 := Sum(KindVersion, d1)
	ops, err := makeDelta(d1, id1, d2)
	if err != nil {
		panic(err)
	}
	copyAll := binary.AppendUvarint(binary.AppendVarint([]byte{opCopy}, 0), uint64(len(d1)))
	again := binary.AppendUvarint(binary.AppendVarint([]byte{opCopy}, -int64(len(d1))), uint64(len(d1)))
	seeds := [][]byte{deltaValue(id1, len(d2), ops),
		deltaValue(id1, MaxObject, nil),
		deltaValue(id1, MaxObject, append(copyAll, bytes.Repeat(again, 64)...)),
		deltaValue(id1, 1<<40, ops),
		{codecDelta, byte(KindVersion), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}}
	return boundedtest.Target{Name: "FuzzDeltaValue", Seeds: seeds,
		Decoders: []boundedtest.Decoder{{Name: "delta", Fn: func(v []byte) {
			if h, err := parseDeltaHeader(v); err == nil {
				applyDelta(d1, id1, h.ops, h.size)
			}
		}}},
		// A delta legitimately rebuilds more than its own size: what its
		// ops produce from the base (however long the value says the
		// result is).
		Expands: func(v []byte) int {
			h, err := parseDeltaHeader(v)
			if err != nil {
				return 0
			}
			return produced(h.ops, len(d1))
		}}
}

// produced is how many bytes delta ops append before the first invalid
// one, against a base of n bytes.
func produced(ops []byte, n int) int {
	total := 0
	for i := 0; i < len(ops); {
		op := ops[i]
		i++
		switch {
		case op == opBaseID:
			total += len(ID{})
		case op <= maxInsert:
			total += int(op)
			i += int(op)
		case op == opCopy:
			_, k := binary.Varint(ops[i:])
			if k <= 0 {
				return total
			}
			i += k
			l, k := binary.Uvarint(ops[i:])
			if k <= 0 || l > uint64(n) {
				return total
			}
			i += k
			total += int(l)
		default:
			return total
		}
	}
	return total
}

// FuzzDeltaValue applies arbitrary stored delta values to a version.
func FuzzDeltaValue(f *testing.F) { boundedtest.Fuzz(f, deltaTarget()) }

func compactTarget() boundedtest.Target {
	_, v1, v2, t2, _, _, _ := samples()
	c := compactTxnOf(t2, v2, v1)
	enc, err := kv.Marshal(&c)
	if err != nil {
		panic(err)
	}
	seeds := [][]byte{enc,
		{0x9b, 0x00, 0xa0, 0xa0, 0xa0, 0xa0, 0xc0, 0xc0, 0xa0, 0xa0, 0x00, 0xdd, 0xff, 0xff, 0xff, 0xff},
		append([]byte{0x9b, 0x00, 0xa0, 0xa0, 0xa0, 0xa0, 0xc0, 0xc0, 0xa0, 0xa0, 0x00, 0xdc, 0x0f, 0xa0}, bytes.Repeat([]byte{0xc0}, 4000)...),
		append([]byte{0x9b, 0x00, 0xa0, 0xa0, 0xa0, 0xa0, 0xc0, 0xc0, 0xa0, 0xa0, 0x00, 0xdc, 0x03, 0xe8},
			bytes.Repeat([]byte{0x99, 0x01, 0xa0, 0x01, 0x00, 0xa0, 0xc2, 0xc0, 0xc3, 0xc0}, 1000)...),
	}
	return boundedtest.Target{Name: "FuzzCompactTxn", Seeds: seeds,
		Decoders: []boundedtest.Decoder{{Name: "compact", Fn: func(data []byte) {
			var c compactTxn
			if kv.Unmarshal(data, &c) == nil {
				if t, err := c.expand(v2, v1); err == nil {
					kv.Marshal(t)
				}
			}
		}}}}
}

// FuzzCompactTxn decodes arbitrary bytes as a transaction stored by
// reference (codec 3) and expands it against a version and its parent.
func FuzzCompactTxn(f *testing.F) { boundedtest.Fuzz(f, compactTarget()) }

// storeTarget reads arbitrary stored values through a real Store: each
// input is stored under one id, next to a version it may be a delta of or
// a compact transaction of, and read back every way.
func storeTarget(tb testing.TB) boundedtest.Target {
	db, err := kv.Open(tb.TempDir(), kv.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	content, v1, v2, _, d1, d2, dt := samples()
	st := New(db)
	b := db.NewBatch()
	st.Put(b, KindContent, content)
	id1, _ := st.PutVersion(b, v1)
	if err := db.Apply(b, kv.NoSync); err != nil {
		tb.Fatal(err)
	}
	b.Close()
	target := Sum(KindVersion, d2) // where each input is stored
	ops, _ := makeDelta(d1, id1, d2)
	var c compactTxn
	{
		_, _, _, t2, _, _, _ := samples()
		c = compactTxnOf(t2, v2, v1)
	}
	compact, _ := kv.Marshal(&c)
	seeds := [][]byte{EncodeStored(KindVersion, d2), deltaValue(id1, len(d2), ops), deltaValue(id1, MaxObject, ops),
		append(append([]byte{codecTxnOf, byte(KindTxn)}, id1[:refLen]...), compact...),
		append(append([]byte{codecTxnOf, byte(KindTxn)}, id1[:refLen]...), 0x9b, 0x00, 0xa0, 0xa0, 0xa0, 0xa0, 0xc0, 0xc0, 0xa0, 0xa0, 0x00, 0xdd, 0xff, 0xff, 0xff, 0xff),
		append([]byte{codecRaw, byte(KindVersion)}, craftedVersion...),
		append([]byte{codecZstd, byte(KindVersion)}, zstdClaiming(1<<40)...),
		EncodeStored(KindTxn, dt)}
	read := func(data []byte) {
		s := New(db)
		s.Get(target)
		s.Verify(target)
		s.GetVersion(target)
		s.GetTxn(target)
	}
	return boundedtest.Target{Name: "FuzzStoredValue", Seeds: seeds,
		Prepare: func(data []byte) {
			if err := db.Set(Key(target), data, kv.NoSync); err != nil {
				tb.Fatal(err)
			}
		},
		Decoders: []boundedtest.Decoder{{Name: "read", Fn: read}},
		Expands: func(v []byte) int {
			if len(v) < 2 || v[0] == codecRaw || v[0] == codecTxnOf {
				return 0
			}
			return min(32768*len(v), MaxObject)
		},
		// A read opens an iterator for reference prefixes.
		Overhead: 256 << 10,
	}
}

// FuzzStoredValue reads arbitrary stored values through a Store.
func FuzzStoredValue(f *testing.F) { boundedtest.Fuzz(f, storeTarget(f)) }

// TestDecodeMemory decodes every corpus entry of the object decoders and
// checks what each allocates against the bound of package bounded.
func TestDecodeMemory(t *testing.T) {
	boundedtest.CheckMemory(t, objectTarget(), storedTarget(), deltaTarget(), compactTarget(), storeTarget(t))
}

// TestCraftedStoredValues: values crafted to claim more than they hold, in
// every codec, read through a Store: every read is an ErrCorrupt error
// naming the problem; nothing panics or allocates what the value claims.
func TestCraftedStoredValues(t *testing.T) {
	db, err := kv.Open(t.TempDir(), kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, v1, _, _, d1, d2, _ := samples()
	st := New(db)
	b := db.NewBatch()
	id1, _ := st.PutVersion(b, v1)
	if err := db.Apply(b, kv.NoSync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	ops, _ := makeDelta(d1, id1, d2)
	cases := []struct {
		name, want string
		value      []byte
	}{
		{"raw version claiming 2^32 blocks", "array of 4294967295 elements", append([]byte{codecRaw, byte(KindVersion)}, craftedVersion...)},
		{"zstd frame claiming 1 TiB", "zstd frame claims", append([]byte{codecZstd, byte(KindVersion)}, zstdClaiming(1<<40)...)},
		{"delta claiming 1 TiB", "delta size", deltaValue(id1, 1<<40, ops)},
		{"delta claiming more than it rebuilds", "delta output is", deltaValue(id1, MaxObject, ops)},
		{"compact txn claiming 2^32 events", "array of 4294967295 elements",
			append(append([]byte{codecTxnOf, byte(KindTxn)}, id1[:refLen]...), 0x9b, 0x00, 0xa0, 0xa0, 0xa0, 0xa0, 0xc0, 0xc0, 0xa0, 0xa0, 0x00, 0xdd, 0xff, 0xff, 0xff, 0xff)},
	}
	for i, c := range cases {
		id := ID{0xee, byte(i)}
		if err := db.Set(Key(id), c.value, kv.NoSync); err != nil {
			t.Fatal(err)
		}
		s := New(db)
		got := boundedtest.Allocated(func() {
			_, _, err = s.Get(id)
			if err == nil {
				_, err = s.GetVersion(id)
			}
		})
		if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: read: %v; want ErrCorrupt saying %q", c.name, err, c.want)
		}
		if got > 1<<20 {
			t.Errorf("%s: the read allocated %d bytes", c.name, got)
		}
		if _, err := s.Verify(id); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Verify: %v", c.name, err)
		}
		if _, err := s.GetVersion(id); err == nil {
			t.Errorf("%s: GetVersion succeeded", c.name)
		}
		if _, err := s.GetTxn(id); err == nil {
			t.Errorf("%s: GetTxn succeeded", c.name)
		}
	}
	// Put refuses an object that a reader would refuse to rebuild.
	big := make([]byte, MaxObject+1)
	b = db.NewBatch()
	defer b.Close()
	if _, err := st.Put(b, KindContent, big); err == nil || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Put of %d bytes: %v", len(big), err)
	}
}

// TestCraftedVersionDecode: the 13-byte version claiming 2^32-1 blocks is
// ErrCorrupt without allocating what it claims (before bounded decoding it
// asked the runtime for 192 GiB and the process died).
func TestCraftedVersionDecode(t *testing.T) {
	DecodeVersion(craftedVersion) // warm the codec's caches
	var err error
	got := boundedtest.Allocated(func() { _, err = DecodeVersion(craftedVersion) })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decode: %v, want ErrCorrupt", err)
	}
	if got > 4<<10 {
		t.Fatalf("decoding the 13-byte version allocated %d bytes", got)
	}
	t.Logf("13-byte version: %q, %d bytes allocated", err, got)
}
