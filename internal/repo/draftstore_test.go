package repo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
)

func checkKeys(t *testing.T, blocks []draftBlock) {
	t.Helper()
	for i := range blocks {
		k := blocks[i].key
		if len(k) == 0 || k[len(k)-1] == 0 || len(k) > maxOrderKey+8 {
			t.Fatalf("block %d: bad order key %x", i, k)
		}
		if i > 0 && bytes.Compare(blocks[i-1].key, k) >= 0 {
			t.Fatalf("blocks %d and %d: keys %x, %x out of order", i-1, i, blocks[i-1].key, k)
		}
	}
}

// TestOrderKeys: whatever the inserts and moves, assignKeys keeps the keys
// increasing along the body, keeps those of blocks that did not move, and
// keys stay short (renumbering when a spot is hammered).
func TestOrderKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var blocks []draftBlock
	for i := 0; i < 50; i++ {
		blocks = append(blocks, draftBlock{ID: fmt.Sprint("b", i)})
	}
	assignKeys(blocks)
	checkKeys(t, blocks)
	next, renumbered := 50, 0
	for step := 0; step < 3000; step++ {
		before := map[string]string{}
		for _, b := range blocks {
			before[b.ID] = string(b.key)
		}
		moved := ""
		switch op := rng.IntN(4); {
		case op == 0 || step%500 < 100: // insert, often at the same spot
			at := rng.IntN(len(blocks) + 1)
			if step%500 < 100 {
				at = 1
			}
			blocks = slices.Insert(blocks, at, draftBlock{ID: fmt.Sprint("n", next)})
			next++
		case op == 1 && len(blocks) > 1: // move
			from := rng.IntN(len(blocks))
			b := blocks[from]
			moved = b.ID
			blocks = slices.Delete(blocks, from, from+1)
			to := rng.IntN(len(blocks) + 1)
			blocks = slices.Insert(blocks, to, b)
		case op == 2 && len(blocks) > 1: // delete
			i := rng.IntN(len(blocks))
			blocks = slices.Delete(blocks, i, i+1)
		}
		keys := 0
		for _, b := range blocks {
			if b.key != nil {
				keys++
			}
		}
		assignKeys(blocks)
		checkKeys(t, blocks)
		changed := 0
		for _, b := range blocks {
			if k, ok := before[b.ID]; ok && k != string(b.key) {
				changed++
			}
		}
		// A move re-keys one block (the moved one, or a neighbour it
		// swapped with); inserts and deletes none. Only a renumbering
		// touches more.
		allowed := 0
		if moved != "" {
			allowed = 1
		}
		if changed > allowed {
			for _, b := range blocks {
				if len(b.key) > 2 {
					t.Fatalf("step %d: %d blocks got new keys, and it was no renumbering (key %x)", step, changed, b.key)
				}
			}
			renumbered++
		}
	}
	if renumbered == 0 || renumbered > 20 {
		t.Fatalf("%d renumberings in 3,000 steps with 600 inserts at one spot", renumbered)
	}
}

// storedDraft reads doc's draft from the store, bypassing the writers'
// cache, and checks it against what Draft says.
func storedDraft(t *testing.T, r *Repo, doc string) *draftRec {
	t.Helper()
	dr, err := readDraft(r.db, doc)
	if err != nil {
		t.Fatal(err)
	}
	if dr.unstored || dr.Layout != draftLayout {
		t.Fatalf("stored draft is not layout %d: %d", draftLayout, dr.Layout)
	}
	checkKeys(t, dr.Blocks)
	if draftFingerprint(dr.Blocks) != dr.Fingerprint {
		t.Fatal("stored draft's fingerprint does not match its blocks")
	}
	return dr
}

func idsOf(blocks []flowdoc.Block) string {
	ids := make([]string, len(blocks))
	for i, b := range blocks {
		ids[i] = b.ID
	}
	return strings.Join(ids, ",")
}

