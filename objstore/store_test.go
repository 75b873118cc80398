package objstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

func openDB(tb testing.TB) *kv.DB {
	tb.Helper()
	db, err := kv.Open(tb.TempDir(), kv.Options{Create: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func commit(tb testing.TB, db *kv.DB, b *kv.Batch) {
	tb.Helper()
	if err := db.Apply(b, kv.NoSync); err != nil {
		tb.Fatal(err)
	}
	b.Close()
}

// history writes a linear history of n versions of a doc of nblocks
// blocks, each changing one block, with their txns; one batch per version
// unless perBatch > 1. It returns the version and txn ids, oldest first.
type history struct {
	versions []objstore.ID
	txns     []objstore.ID
	vs       []*objstore.Version
	ts       []*objstore.Txn
	contents map[objstore.ID][]byte
}

func writeHistory(tb testing.TB, db *kv.DB, st *objstore.Store, n, nblocks, perBatch int) *history {
	tb.Helper()
	r := rand.New(rand.NewSource(int64(n*1000 + nblocks)))
	h := &history{contents: map[objstore.ID][]byte{}}
	entries := make([]objstore.BlockEntry, nblocks)
	b := db.NewBatch()
	put := func(text string) objstore.ID {
		c := flowdoc.EncodeContent(flowdoc.Block{Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}})
		id, err := st.Put(b, objstore.KindContent, c)
		if err != nil {
			tb.Fatal(err)
		}
		h.contents[id] = c
		return id
	}
	for i := range entries {
		entries[i] = objstore.BlockEntry{ID: fmt.Sprintf("b%03d", i), Content: put(sentence(r, 40))}
	}
	var head objstore.ID
	var headFP flowdoc.Fingerprint
	for seq := 1; seq <= n; seq++ {
		t := &objstore.Txn{Doc: "doc1", Actor: "u1", Kind: objstore.KindCheckpoint, Reason: objstore.ReasonIdle,
			BaseVersion: head, BaseFingerprint: headFP, Time: int64(seq) * 1000}
		if seq > 1 {
			i := r.Intn(nblocks)
			c := put(sentence(r, 40))
			t.Events = append(t.Events, objstore.TxnEvent{Op: objstore.EventModify, BlockID: entries[i].ID, Before: entries[i].Content, After: c})
			entries[i].Content = c
		}
		tid, err := st.PutTxn(b, t)
		if err != nil {
			tb.Fatal(err)
		}
		v := &objstore.Version{Doc: "doc1", Seq: uint64(seq), Label: fmt.Sprintf("v1.r%d", seq-1), Kind: t.Kind,
			Reason: t.Reason, Blocks: append([]objstore.BlockEntry(nil), entries...), Attrs: flowdoc.Attributes{Title: "T"},
			Txn: tid, Author: "u1", Time: t.Time}
		v.Fingerprint[0], v.Fingerprint[1] = byte(seq), byte(seq>>8)
		if !head.IsZero() {
			v.Parents = []objstore.ID{head}
		}
		vid, err := st.PutVersion(b, v)
		if err != nil {
			tb.Fatal(err)
		}
		h.versions, h.txns, h.vs, h.ts = append(h.versions, vid), append(h.txns, tid), append(h.vs, v), append(h.ts, t)
		head, headFP = vid, v.Fingerprint
		if seq%perBatch == 0 || seq == n {
			commit(tb, db, b)
			b = db.NewBatch()
		}
	}
	b.Close()
	return h
}

// stored returns how each object is stored.
func stored(tb testing.TB, st *objstore.Store) map[objstore.ID]objstore.StoredInfo {
	tb.Helper()
	m := map[objstore.ID]objstore.StoredInfo{}
	if err := st.ForEach(func(id objstore.ID, info objstore.StoredInfo) error {
		m[id] = info
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	return m
}

// checkHistory reads every version and txn back through a store with no
// cache and compares with what was written.
func checkHistory(tb testing.TB, db *kv.DB, h *history) {
	tb.Helper()
	st := objstore.NewWithOptions(db, objstore.Options{CacheBytes: -1})
	for i, id := range h.versions {
		want, _, _ := h.vs[i].Encode()
		k, got, err := st.Get(id)
		if err != nil || k != objstore.KindVersion || !bytes.Equal(got, want) {
			tb.Fatalf("version %d: kind %s, err %v, equal %v", i+1, k, err, bytes.Equal(got, want))
		}
		if _, err := st.Verify(id); err != nil {
			tb.Fatalf("verify version %d: %v", i+1, err)
		}
		want, _, _ = h.ts[i].Encode()
		k, got, err = st.Get(h.txns[i])
		if err != nil || k != objstore.KindTxn || !bytes.Equal(got, want) {
			tb.Fatalf("txn %d: kind %s, err %v, equal %v", i+1, k, err, bytes.Equal(got, want))
		}
		if _, err := st.Verify(h.txns[i]); err != nil {
			tb.Fatalf("verify txn %d: %v", i+1, err)
		}
	}
}

func TestRoundTripAllKinds(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	h := writeHistory(t, db, st, 5, 10, 1)
	checkHistory(t, db, h)
	for id, c := range h.contents {
		got, err := st.GetContent(id)
		if err != nil || !bytes.Equal(got, c) {
			t.Fatalf("content %s: %v", id.Short(), err)
		}
	}
	v, err := st.GetVersion(h.versions[4])
	if err != nil || v.Label != "v1.r4" || len(v.Blocks) != 10 || v.Parents[0] != h.versions[3] {
		t.Fatalf("GetVersion: %+v, %v", v, err)
	}
	tx, err := st.GetTxn(h.txns[4])
	if err != nil || tx.BaseVersion != h.versions[3] || len(tx.Events) != 1 {
		t.Fatalf("GetTxn: %+v, %v", tx, err)
	}
	if _, err := st.GetContent(h.versions[0]); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("GetContent of a version: %v, want ErrCorrupt (wrong kind)", err)
	}
	if _, _, err := st.Get(objstore.ID{1}); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Get of a missing id: %v", err)
	}
	if has, _ := st.Has(h.versions[0]); !has {
		t.Fatal("Has = false for a stored version")
	}
}

func TestDedup(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	c := []byte("\x81\xa1t\xa9paragraph")
	b := db.NewBatch()
	id1, _ := st.Put(b, objstore.KindContent, c)
	commit(t, db, b)
	b = db.NewBatch()
	defer b.Close()
	id2, _ := st.Put(b, objstore.KindContent, c)
	if id1 != id2 || b.Count() != 0 {
		t.Fatalf("second put: id %s vs %s, batch has %d records, want 0", id1.Short(), id2.Short(), b.Count())
	}
	if objstore.Sum(objstore.KindTxn, c) == id1 {
		t.Fatal("the same bytes as another kind must have another id")
	}
}

func TestCompressionBoundaries(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	r := rand.New(rand.NewSource(7))
	random := make([]byte, 2000)
	r.Read(random)
	cases := []struct {
		name  string
		data  []byte
		codec byte
	}{
		{"empty", []byte{}, 0},
		{"1023 compressible bytes stay raw", bytes.Repeat([]byte("a"), 1023), 0},
		{"1024 compressible bytes are zstd", bytes.Repeat([]byte("a"), 1024), 1},
		{"text", []byte(sentence(r, 2000)), 1},
		{"incompressible stays raw", random, 0},
	}
	b := db.NewBatch()
	ids := make([]objstore.ID, len(cases))
	for i, c := range cases {
		ids[i], _ = st.Put(b, objstore.KindContent, c.data)
	}
	commit(t, db, b)
	info := stored(t, st)
	for i, c := range cases {
		if info[ids[i]].Codec != c.codec {
			t.Errorf("%s: codec %d, want %d", c.name, info[ids[i]].Codec, c.codec)
		}
		got, err := st.GetContent(ids[i])
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("%s: read back %v", c.name, err)
		}
	}
}

func TestDeltaChainsAndBaseInterval(t *testing.T) {
	db := openDB(t)
	const interval = 16
	st := objstore.NewWithOptions(db, objstore.Options{DeltaInterval: interval})
	h := writeHistory(t, db, st, 100, 50, 1)
	info := stored(t, st)
	full := 0
	for i, id := range h.versions {
		in := info[id]
		wantDepth := i % interval
		if in.Depth != wantDepth {
			t.Fatalf("version %d: depth %d, want %d", i+1, in.Depth, wantDepth)
		}
		if wantDepth == 0 {
			full++
			if in.Codec == 2 {
				t.Fatalf("version %d should be whole", i+1)
			}
		} else if in.Base != h.versions[i-1] || in.Size > 300 {
			t.Fatalf("version %d: base %s (want its parent), %d bytes", i+1, in.Base.Short(), in.Size)
		}
		if ti := info[h.txns[i]]; i > 0 && (ti.Codec != 3 || ti.Base != id || ti.Size > 100) {
			t.Fatalf("txn %d stored as codec %d against %s, %d bytes", i+1, ti.Codec, ti.Base.Short(), ti.Size)
		}
	}
	if full != 7 {
		t.Fatalf("%d whole versions, want 7", full)
	}
	checkHistory(t, db, h)
}

func TestParentsInSameBatch(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	h := writeHistory(t, db, st, 30, 20, 10)
	info := stored(t, st)
	for i, id := range h.versions[1:] {
		if info[id].Codec != 2 || info[id].Depth != i+1 {
			t.Fatalf("version %d: codec %d depth %d, want a delta of depth %d", i+2, info[id].Codec, info[id].Depth, i+1)
		}
	}
	checkHistory(t, db, h)
}

func TestVersionWithMissingParentIsWhole(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	v := &objstore.Version{Doc: "d", Seq: 2, Label: "v1.r1", Kind: objstore.KindCheckpoint, Parents: []objstore.ID{{9}},
		Blocks: []objstore.BlockEntry{{ID: "a", Content: objstore.ID{1}}}}
	b := db.NewBatch()
	id, err := st.PutVersion(b, v)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, db, b)
	if c := stored(t, st)[id].Codec; c == 2 {
		t.Fatal("a version whose parent is missing was stored as a delta")
	}
	if _, err := st.Verify(id); !errors.Is(err, objstore.ErrDangling) {
		t.Fatalf("Verify of a version with missing references: %v, want ErrDangling", err)
	}
}

