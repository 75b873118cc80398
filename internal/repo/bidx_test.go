package repo

import (
	"fmt"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
	"testing"
)

// The block index names a block's revision by its version and no longer
// stores the content id again; an index written the old way (the 32-byte
// content id as the value) reads the same, fsck accepts both, and a value
// of neither form is reported.
func TestBlockIndexFormsReadAlike(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	for i := 0; i < 6; i++ {
		d, _ := r.Draft(ctx, doc)
		save(t, r, doc, d.Seq, para(fmt.Sprintf("b%d", i%2), fmt.Sprintf("round %d", i)))
		if _, _, err := r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", ""); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := r.Draft(ctx, doc)
	if _, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: d.Seq, Changes: []DraftChange{{Op: ChangeDelete, BlockID: "b2"}}, Seal: objstore.ReasonManual}); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		t.Helper()
		out := ""
		for _, b := range []string{"b0", "b1", "b2"} {
			h, err := r.BlockHistory(ctx, doc, b)
			if err != nil {
				t.Fatal(err)
			}
			id, ok, err := r.BlockAt(doc, b)
			if err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%s %v at=%s,%v\n", b, h, id.Short(), ok)
		}
		return out
	}
	now := read()
	// What the versions say: b0 has 4 revisions, b2 is deleted at the head.
	if h, _ := r.BlockHistory(ctx, doc, "b0"); len(h) != 4 || h[3].Content.IsZero() {
		t.Fatalf("b0's history: %+v", h)
	}
	if _, ok, _ := r.BlockAt(doc, "b2"); ok {
		t.Fatal("a deleted block is at the head")
	}
	// Rewrite every present entry in the old form, the content id.
	p := append(kv.TableKey("bidx", doc), 0)
	it, err := r.db.NewIter(&kv.IterOptions{LowerBound: p, UpperBound: kv.PrefixEnd(p)})
	if err != nil {
		t.Fatal(err)
	}
	b := r.db.NewBatch()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if len(it.Value()) == 0 {
			continue
		}
		if len(it.Value()) != 1 {
			t.Fatalf("entry %q written with a %d-byte value, want the 1-byte form", it.Key(), len(it.Value()))
		}
		rest := it.Key()[len(p):]
		block := string(rest[:len(rest)-9])
		id, _, err := r.bidxValue(doc, block, kv.ParseUint64(it.Key()), it.Value(), nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Set(append([]byte{}, it.Key()...), id[:])
		n++
	}
	it.Close()
	if err := r.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Fatalf("only %d entries rewritten", n)
	}
	if old := read(); old != now {
		t.Fatalf("old-form index reads differently:\n%s\nnew form:\n%s", old, now)
	}
	if rep, _ := r.Fsck(ctx, FsckOptions{}); !rep.OK {
		t.Fatalf("fsck of the old form: %+v", rep.Problems)
	}
	if err := r.db.Set(bidxKey(doc, "b0", 1), []byte{7, 7}, kv.Sync); err != nil {
		t.Fatal(err)
	}
	if rep, _ := r.Fsck(ctx, FsckOptions{}); rep.OK {
		t.Fatal("fsck accepts a block index value of neither form")
	}
	if _, err := r.BlockHistory(ctx, doc, "b0"); err == nil {
		t.Fatal("BlockHistory reads a block index value of neither form")
	}
}