// TestDraftStorage: random saves of every kind (in place, inserts, moves,
// deletes, whole bodies, attributes) leave a stored draft that a fresh
// reader (and a reopened store) sees exactly as the writer does, and a
// one-block save of a 1,000-block draft writes a handful of keys.
func TestDraftStorage(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := create(t, r, 1000)
	var counts []uint32
	r.beforeSave = func(b *kv.Batch) { counts = append(counts, b.Count()) }
	str := func(s string) *string { return &s }
	rng := rand.New(rand.NewPCG(3, 4))
	seq := uint64(1)
	next := 0
	for step := 0; step < 400; step++ {
		d, err := r.Draft(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		ids := strings.Split(idsOf(d.Body.Blocks), ",")
		pick := func() string { return ids[rng.IntN(len(ids))] }
		var p SaveParams
		kind := rng.IntN(10)
		switch {
		case kind < 5: // in place
			blk := para(pick(), fmt.Sprint("edit ", step))
			p.Changes = []DraftChange{{Op: ChangeUpsert, Block: &blk}}
		case kind == 5: // insert
			next++
			blk := para(fmt.Sprint("n", next), "new")
			p.Changes = []DraftChange{{Op: ChangeUpsert, Block: &blk, After: str(pick())}}
		case kind == 6: // move
			p.Changes = []DraftChange{{Op: ChangeMove, BlockID: pick(), After: str(pick())}}
		case kind == 7 && len(ids) > 2: // delete
			p.Changes = []DraftChange{{Op: ChangeDelete, BlockID: pick()}}
		case kind == 8: // attributes
			p.Attrs = &flowdoc.Attributes{Title: fmt.Sprint("title ", step)}
		default: // whole body, reversed tail
			body := d.Body.Clone()
			slices.Reverse(body.Blocks[len(body.Blocks)-5:])
			p.Body = &body
		}
		p.Doc, p.Actor, p.BaseSeq = doc, "ana", seq
		counts = counts[:0]
		res, err := r.SaveDraft(ctx, p)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		seq = res.Seq
		// The block, the header, the event, its trim now and then, and
		// the search outbox entry.
		if kind < 5 && len(counts) == 1 && counts[0] > 5 {
			t.Fatalf("step %d: a one-block save wrote %d keys", step, counts[0])
		}
		if step%97 == 0 {
			if _, _, err := r.Seal(ctx, doc, "idle", "ana"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := r.Draft(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		dr := storedDraft(t, r, doc)
		if got.Seq != dr.Seq || got.Fingerprint != dr.Fingerprint || len(got.Body.Blocks) != len(dr.Blocks) {
			t.Fatalf("step %d: draft %d %s, stored %d %s", step, got.Seq, got.Fingerprint.Short(), dr.Seq, dr.Fingerprint.Short())
		}
		if flowdoc.FingerprintOf(got.Body) != got.Fingerprint {
			t.Fatalf("step %d: the body's fingerprint is not the draft's", step)
		}
	}
	before, _ := r.Draft(ctx, doc)
	r.Close()
	if r, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	after, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if idsOf(after.Body.Blocks) != idsOf(before.Body.Blocks) || after.Fingerprint != before.Fingerprint || after.Seq != before.Seq {
		t.Fatal("the draft changed across a reopen")
	}
	rep, err := r.Fsck(ctx, FsckOptions{})
	if err != nil || !rep.OK {
		t.Fatalf("fsck: %+v %v", rep.Problems, err)
	}
}

// TestDraftLayout1: a store written with every draft in one record is
// read as it is, and its first change rewrites it as layout 2 in the same
// batch; gc keeps its content either way; a layout this code does not
// know and a header that disagrees with its block entries are refused
// with errors that say what to do.
func TestDraftLayout1(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 20)
	save(t, r, doc, 1, para("b3", "edited"))
	if _, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: 2, Changes: []DraftChange{{Op: ChangeDelete, BlockID: "b4"}}}); err != nil {
		t.Fatal(err)
	}
	want, _ := r.Draft(ctx, doc)

	// Rewrite the draft as layout 1 wrote it.
	dr := storedDraft(t, r, doc)
	old := *dr
	old.Layout, old.N = 0, 0
	b := r.db.NewBatch()
	for _, p := range [][]byte{dblkPrefix(doc), dtombPrefix(doc)} {
		b.DeleteRange(p, kv.PrefixEnd(p))
	}
	if err := setRec(b, draftKey(doc), &old); err != nil {
		t.Fatal(err)
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	r.drafts.forget(doc)

	got, err := r.Draft(ctx, doc)
	if err != nil || got.Fingerprint != want.Fingerprint || idsOf(got.Body.Blocks) != idsOf(want.Body.Blocks) {
		t.Fatalf("layout 1 read: %v", err)
	}
	if rep, err := r.GC(ctx, GCOptions{Prune: -1}); err != nil || rep.Removed != 0 {
		t.Fatalf("gc of a layout 1 draft: %+v %v", rep, err)
	}
	// The tombstone of b4 survived: a stale save of it is a conflict.
	if _, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: 2, Changes: []DraftChange{{Op: ChangeDelete, BlockID: "b4"}}}); err == nil {
		t.Fatal("a stale delete of a deleted block was accepted after the migration")
	}
	res := save(t, r, doc, got.Seq, para("b5", "after"))
	dr = storedDraft(t, r, doc)
	if len(dr.Tombs) != 1 || dr.Tombs[0].ID != "b4" || dr.Seq != res.Seq {
		t.Fatalf("migrated draft: seq %d, tombs %+v", dr.Seq, dr.Tombs)
	}
	if rep, err := r.Fsck(ctx, FsckOptions{}); err != nil || !rep.OK {
		t.Fatalf("fsck after the migration: %+v %v", rep.Problems, err)
	}
	if rep, err := r.GC(ctx, GCOptions{Prune: -1}); err != nil || rep.Removed != 0 {
		t.Fatalf("gc after the migration: %+v %v", rep, err)
	}

	// A layout from the future, and a header that lost a block entry.
	for _, tc := range []struct {
		edit func(*draftRec)
		want string
	}{
		{func(h *draftRec) { h.Layout = 3 }, "layout 3; this folio knows layouts 1 and 2: run a newer folio"},
		{func(h *draftRec) { h.N++ }, "has 19 block entries, its header says 20: run folio fsck"},
	} {
		h := dr.header()
		tc.edit(h)
		if err := r.db.Set(draftKey(doc), marshalRec(t, h), kv.Sync); err != nil {
			t.Fatal(err)
		}
		r.drafts.forget(doc)
		if _, err := r.Draft(ctx, doc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("Draft: %v, want %q", err, tc.want)
		}
		if _, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: res.Seq, Attrs: &flowdoc.Attributes{Title: "x"}}); err == nil {
			t.Fatal("a save on a broken draft was accepted")
		}
		if rep, _ := r.Fsck(ctx, FsckOptions{}); rep.OK {
			t.Fatal("fsck found nothing wrong with a broken draft")
		}
	}
}

func marshalRec(t *testing.T, v any) []byte {
	t.Helper()
	data, err := kv.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