// corrupt flips one bit of object id's stored value at offset off from the end.
func corrupt(tb testing.TB, db *kv.DB, id objstore.ID, fromEnd int) {
	tb.Helper()
	v, err := kv.Get(db, objstore.Key(id))
	if err != nil {
		tb.Fatal(err)
	}
	v[len(v)-fromEnd] ^= 0x01
	if err := db.Set(objstore.Key(id), v, kv.Sync); err != nil {
		tb.Fatal(err)
	}
}

func TestCorruptionIsDetected(t *testing.T) {
	db := openDB(t)
	st := objstore.NewWithOptions(db, objstore.Options{DeltaInterval: 8})
	h := writeHistory(t, db, st, 20, 30, 1)
	fresh := func() *objstore.Store { return objstore.NewWithOptions(db, objstore.Options{CacheBytes: -1}) }

	// A flipped bit in the last bytes of a delta (a literal hash).
	corrupt(t, db, h.versions[5], 3)
	if _, _, err := fresh().Get(h.versions[5]); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("Get of a corrupt delta: %v, want ErrCorrupt", err)
	}
	if _, err := fresh().Verify(h.versions[5]); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("Verify of a corrupt delta: %v, want ErrCorrupt", err)
	}
	// Versions stored against it fail too, and so does its compact txn's read.
	if _, _, err := fresh().Get(h.versions[6]); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("Get of a delta on a corrupt base: %v, want ErrCorrupt", err)
	}
	if _, err := fresh().Verify(h.txns[5]); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("Verify of a txn stored against a corrupt version: %v, want ErrCorrupt", err)
	}
	// Versions before it are intact.
	if _, err := fresh().Verify(h.versions[4]); err != nil {
		t.Fatal(err)
	}
	// A whole base (zstd), a compact txn and a raw content object.
	corrupt(t, db, h.versions[8], 10)
	if _, err := fresh().Verify(h.versions[8]); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("Verify of a corrupt whole version: %v, want ErrCorrupt", err)
	}
	corrupt(t, db, h.txns[12], 1)
	if _, err := fresh().Verify(h.txns[12]); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("Verify of a corrupt compact txn: %v, want ErrCorrupt", err)
	}
	var content objstore.ID
	for id := range h.contents {
		content = id
		break
	}
	corrupt(t, db, content, 2)
	if _, err := fresh().Verify(content); !errors.Is(err, objstore.ErrCorrupt) {
		t.Fatalf("Verify of corrupt content: %v, want ErrCorrupt", err)
	}
}

