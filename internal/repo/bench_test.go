package repo

import (
	"fmt"
	"testing"

	"github.com/foliodev/folio/objstore"
)

// BenchmarkCheckpoint500 measures one draft save of one changed block plus
// the checkpoint that seals it, on a 500-block document (two synced
// batches).
func BenchmarkCheckpoint500(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 500)
	d, _ := r.Draft(ctx, doc)
	seq := d.Seq
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		blk := para(fmt.Sprintf("b%d", i%500), fmt.Sprintf("edit %d", i))
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
		if err != nil {
			b.Fatal(err)
		}
		seq = res.Seq
		if _, _, err := r.Checkpoint(ctx, doc, objstore.ReasonIdle, "ana", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMaterialize1000 measures Show of a 1,000-block version with a
// cold content cache.
func BenchmarkMaterialize1000(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.cacheMu.Lock()
		clear(r.cache)
		r.cacheMu.Unlock()
		s, err := r.Show(ctx, doc, "v1.r0")
		if err != nil || len(s.Body.Blocks) != 1000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkLog10000 measures a full log of a document with 10,000 versions.
func BenchmarkLog10000(b *testing.B) {
	r := newRepo(b)
	doc := create(b, r, 20)
	seq := uint64(1)
	for i := 1; i < 10000; i++ {
		blk := para(fmt.Sprintf("b%d", i%20), fmt.Sprintf("edit %d", i))
		res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
		if err != nil {
			b.Fatal(err)
		}
		seq = res.Seq
		if _, _, err := r.Checkpoint(ctx, doc, objstore.ReasonIdle, "ana", ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		log, err := r.Log(ctx, doc, 0, 0)
		if err != nil || len(log) != 10000 {
			b.Fatal(len(log), err)
		}
	}
}
