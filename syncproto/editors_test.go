package syncproto_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

func TestTwoEditors(t *testing.T) {
	for _, proto := range codecs {
		t.Run(proto, func(t *testing.T) {
			e := startEnv(t, nil)
			ctx := ctxT(t)
			recA, recB := newRecorder(), newRecorder()
			a := dial(t, e, "ta", proto, recA)
			b := dial(t, e, "tr", proto, recB) // an admin editing alice's document

			snapA, err := a.Open(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			snapB, err := b.Open(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			if snapA.Seq != snapB.Seq || len(snapA.Body.Blocks) != 3 || snapA.Head != "v1.r0" || snapA.Unsealed {
				t.Fatalf("snapshots: %+v / %+v", snapA, snapB)
			}
			base := snapA.Seq

			// Different blocks from the same base: both land.
			ackA, err := a.Save(ctx, "d1", base, upsert("p1", "one by alice"))
			if err != nil {
				t.Fatalf("alice save: %v", err)
			}
			ackB, err := b.Save(ctx, "d1", base, upsert("p2", "two by root"))
			if err != nil {
				t.Fatalf("root save on another block from the same base: %v", err)
			}
			if ackA.Seq != base+1 || ackB.Seq != base+2 || !ackB.Unsealed {
				t.Fatalf("acks: %+v %+v", ackA, ackB)
			}

			// Each sees the other's save, not its own.
			evA := recA.waitFor(t, "root's save at alice", func(evs []*syncproto.Event) bool { return len(evs) >= 1 })
			evB := recB.waitFor(t, "alice's save at root", func(evs []*syncproto.Event) bool { return len(evs) >= 1 })
			duA, duB := draftUpdated(t, evA[0]), draftUpdated(t, evB[0])
			if evA[0].Type != syncproto.TypeDraftUpdated || duA.Seq != ackB.Seq || duA.Blocks[0].Block.ID != "p2" ||
				blockText(*duA.Blocks[0].Block) != "two by root" || duA.Actor != "root" {
				t.Fatalf("alice got %+v", duA)
			}
			if duB.Seq != ackA.Seq || blockText(*duB.Blocks[0].Block) != "one by alice" || duB.Session != a.Welcome().Session {
				t.Fatalf("root got %+v", duB)
			}
			if evA[0].Stream != "doc:d1" || evA[0].Cursor <= snapA.Cursor {
				t.Fatalf("event cursor %d after snapshot cursor %d", evA[0].Cursor, snapA.Cursor)
			}

			// The same block from a stale seq: conflict with the server's block.
			_, err = b.Save(ctx, "d1", base, upsert("p1", "one by root"))
			var ce *folio.ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("stale save on p1: got %v, want draft.conflict", err)
			}
			if ce.Seq != ackB.Seq || len(ce.Blocks) != 1 || ce.Blocks[0].ID != "p1" || ce.Blocks[0].Seq != ackA.Seq ||
				blockText(*ce.Blocks[0].Block) != "one by alice" {
				t.Fatalf("conflict: %+v", ce)
			}

			// Rebased on the current seq it lands.
			if _, err := b.Save(ctx, "d1", ce.Seq, upsert("p1", "one by root")); err != nil {
				t.Fatal(err)
			}
			d, _ := e.Repo.Draft(ctx, "d1")
			got := []string{blockText(d.Body.Blocks[0]), blockText(d.Body.Blocks[1]), blockText(d.Body.Blocks[2])}
			if fmt.Sprint(got) != "[one by root two by root three]" {
				t.Fatalf("draft: %v", got)
			}
		})
	}
}

// TestNothingAcknowledgedLost has two editors save concurrently, each on
// its own blocks and sometimes on a shared one; every acknowledged save
// is in the draft and every other one was a conflict.
func TestNothingAcknowledgedLost(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	n := 60
	if testing.Short() {
		n = 20
	}
	type result struct {
		acked     map[string]string // block -> last acked text
		conflicts int
	}
	run := func(c *client.Client, who string, own string, res *result) error {
		snap, err := c.Open(ctx, "d1")
		if err != nil {
			return err
		}
		seq := snap.Seq
		for i := 0; i < n; i++ {
			block := own
			if i%5 == 0 {
				block = "p3" // contested
			}
			text := fmt.Sprintf("%s %d", who, i)
			ack, err := c.Save(ctx, "d1", seq, upsert(block, text))
			var ce *folio.ConflictError
			switch {
			case errors.As(err, &ce):
				res.conflicts++
				seq = ce.Seq
				continue
			case err != nil:
				return err
			}
			res.acked[block] = text
			seq = ack.Seq
		}
		return nil
	}
	start, _ := e.Repo.Draft(ctx, "d1")
	a := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	b := dial(t, e, "tr", syncproto.SubprotocolJSON, nil)
	ra, rb := &result{acked: map[string]string{}}, &result{acked: map[string]string{}}
	var wg sync.WaitGroup
	var errA, errB error
	wg.Add(2)
	go func() { defer wg.Done(); errA = run(a, "alice", "p1", ra) }()
	go func() { defer wg.Done(); errB = run(b, "root", "p2", rb) }()
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	d, _ := e.Repo.Draft(ctx, "d1")
	if got := blockText(d.Body.Blocks[0]); got != ra.acked["p1"] {
		t.Errorf("p1 = %q, last acked %q", got, ra.acked["p1"])
	}
	if got := blockText(d.Body.Blocks[1]); got != rb.acked["p2"] {
		t.Errorf("p2 = %q, last acked %q", got, rb.acked["p2"])
	}
	// p3 holds one of the two editors' acknowledged texts.
	if got := blockText(d.Body.Blocks[2]); got != ra.acked["p3"] && got != rb.acked["p3"] {
		t.Errorf("p3 = %q, acked %q / %q", got, ra.acked["p3"], rb.acked["p3"])
	}
	acks := 2*n - ra.conflicts - rb.conflicts
	if d.Seq != start.Seq+uint64(acks) {
		t.Errorf("draft seq %d after %d acknowledged saves", d.Seq, acks)
	}
}