func TestTxnStoredWholeWhenNotCompactable(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	h := writeHistory(t, db, st, 3, 5, 1)
	// A txn put after its version, and one with fields unrelated to it.
	rid := func(s string) objstore.ID { return objstore.Sum(objstore.KindContent, []byte(s)) }
	tx := &objstore.Txn{Doc: "other", Actor: "u2", Kind: objstore.KindRestore, BaseVersion: rid("base"),
		IdempotencyKey: "k1", Time: 5, Events: []objstore.TxnEvent{
			{Op: "split", BlockID: "zz", Before: rid("1"), After: rid("2")},
			{Op: objstore.EventDelete, BlockID: "b001", Before: rid("3")},
			{Op: objstore.EventAdd, BlockID: "b002", After: h.vs[2].Blocks[2].Content},
		}}
	b := db.NewBatch()
	tid, _ := st.PutTxn(b, tx)
	v := *h.vs[2]
	v.Seq, v.Label, v.Parents, v.Txn = 4, "v1.r3", []objstore.ID{h.versions[2]}, tid
	vid, _ := st.PutVersion(b, &v)
	late := &objstore.Txn{Doc: "doc1", Actor: "u1", Kind: objstore.KindCheckpoint, Time: 99}
	lid, _ := st.PutTxn(b, late)
	commit(t, db, b)
	info := stored(t, st)
	if info[tid].Codec != 3 || info[lid].Codec == 3 {
		t.Fatalf("codecs: odd txn %d (want 3, its literal fields kept), late txn %d (want whole)", info[tid].Codec, info[lid].Codec)
	}
	fresh := objstore.NewWithOptions(db, objstore.Options{CacheBytes: -1})
	for _, id := range []objstore.ID{tid, lid, vid} {
		if _, _, err := fresh.Get(id); err != nil {
			t.Fatal(err)
		}
	}
	got, err := fresh.GetTxn(tid)
	if err != nil || got.Events[0].Op != "split" || got.IdempotencyKey != "k1" || got.Events[1].After != (objstore.ID{}) {
		t.Fatalf("odd txn read back as %+v, %v", got, err)
	}
}

