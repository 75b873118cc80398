package repo

import (
	"errors"
	"slices"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
)

func mergeSave(r *Repo, doc, actor string, base uint64, merge bool, ch ...DraftChange) (SaveResult, error) {
	return r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: actor, BaseSeq: base, Changes: ch, Merge: merge})
}

func upsert(b flowdoc.Block) DraftChange { return DraftChange{Op: ChangeUpsert, Block: &b} }

func textOf(t *testing.T, r *Repo, doc, id string) string {
	t.Helper()
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range d.Body.Blocks {
		if b.ID == id {
			return flowdoc.PlainText(b.RichText)
		}
	}
	t.Fatalf("no block %s", id)
	return ""
}

// TestSaveMerge: two saves of one paragraph from the same base merge when
// one opts in and the edits do not overlap; the event names both authors.
func TestSaveMerge(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3) // b1 is "paragraph 1"
	d0, _ := r.Draft(ctx, doc)
	base := d0.Seq
	if _, err := mergeSave(r, doc, "ana", base, true, upsert(para("b1", "A paragraph 1"))); err != nil {
		t.Fatal(err)
	}
	// Strict: the same block changed since base is a conflict.
	_, err := mergeSave(r, doc, "ben", base, false, upsert(para("b1", "paragraph 1 ends.")))
	var ce *folio.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("strict save: %v, want a conflict", err)
	}
	res, err := mergeSave(r, doc, "ben", base, true, upsert(para("b1", "paragraph 1 ends.")))
	if err != nil {
		t.Fatalf("merge save: %v", err)
	}
	if got := textOf(t, r, doc, "b1"); got != "A paragraph 1 ends." {
		t.Fatalf("merged text %q", got)
	}
	if len(res.Merged) != 1 || res.Merged[0].ID != "b1" || flowdoc.PlainText(res.Merged[0].Block.RichText) != "A paragraph 1 ends." {
		t.Fatalf("ack's merged blocks: %+v", res.Merged)
	}
	evs, err := r.ReadEvents(ctx, Stream(doc), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var de DraftEvent
	if err := kv.Unmarshal(evs[len(evs)-1].Data, &de); err != nil {
		t.Fatal(err)
	}
	if de.Seq != res.Seq || !slices.Equal(de.Authors, []string{"ana", "ben"}) || de.Blocks[0].ID != "b1" {
		t.Fatalf("event %+v: want seq %d, authors ana and ben", de, res.Seq)
	}
	// ana deletes "graph"; a third editor still at base typing inside
	// it conflicts, typing right after it merges.
	dm, _ := r.Draft(ctx, doc)
	if _, err := mergeSave(r, doc, "ana", dm.Seq, true, upsert(para("b1", "A para 1 ends."))); err != nil {
		t.Fatal(err)
	}
	if _, err := mergeSave(r, doc, "cy", base, true, upsert(para("b1", "paragXraph 1"))); !errors.As(err, &ce) {
		t.Fatalf("typing inside a word deleted since: %v, want a conflict", err)
	}
	if _, err := mergeSave(r, doc, "cy", base, true, upsert(para("b1", "paragraph, 1"))); err != nil {
		t.Fatalf("a third save: %v", err)
	}
	if got := textOf(t, r, doc, "b1"); got != "A para, 1 ends." {
		t.Fatalf("merged text %q", got)
	}
	// Other blocks of the save stay strict: a stale non-text change is
	// still a conflict, and nothing of the save is stored.
	d1, _ := r.Draft(ctx, doc)
	if _, err := mergeSave(r, doc, "ana", d1.Seq, true, upsert(para("b2", "x"))); err != nil {
		t.Fatal(err)
	}
	code := flowdoc.Block{ID: "b2", Type: flowdoc.Code, Attrs: &flowdoc.Attrs{Text: "y"}}
	if _, err := mergeSave(r, doc, "ben", d1.Seq, true, upsert(para("b0", "z paragraph 0")), upsert(code)); !errors.As(err, &ce) {
		t.Fatalf("a stale block turned into code: %v, want a conflict", err)
	}
	if got := textOf(t, r, doc, "b0"); got != "paragraph 0" {
		t.Fatalf("a conflicting save stored %q", got)
	}
}

