package assistant

import (
	"fmt"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore"
)

// BenchmarkSaveWithPendingSuggestions measures a one-block save of a
// 200-block article that has n pending block suggestions on other blocks
// (written straight into the store): the change hook reads one index
// prefix per changed block, so the cost does not grow with n.
func BenchmarkSaveWithPendingSuggestions(b *testing.B) {
	for _, n := range []int{0, 1, 1000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			w := newWorld(b)
			doc := w.article(200, false)
			snap, _ := w.repo.Show(ctx, doc, "")
			batch := w.db.NewBatch()
			for i := range n {
				blk := snap.Body.Blocks[1+i%199]
				t := Target{ID: blk.ID, Content: objstore.Sum(objstore.KindContent, flowdoc.EncodeContent(blk))}
				sg := Suggestion{ID: fmt.Sprintf("sbench%05d", i), Doc: doc, Status: StatusPending, Scope: Scope{Kind: ScopeBlock, Block: blk.ID},
					Base:  Baseline{Version: snap.Info.Hash, Label: snap.Info.Label, Fingerprint: snap.Info.Fingerprint, Targets: []Target{t}},
					Watch: []Target{t}, Ops: []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: blk.ID, Block: &blk}}}
				kv.SetRecord(batch, suggestionKey(sg.ID), sg)
				indexPending(batch, &sg)
			}
			w.svc.pend.created()
			if err := w.db.Apply(batch, kv.Sync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
			b.ResetTimer()
			for i := range b.N {
				w.save(doc, para("p1", fmt.Sprintf("edit %d", i)))
			}
		})
	}
}
