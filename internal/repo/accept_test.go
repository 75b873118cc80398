package repo

import (
	"fmt"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
)

// An accept encodes only the blocks its operations name; every other
// block keeps its content id. Were a kept id wrong, the block's content
// hash (what a suggestion's target check compares) would no longer match
// and the later accepts below, made against the hashes of the body read
// before the first accept, would conflict; the body read back must be
// the one the operations make.
func TestAcceptKeepsUnchangedBlocks(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 20)
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	want := d.Body
	hashes := map[string]objstore.ID{}
	for _, b := range d.Body.Blocks {
		hashes[b.ID] = objstore.ID(flowdoc.ContentHash(b))
	}
	base, fp := d.HeadID, d.Fingerprint
	for i, id := range []string{"b3", "b0", "b19", "b7"} {
		blk := para(id, fmt.Sprintf("accepted %d", i))
		v, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Actor: "ana", Kind: objstore.KindAcceptSuggestion,
			BaseVersion: base, BaseFingerprint: fp, TargetBlocks: map[string]objstore.ID{id: hashes[id]},
			Ops: []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: id, Block: &blk}}})
		if err != nil {
			t.Fatalf("accept %d on %s: %v", i, id, err)
		}
		base, fp = v.Hash, v.Fingerprint
		for j := range want.Blocks {
			if want.Blocks[j].ID == id {
				want.Blocks[j] = blk
			}
		}
	}
	// An insert next to a kept block, and a delete.
	nb := para("new", "inserted")
	v, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Actor: "ana", Kind: objstore.KindAcceptSuggestion,
		BaseVersion: base, BaseFingerprint: fp, TargetBlocks: map[string]objstore.ID{"b10": hashes["b10"], "b11": hashes["b11"]},
		Ops: []flowdoc.Op{{Op: flowdoc.InsertAfter, BlockID: "b10", Blocks: []flowdoc.Block{nb}}, {Op: flowdoc.DeleteBlock, BlockID: "b11", Confirm: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []flowdoc.Block
	for _, b := range want.Blocks {
		if b.ID == "b11" {
			continue
		}
		blocks = append(blocks, b)
		if b.ID == "b10" {
			blocks = append(blocks, nb)
		}
	}
	want.Blocks = blocks
	got, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fingerprint != v.Fingerprint || got.Fingerprint != flowdoc.FingerprintOf(want) {
		t.Errorf("fingerprint %s, version %s, of the expected body %s", got.Fingerprint, v.Fingerprint, flowdoc.FingerprintOf(want))
	}
	if len(got.Body.Blocks) != len(want.Blocks) {
		t.Fatalf("%d blocks, want %d", len(got.Body.Blocks), len(want.Blocks))
	}
	for i, b := range got.Body.Blocks {
		if flowdoc.ContentHash(b) != flowdoc.ContentHash(want.Blocks[i]) || b.ID != want.Blocks[i].ID {
			t.Errorf("block %d is %s %q, want %s %q", i, b.ID, b.RichText, want.Blocks[i].ID, want.Blocks[i].RichText)
		}
	}
}
