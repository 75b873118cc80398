package repo

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

// Objects from draft states that were overwritten before any checkpoint
// disappear; everything reachable stays; fsck is clean afterwards.
func TestGCRemovesRejectedDraftContent(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	rejected := para("b1", "typed, then thrown away before any checkpoint")
	res := save(t, r, doc, 1, rejected)
	save(t, r, doc, res.Seq, para("b1", "what was kept"))
	if _, _, err := r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", ""); err != nil {
		t.Fatal(err)
	}
	gone := objstore.ID(flowdoc.ContentHash(rejected))
	if ok, _ := r.objs.Has(gone); !ok {
		t.Fatal("the rejected draft's content was never stored")
	}
	rep, err := r.GC(ctx, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 {
		t.Fatalf("gc removed %d objects, want 1 (%+v)", rep.Removed, rep)
	}
	if ok, _ := r.objs.Has(gone); ok {
		t.Fatal("the rejected draft's content is still there")
	}
	if f, err := r.Fsck(ctx, FsckOptions{}); err != nil || !f.OK {
		t.Fatalf("fsck after gc: %+v %v", f.Problems, err)
	}
	for _, l := range []string{"v1.r0", "v1.r1"} {
		if _, err := r.Show(ctx, doc, l); err != nil {
			t.Fatalf("show %s after gc: %v", l, err)
		}
	}
	// Nothing more to do the second time.
	if rep, _ := r.GC(ctx, GCOptions{}); rep.Removed != 0 {
		t.Fatalf("second gc removed %d", rep.Removed)
	}
}

// Versions that only a reflog entry names (their ref was deleted) stay
// while the entry is younger than the prune age, and go after.
func TestGCReflogPrune(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 2)
	head, _ := r.refs.Get(HeadRef(doc))
	b := r.db.NewBatch()
	if err := r.refs.Update(b, []refs.Update{{Name: HeadRef(doc), Old: head}}, "drop"); err != nil {
		t.Fatal(err)
	}
	if rep, _ := r.GC(ctx, GCOptions{}); rep.Removed != 0 {
		t.Fatalf("gc removed %d objects that a young reflog entry names", rep.Removed)
	}
	rep, err := r.GC(ctx, GCOptions{Prune: -1})
	if err != nil {
		t.Fatal(err)
	}
	// The version and its txn go; the blocks stay (the draft names them).
	if rep.Removed != 2 {
		t.Fatalf("gc with every reflog entry pruned removed %d objects, want 2", rep.Removed)
	}
	if ok, _ := r.objs.Has(head); ok {
		t.Fatal("the version of the deleted ref is still there")
	}
}

// GC runs again and again while a writer saves and checkpoints, reusing
// block contents that gc sees as garbage (a block flips between two texts,
// so the content objects are found already stored and not written). No
// object anything reaches is ever removed.
func TestGCWhileWriting(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 4)
	var wg sync.WaitGroup
	var failed atomic.Bool // stops the writer when the collector fails
	done := make(chan struct{})
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		seq := uint64(1)
		for i := 0; i < 300 && !failed.Load(); i++ {
			// A scratch state overwritten before any checkpoint becomes
			// garbage, and the same scratch text comes back five saves
			// later: found already stored, it is not written again.
			for _, text := range []string{fmt.Sprintf("scratch %d", i%5), fmt.Sprintf("final %d", i)} {
				blk := para(fmt.Sprintf("b%d", i%3), text)
				res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
				if err != nil {
					errs <- err
					return
				}
				seq = res.Seq
			}
			if i%4 == 0 {
				if _, _, err := r.Seal(ctx, doc, objstore.ReasonIdle, "ana"); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	removed, runs := 0, 0
	for running := true; running; runs++ {
		select {
		case <-done:
			running = false
		default:
		}
		rep, err := r.GC(ctx, GCOptions{Prune: -1})
		if err != nil {
			failed.Store(true)
			wg.Wait()
			t.Fatal(err)
		}
		removed += rep.Removed
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	f, err := r.Fsck(ctx, FsckOptions{})
	if err != nil || !f.OK {
		t.Fatalf("fsck after concurrent gc: %+v %v", f.Problems, err)
	}
	if _, err := r.Draft(ctx, doc); err != nil {
		t.Fatalf("draft after gc: %v", err)
	}
	if removed == 0 || runs < 5 {
		t.Fatalf("%d collections removed %d objects: the race was not exercised", runs, removed)
	}
	t.Logf("%d objects removed over %d collections", removed, runs)
}

// Every phase of a collection reports its progress, the mark with the
// number of objects as its total (the meter's percentage and time left).
func TestGCReportsMarkProgress(t *testing.T) {
	r := newRepo(t)
	for d := range 3 {
		body := flowdoc.Document{SchemaVersion: 1}
		for b := range 300 {
			body.Blocks = append(body.Blocks, para(fmt.Sprintf("b%d", b), fmt.Sprintf("document %d paragraph %d", d, b)))
		}
		if _, err := r.CreateDoc(ctx, CreateParams{Attrs: flowdoc.Attributes{Title: "T"}, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	last := map[string][2]int64{}
	calls := map[string]int{}
	rep, err := r.GC(ctx, GCOptions{Progress: func(what string, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		last[what] = [2]int64{done, total}
		calls[what]++
	}})
	if err != nil {
		t.Fatal(err)
	}
	n := int64(rep.Objects)
	if got := last["objects listed"]; got != [2]int64{n, n} {
		t.Errorf("listing ended at %v, want %d of %d", got, n, n)
	}
	if got := last["objects marked"]; got != [2]int64{n, n} || calls["objects marked"] < 2 {
		t.Errorf("mark ended at %v after %d reports, want %d of %d and reports while it ran", got, calls["objects marked"], n, n)
	}
}
