package pack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/foliodev/folio/objstore/pack/packtest"
)

func openStore(tb testing.TB) pack.Stores {
	tb.Helper()
	return openStoreCache(tb, 8<<20)
}

func openStoreCache(tb testing.TB, cache int64) pack.Stores {
	tb.Helper()
	db, err := kv.Open(filepath.Join(tb.TempDir(), "data"), kv.Options{Create: true, CacheSize: cache})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return pack.NewStores(db)
}

// dump returns every key and value of the store's objects and refs (and,
// with reflog, the reflog), for before/after comparisons.
func dump(tb testing.TB, s pack.Stores, prefixes ...string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, p := range prefixes {
		it, err := s.DB.NewIter(&kv.IterOptions{LowerBound: []byte(p), UpperBound: kv.PrefixEnd([]byte(p))})
		if err != nil {
			tb.Fatal(err)
		}
		for it.First(); it.Valid(); it.Next() {
			out[string(it.Key())] = string(it.Value())
		}
		if err := it.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// objects returns each object's canonical bytes by id (storage codecs may differ between stores).
func objects(tb testing.TB, s pack.Stores) map[objstore.ID]string {
	tb.Helper()
	out := map[objstore.ID]string{}
	for k := range dump(tb, s, kv.PrefixObject) {
		var id objstore.ID
		copy(id[:], k[len(kv.PrefixObject):])
		if _, err := s.Objects.Verify(id); err != nil {
			tb.Fatalf("verify %s: %v", id.Short(), err)
		}
		kind, data, err := s.Objects.Get(id)
		if err != nil {
			tb.Fatal(err)
		}
		out[id] = kind.String() + ":" + string(data)
	}
	return out
}

func refsOf(tb testing.TB, s pack.Stores, prefix string) map[string]objstore.ID {
	tb.Helper()
	vals, _, err := s.Refs.List(prefix)
	if err != nil {
		tb.Fatal(err)
	}
	return vals
}

func exportAll(tb testing.TB, s pack.Stores, o pack.ExportOptions) ([]byte, pack.ExportStats) {
	tb.Helper()
	var buf bytes.Buffer
	st, err := pack.Export(context.Background(), s, &buf, o)
	if err != nil {
		tb.Fatal(err)
	}
	if int64(buf.Len()) != st.PackBytes {
		tb.Fatalf("stats say %d pack bytes, wrote %d", st.PackBytes, buf.Len())
	}
	return buf.Bytes(), st
}

func build(tb testing.TB, s pack.Stores, docs, versions int) *packtest.Builder {
	tb.Helper()
	b := packtest.New(s.DB, s.Objects, s.Refs, 1)
	b.Bodies = map[objstore.ID]flowdoc.Document{}
	if err := b.Build(docs, versions); err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := openStore(t)
	docs, versions := 12, 15
	if testing.Short() {
		docs, versions = 4, 6
	}
	b := build(t, src, docs, versions)
	data, st := exportAll(t, src, pack.ExportOptions{})
	want := objects(t, src)
	if st.Objects != uint64(len(want)) {
		t.Fatalf("pack holds %d objects, store has %d", st.Objects, len(want))
	}
	if len(st.Refs) != docs {
		t.Fatalf("pack carries %d refs, want %d", len(st.Refs), docs)
	}

	dst := openStore(t)
	var reindexed []string
	res, err := pack.Import(ctx, dst, bytes.NewReader(data), pack.ImportOptions{
		Reindex: func(_ context.Context, doc string) error { reindexed = append(reindexed, doc); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.New != uint64(len(want)) || res.Objects != st.Objects {
		t.Fatalf("import: %d objects, %d new; want %d", res.Objects, res.New, len(want))
	}
	got := objects(t, dst)
	if len(got) != len(want) {
		t.Fatalf("imported store has %d objects, want %d", len(got), len(want))
	}
	for id, v := range want {
		if got[id] != v {
			t.Fatalf("object %s differs after import", id.Short())
		}
	}
	wantRefs, gotRefs := refsOf(t, src, ""), refsOf(t, dst, "")
	if len(gotRefs) != len(wantRefs) {
		t.Fatalf("imported %d refs, want %d", len(gotRefs), len(wantRefs))
	}
	for n, id := range wantRefs {
		if gotRefs[n] != id {
			t.Fatalf("ref %s = %s, want %s", n, gotRefs[n].Short(), id.Short())
		}
	}
	if len(reindexed) != docs {
		t.Fatalf("reindexed %d documents, want %d", len(reindexed), docs)
	}
	// Every version materializes to the body that was written.
	for id, body := range b.Bodies {
		v, err := dst.Objects.GetVersion(id)
		if err != nil {
			t.Fatal(err)
		}
		d, err := pack.Materialize(dst.Objects, v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pack.VersionJSON(d), pack.VersionJSON(body)) {
			t.Fatalf("%s@%s differs after import", v.Doc, v.Label)
		}
	}

	// A second import changes nothing: no object, no ref, no reflog entry.
	before := dump(t, dst, kv.PrefixObject, kv.PrefixRef, kv.PrefixReflog)
	reindexed = nil
	res, err = pack.Import(ctx, dst, bytes.NewReader(data), pack.ImportOptions{
		Reindex: func(_ context.Context, doc string) error { reindexed = append(reindexed, doc); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.New != 0 || len(reindexed) != 0 {
		t.Fatalf("second import wrote %d objects and reindexed %v", res.New, reindexed)
	}
	for _, r := range res.Refs {
		if r.Action != pack.RefUnchanged {
			t.Fatalf("second import: %s %s", r.Name, r.Action)
		}
	}
	if after := dump(t, dst, kv.PrefixObject, kv.PrefixRef, kv.PrefixReflog); !equalMaps(before, after) {
		t.Fatal("second import changed the store")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestIncrementalPackHoldsOnlyNewObjects(t *testing.T) {
	ctx := context.Background()
	src, dst := openStore(t), openStore(t)
	b := build(t, src, 6, 8)
	full, _ := exportAll(t, src, pack.ExportOptions{})
	if _, err := pack.Import(ctx, dst, bytes.NewReader(full), pack.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// The receiver's heads become the haves, in `folio pack heads` form.
	var haveFile strings.Builder
	for name, id := range refsOf(t, dst, "docs/") {
		haveFile.WriteString(id.String() + " " + name + "\n")
	}
	haveFile.WriteString("# comment\n\n")
	haves, err := pack.ReadHaves(strings.NewReader(haveFile.String()))
	if err != nil {
		t.Fatal(err)
	}

	// N more checkpoints on three documents.
	before := map[objstore.Kind]int{}
	for k, n := range b.Written {
		before[k] = n
	}
	const n = 7
	for i := 0; i < n; i++ {
		for _, doc := range []string{"doc-0002", "doc-0005", "doc-0006"} {
			if _, err := b.Checkpoint(doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	newObjs := 0
	for k, c := range b.Written {
		newObjs += c - before[k]
	}
	if got := b.Written[objstore.KindVersion] - before[objstore.KindVersion]; got != 3*n {
		t.Fatalf("builder wrote %d versions, want %d", got, 3*n)
	}

	inc, st := exportAll(t, src, pack.ExportOptions{Haves: haves})
	if st.Objects != uint64(newObjs) {
		t.Fatalf("incremental pack holds %d objects, want the %d new ones", st.Objects, newObjs)
	}
	if len(inc) >= len(full) {
		t.Fatalf("incremental pack is %d bytes, the full one %d", len(inc), len(full))
	}
	vr, err := pack.Verify(ctx, bytes.NewReader(inc))
	if err != nil {
		t.Fatal(err)
	}
	if vr.Kinds[objstore.KindVersion] != 3*n || vr.Kinds[objstore.KindTxn] != 3*n {
		t.Fatalf("incremental pack kinds: %v", vr.Kinds)
	}
	res, err := pack.Import(ctx, dst, bytes.NewReader(inc), pack.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, r := range res.Refs {
		if r.Action == pack.RefForwarded {
			moved++
		}
	}
	if moved != 3 || res.New != uint64(newObjs) {
		t.Fatalf("incremental import forwarded %d refs and wrote %d objects; want 3 and %d", moved, res.New, newObjs)
	}
	if a, b := objects(t, src), objects(t, dst); len(a) != len(b) {
		t.Fatalf("after incremental import: %d objects, source has %d", len(b), len(a))
	}

	// An incremental pack into a store that lacks its base is refused and moves nothing.
	empty := openStore(t)
	_, err = pack.Import(ctx, empty, bytes.NewReader(inc), pack.ImportOptions{})
	if !errors.Is(err, pack.ErrIncomplete) {
		t.Fatalf("incremental pack into an empty store: %v, want ErrIncomplete", err)
	}
	if r := refsOf(t, empty, ""); len(r) != 0 {
		t.Fatalf("refs moved: %v", r)
	}

	// Unknown haves are ignored and counted.
	_, st = exportAll(t, src, pack.ExportOptions{Docs: []string{"doc-0001"}, Haves: []objstore.ID{objstore.Sum(objstore.KindContent, []byte("nope"))}})
	if st.UnknownHaves != 1 || len(st.Refs) != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCorruptPackIsRefusedAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	src := openStore(t)
	build(t, src, 5, 6)
	data, _ := exportAll(t, src, pack.ExportOptions{})

	// The target already holds part of the history, so a ref move would be visible.
	dst := openStore(t)
	part, _ := exportAll(t, src, pack.ExportOptions{Docs: []string{"doc-0001", "doc-0003"}})
	if _, err := pack.Import(ctx, dst, bytes.NewReader(part), pack.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := dump(t, dst, kv.PrefixObject, kv.PrefixRef, kv.PrefixReflog)

	rng := rand.New(rand.NewSource(42))
	hdr, _ := pack.NewReader(bytes.NewReader(data))
	hdrEnd := int(hdr.Offset())
	hdr.Close()
	var positions []int
	for i := 0; i < 12; i++ { // header: magic, version, flags, count, refs
		positions = append(positions, rng.Intn(hdrEnd))
	}
	for i := 0; i < 40; i++ { // chunks
		positions = append(positions, hdrEnd+rng.Intn(len(data)-hdrEnd-41))
	}
	for i := 0; i < 8; i++ { // end marker, count, checksum
		positions = append(positions, len(data)-41+rng.Intn(41))
	}
	positions = append(positions, 0, 8, 10, 12, 20, len(data)-1)
	check := func(what string, bad []byte) {
		t.Helper()
		_, verr := pack.Verify(ctx, bytes.NewReader(bad))
		var fe *pack.FormatError
		if !errors.As(verr, &fe) {
			t.Fatalf("%s: verify: %v, want a FormatError", what, verr)
		}
		if fe.Offset < 0 || fe.Offset > int64(len(bad)) {
			t.Fatalf("%s: error offset %d outside the pack", what, fe.Offset)
		}
		if _, err := pack.Import(ctx, dst, bytes.NewReader(bad), pack.ImportOptions{}); !errors.Is(err, pack.ErrFormat) {
			t.Fatalf("%s: import: %v, want ErrFormat", what, err)
		}
		// A non-seekable stream stages while reading: objects may appear, never refs.
		if _, err := pack.Import(ctx, dst, struct{ io.Reader }{bytes.NewReader(bad)}, pack.ImportOptions{}); err == nil {
			t.Fatalf("%s: streamed import accepted a bad pack", what)
		}
		after := dump(t, dst, kv.PrefixRef, kv.PrefixReflog)
		for k, v := range after {
			if before[k] != v {
				t.Fatalf("%s: ref key %q changed", what, k)
			}
		}
	}
	for _, pos := range positions {
		bad := bytes.Clone(data)
		bad[pos] ^= byte(1 + rng.Intn(255))
		check("flip at "+strconv.Itoa(pos), bad)
	}
	for _, n := range []int{0, 3, 8, hdrEnd - 1, hdrEnd, hdrEnd + 5, len(data) / 2, len(data) - 33, len(data) - 1} {
		check("truncate to "+strconv.Itoa(n), data[:n])
	}
	check("trailing bytes", append(bytes.Clone(data), 0))
	check("wrong magic", append([]byte("PK\x03\x04"), data[4:]...))

	// The seekable (file) path verifies first: not even objects were written.
	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 0xff
	dst2 := openStore(t)
	if _, err := pack.Import(ctx, dst2, bytes.NewReader(bad), pack.ImportOptions{}); !errors.Is(err, pack.ErrFormat) {
		t.Fatal(err)
	}
	if d := dump(t, dst2, kv.PrefixObject, kv.PrefixRef); len(d) != 0 {
		t.Fatalf("a refused pack left %d keys", len(d))
	}
	// And the magic error names offset 0.
	_, err := pack.Verify(ctx, strings.NewReader("GARBAGE!and more"))
	if err == nil || !strings.Contains(err.Error(), "at byte 0") || !strings.Contains(err.Error(), "not a folio pack") {
		t.Fatalf("wrong magic: %v", err)
	}
}

func TestRefsMoveOnlyForward(t *testing.T) {
	ctx := context.Background()
	src := openStore(t)
	b := build(t, src, 3, 4)
	old, _ := exportAll(t, src, pack.ExportOptions{})

	// dst gets the old pack, then diverges on doc-0002.
	dst := openStore(t)
	if _, err := pack.Import(ctx, dst, bytes.NewReader(old), pack.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	db := packtest.New(dst.DB, dst.Objects, dst.Refs, 99)
	if _, err := db.Checkpoint("doc-0002"); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	// src moves on too, on doc-0001 and doc-0002.
	for _, d := range []string{"doc-0001", "doc-0002"} {
		if _, err := b.Checkpoint(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	newer, _ := exportAll(t, src, pack.ExportOptions{})

	before := refsOf(t, dst, "")
	_, err := pack.Import(ctx, dst, bytes.NewReader(newer), pack.ImportOptions{})
	if !errors.Is(err, pack.ErrRefused) {
		t.Fatalf("diverged import: %v, want ErrRefused", err)
	}
	for _, want := range []string{"docs/doc-0002/head", "does not descend", "--into backup/NAME"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("refusal %q does not mention %q", err, want)
		}
	}
	if after := refsOf(t, dst, ""); len(after) != len(before) || after["docs/doc-0001/head"] != before["docs/doc-0001/head"] {
		t.Fatal("a refused import moved a ref")
	}

	// --into keeps both histories.
	res, err := pack.Import(ctx, dst, bytes.NewReader(newer), pack.ImportOptions{Into: "backup/night"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotReindexed) != 0 {
		t.Fatalf("backup namespace reindexed %v", res.NotReindexed)
	}
	got := refsOf(t, dst, "")
	srcRefs := refsOf(t, src, "docs/")
	for name, id := range srcRefs {
		if got["backup/night/"+name] != id {
			t.Fatalf("backup/night/%s = %s, want %s", name, got["backup/night/"+name].Short(), id.Short())
		}
		if got[name] != before[name] {
			t.Fatalf("--into moved %s", name)
		}
	}
	if _, err := pack.Import(ctx, dst, bytes.NewReader(newer), pack.ImportOptions{Into: "backup/../x"}); !errors.Is(err, pack.ErrRefused) {
		t.Fatalf("bad --into accepted: %v", err)
	}

	// An older pack into a newer store: nothing moves, the store is ahead.
	res, err = pack.Import(ctx, src, bytes.NewReader(old), pack.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ahead := 0
	for _, r := range res.Refs {
		if r.Action == pack.RefAhead {
			ahead++
		}
	}
	if ahead != 2 {
		t.Fatalf("old pack into newer store: %d refs ahead, want 2 (%+v)", ahead, res.Refs)
	}
}

// TestCraftedEntryIsRefused: a pack whose entries all hash to their ids
// but one of which is a crafted object (a 13-byte version claiming 2^32-1
// blocks, a content claiming 2^31 runs) is refused with an error naming
// the entry, and nothing of it is written: not from a file, which is
// verified first, and no ref from a stream.
func TestCraftedEntryIsRefused(t *testing.T) {
	ctx := context.Background()
	src := openStore(t)
	build(t, src, 3, 4)
	good, _ := exportAll(t, src, pack.ExportOptions{})
	crafted := map[objstore.Kind][]byte{
		objstore.KindVersion: craftedVersion,
		objstore.KindContent: {0x81, 0xa1, 'r', 0xdd, 0x7f, 0xff, 0xff, 0xff},
		objstore.KindTxn:     {0x81, 0xa6, 'e', 'v', 'e', 'n', 't', 's', 0xdc, 0xff, 0xff},
	}
	for kind, obj := range crafted {
		// Copy the good pack's entries and put the crafted one among them.
		r, err := pack.NewReader(bytes.NewReader(good))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w, err := pack.NewWriter(&buf, r.Header())
		if err != nil {
			t.Fatal(err)
		}
		var n, at uint64
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 5 {
				at = n
				n++
				if err := w.Add(objstore.Sum(kind, obj), kind, obj); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Add(e.ID, e.Kind, e.Data); err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		bad := buf.Bytes()
		id := objstore.Sum(kind, obj)

		dst := openStore(t)
		_, err = pack.Import(ctx, dst, bytes.NewReader(bad), pack.ImportOptions{})
		var fe *pack.FormatError
		if !errors.As(err, &fe) || fe.Entry != at || !strings.Contains(err.Error(), id.Short()) || !strings.Contains(err.Error(), "does not decode") {
			t.Fatalf("%s: import: %v; want a FormatError naming entry %d (%s)", kind, err, at, id.Short())
		}
		if d := dump(t, dst, kv.PrefixObject, kv.PrefixRef, kv.PrefixReflog); len(d) != 0 {
			t.Fatalf("%s: a refused pack left %d keys", kind, len(d))
		}
		if _, err := pack.Import(ctx, dst, struct{ io.Reader }{bytes.NewReader(bad)}, pack.ImportOptions{}); !errors.As(err, &fe) || fe.Entry != at {
			t.Fatalf("%s: streamed import: %v", kind, err)
		}
		if d := dump(t, dst, kv.PrefixRef, kv.PrefixReflog); len(d) != 0 {
			t.Fatalf("%s: a refused streamed pack moved %d refs", kind, len(d))
		}
		if _, _, err := dst.Objects.Get(id); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("%s: the crafted object was stored: %v", kind, err)
		}
	}
}
