package syncproto_test

import (
	"errors"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/syncproto"
)

// TestMergeSameParagraph: over the real socket, two connections edit the
// same paragraph from the same baseSeq, one at its start and one at its
// end. With merge both are acknowledged, the second ack carries the
// merged block, the first editor gets it in draft.updated with both
// authors, and the draft holds both texts. Without merge the second save
// conflicts as before; overlapping edits conflict even with merge.
func TestMergeSameParagraph(t *testing.T) {
	for _, proto := range codecs {
		t.Run(proto, func(t *testing.T) {
			e := startEnv(t, nil)
			ctx := ctxT(t)
			recA, recB := newRecorder(), newRecorder()
			a := dial(t, e, "ta", proto, recA)
			b := dial(t, e, "tr", proto, recB)
			snap, err := a.Open(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Open(ctx, "d1"); err != nil {
				t.Fatal(err)
			}
			base := snap.Seq // p2 is "two"
			ackA, err := a.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: base, Merge: true,
				Changes: []syncproto.Change{upsert("p2", "Start: two")}})
			if err != nil || len(ackA.Merged) != 0 {
				t.Fatalf("first save: %+v, %v", ackA, err)
			}
			// Strict (an old client): a conflict, nothing stored.
			var ce *folio.ConflictError
			if _, err := b.Save(ctx, "d1", base, upsert("p2", "two, the end")); !errors.As(err, &ce) {
				t.Fatalf("strict save of the same paragraph: %v, want a conflict", err)
			}
			ackB, err := b.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: base, Merge: true,
				Changes: []syncproto.Change{upsert("p2", "two, the end")}})
			if err != nil {
				t.Fatalf("merging save: %v", err)
			}
			if ackB.Seq != ackA.Seq+1 || len(ackB.Merged) != 1 || ackB.Merged[0].ID != "p2" ||
				blockText(*ackB.Merged[0].Block) != "Start: two, the end" {
				t.Fatalf("second ack: %+v", ackB)
			}
			evs := recA.waitFor(t, "the merged block at the first editor", func(evs []*syncproto.Event) bool { return len(evs) >= 1 })
			du := draftUpdated(t, evs[0])
			if du.Seq != ackB.Seq || len(du.Blocks) != 1 || blockText(*du.Blocks[0].Block) != "Start: two, the end" ||
				len(du.Authors) != 2 || du.Authors[0] != "alice" || du.Authors[1] != "root" {
				t.Fatalf("draft.updated at the first editor: %+v", du)
			}
			d, err := e.Repo.Draft(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			if got := blockText(d.Body.Blocks[1]); got != "Start: two, the end" {
				t.Fatalf("draft holds %q", got)
			}
			// Overlapping: both replace "two" from the same base.
			if _, err := a.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: ackB.Seq, Merge: true,
				Changes: []syncproto.Change{upsert("p2", "Start: 2, the end")}}); err != nil {
				t.Fatal(err)
			}
			_, err = b.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: ackB.Seq, Merge: true,
				Changes: []syncproto.Change{upsert("p2", "Start: deux, the end")}})
			if !errors.As(err, &ce) || len(ce.Blocks) != 1 || blockText(*ce.Blocks[0].Block) != "Start: 2, the end" {
				t.Fatalf("overlapping merge: %v, want a conflict with the server's block", err)
			}
		})
	}
}