// TestSaveMergeNeedsBase: after a restore (a change the revisions log
// does not see) or on a new process, a stale save is strict again.
func TestSaveMergeNeedsBase(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := create(t, r, 2)
	d0, _ := r.Draft(ctx, doc)
	if _, err := mergeSave(r, doc, "ana", d0.Seq, true, upsert(para("b1", "A paragraph 1"))); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if r, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ce *folio.ConflictError
	if _, err := mergeSave(r, doc, "ben", d0.Seq, true, upsert(para("b1", "paragraph 1!"))); !errors.As(err, &ce) {
		t.Fatalf("after a restart: %v, want a conflict (the base is not known)", err)
	}
	// Once saves are recorded again, merging works again.
	d1, _ := r.Draft(ctx, doc)
	if _, err := mergeSave(r, doc, "ana", d1.Seq, true, upsert(para("b1", "A paragraph 1."))); err != nil {
		t.Fatal(err)
	}
	if _, err := mergeSave(r, doc, "ben", d1.Seq, true, upsert(para("b1", "The A paragraph 1"))); err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, r, doc, "b1"); got != "The A paragraph 1." {
		t.Fatalf("merged text %q", got)
	}
	// A block deleted and inserted again since the base is not merged
	// with its old self.
	d2, _ := r.Draft(ctx, doc)
	if _, err := mergeSave(r, doc, "ana", d2.Seq, true, DraftChange{Op: ChangeDelete, BlockID: "b1"}); err != nil {
		t.Fatal(err)
	}
	d3, _ := r.Draft(ctx, doc)
	if _, err := mergeSave(r, doc, "ana", d3.Seq, true, upsert(para("b1", "new"))); err != nil {
		t.Fatal(err)
	}
	if _, err := mergeSave(r, doc, "ben", d2.Seq, true, upsert(para("b1", "The A paragraph 1. More"))); !errors.As(err, &ce) {
		t.Fatalf("a block deleted and inserted since the base: %v, want a conflict", err)
	}
}

// TestSaveMergeBeforeLock: a save merges before it takes the document
// lock; when another save changes the block in between, that merge is
// stale and the save merges again with the block as it is then, so no
// acknowledged edit is lost. The ack's merged block is the caller's own.
func TestSaveMergeBeforeLock(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 2) // b1 is "paragraph 1"
	d0, _ := r.Draft(ctx, doc)
	if _, err := mergeSave(r, doc, "ana", d0.Seq, true, upsert(para("b1", "A paragraph 1"))); err != nil {
		t.Fatal(err)
	}
	// cy's save slips in after ben's early merge (ana's and ben's edits)
	// and before ben takes the lock.
	var cyErr error
	r.afterPremerge = func(string) {
		r.afterPremerge = nil
		d, _ := r.Draft(ctx, doc)
		_, cyErr = mergeSave(r, doc, "cy", d.Seq, true, upsert(para("b1", "A para-graph 1")))
	}
	res, err := mergeSave(r, doc, "ben", d0.Seq, true, upsert(para("b1", "paragraph 1 ends.")))
	if cyErr != nil {
		t.Fatalf("the save in between: %v", cyErr)
	}
	if err != nil {
		t.Fatalf("ben's save: %v", err)
	}
	const want = "A para-graph 1 ends."
	if got := textOf(t, r, doc, "b1"); got != want {
		t.Fatalf("merged text %q, want %q (every acknowledged edit)", got, want)
	}
	if len(res.Merged) != 1 || flowdoc.PlainText(res.Merged[0].Block.RichText) != want {
		t.Fatalf("ack's merged blocks: %+v", res.Merged)
	}
	// The caller may change what the ack gave it: the next merge still
	// starts from the stored block.
	res.Merged[0].Block.RichText[0].Text = "garbage"
	if _, err := mergeSave(r, doc, "ana", res.Seq-1, true, upsert(para("b1", "A para-graph 1!"))); err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, r, doc, "b1"); got != "A para-graph 1 ends.!" {
		t.Fatalf("merged text %q", got)
	}
}