func TestWalkReachableAndStop(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	h := writeHistory(t, db, st, 10, 5, 1)
	var order []objstore.ID
	kinds := map[objstore.Kind]int{}
	seen := map[objstore.ID]bool{}
	err := st.Walk([]objstore.ID{h.versions[9]}, nil, func(id objstore.ID, k objstore.Kind, data []byte) error {
		if seen[id] {
			t.Fatalf("%s visited twice", id.Short())
		}
		refs, err := objstore.References(k, data)
		if err != nil {
			return err
		}
		for _, r := range refs {
			if !seen[r] {
				t.Fatalf("%s %s visited before %s it references", k, id.Short(), r.Short())
			}
		}
		seen[id] = true
		kinds[k]++
		order = append(order, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if kinds[objstore.KindVersion] != 10 || kinds[objstore.KindTxn] != 10 || kinds[objstore.KindContent] != 5+9 {
		t.Fatalf("visited %v", kinds)
	}
	// With the 6th version as a "have", only what the last four add is left.
	rest, err := st.Reachable([]objstore.ID{h.versions[9]}, []objstore.ID{h.versions[5], {0xee}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 4*3 {
		t.Fatalf("reachable beyond the stop set: %d objects, want 12 (4 versions, txns, contents)", len(rest))
	}
	for _, id := range rest {
		if id == h.versions[5] || id == h.versions[0] {
			t.Fatal("an object reachable from the stop set was visited")
		}
	}
	if _, err := st.Reachable([]objstore.ID{{0xee}}, nil); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("walk from a missing root: %v", err)
	}
}

func TestIsAncestor(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	h := writeHistory(t, db, st, 50, 5, 1)
	for _, c := range []struct {
		a, b int
		want bool
	}{{0, 49, true}, {48, 49, true}, {49, 49, true}, {49, 0, false}, {30, 10, false}} {
		got, err := st.IsAncestor(h.versions[c.a], h.versions[c.b])
		if err != nil || got != c.want {
			t.Errorf("IsAncestor(v%d, v%d) = %v, %v; want %v", c.a+1, c.b+1, got, err, c.want)
		}
	}
	if _, err := st.IsAncestorWithin(h.versions[0], h.versions[49], 10); !errors.Is(err, objstore.ErrLimit) {
		t.Fatalf("bounded walk: %v, want ErrLimit", err)
	}
}

func TestDeleteKeepsDeltaBases(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	h := writeHistory(t, db, st, 6, 5, 1)
	b := db.NewBatch()
	defer b.Close()
	if err := st.Delete(b, []objstore.ID{h.versions[2]}); !errors.Is(err, objstore.ErrDeltaBase) || b.Count() != 0 {
		t.Fatalf("deleting a delta base alone: %v (batch %d records)", err, b.Count())
	}
	if err := st.Delete(b, []objstore.ID{h.versions[5]}); !errors.Is(err, objstore.ErrDeltaBase) {
		t.Fatalf("deleting the version a compact txn is stored against: %v", err)
	}
	// The newest version with its txn goes; then everything.
	if err := st.Delete(b, []objstore.ID{h.versions[5], h.txns[5]}); err != nil {
		t.Fatal(err)
	}
	commit(t, db, b)
	if has, _ := st.Has(h.versions[5]); has {
		t.Fatal("deleted version still there")
	}
	checkHistory(t, db, &history{versions: h.versions[:5], txns: h.txns[:5], vs: h.vs[:5], ts: h.ts[:5]})
	var all []objstore.ID
	st.ForEach(func(id objstore.ID, _ objstore.StoredInfo) error { all = append(all, id); return nil })
	b2 := db.NewBatch()
	if err := st.Delete(b2, all); err != nil {
		t.Fatal(err)
	}
	commit(t, db, b2)
	if n := len(stored(t, st)); n != 0 {
		t.Fatalf("%d objects left", n)
	}
}

func TestDeltaIntervalOneStoresWhole(t *testing.T) {
	db := openDB(t)
	st := objstore.NewWithOptions(db, objstore.Options{DeltaInterval: 1})
	h := writeHistory(t, db, st, 5, 20, 1)
	for i, id := range h.versions {
		if in := stored(t, st)[id]; in.Codec == 2 || in.Depth != 0 {
			t.Fatalf("version %d stored as codec %d depth %d with deltas off", i+1, in.Codec, in.Depth)
		}
	}
	checkHistory(t, db, h)
}

// TestSharedReferencePrefix plants decoy versions whose keys share the
// 8-byte prefix by which a delta names its base and a compact txn its
// version: reads must try past them and still return the right bytes.
func TestSharedReferencePrefix(t *testing.T) {
	db := openDB(t)
	st := objstore.New(db)
	h := writeHistory(t, db, st, 4, 10, 1)
	decoy := objstore.EncodeStored(objstore.KindVersion, []byte("\x81\xa3doc\xa1x"))
	for _, target := range []objstore.ID{h.versions[1], h.versions[3]} {
		for _, tail := range []byte{0x00, 0xff} {
			id := target
			for i := 8; i < len(id); i++ {
				id[i] = tail
			}
			if err := db.Set(objstore.Key(id), decoy, kv.Sync); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkHistory(t, db, h) // no cache: every candidate is tried in key order
	info := stored(t, st)
	if info[h.versions[2]].Base != h.versions[1] || info[h.txns[3]].Base != h.versions[3] {
		t.Fatalf("ForEach resolved bases %s and %s", info[h.versions[2]].Base.Short(), info[h.txns[3]].Base.Short())
	}
}
