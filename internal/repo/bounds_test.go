package repo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// upserts returns n changes that each insert a new paragraph.
func upserts(n int, prefix string) []DraftChange {
	ch := make([]DraftChange, n)
	for i := range ch {
		b := para(fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("inserted %d", i))
		ch[i] = DraftChange{Op: ChangeUpsert, Block: &b}
	}
	return ch
}

// stripeMate returns a document id that the former striped lock table
// (fnv32a % 256) put on the same lock as doc.
func stripeMate(doc string) string {
	stripe := func(s string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(s))
		return h.Sum32() % 256
	}
	for i := 0; ; i++ {
		if id := fmt.Sprintf("mate%d", i); stripe(id) == stripe(doc) {
			return id
		}
	}
}

// A 100,000-change save is refused before any work: it does not even wait
// for the document lock (held here by another writer the whole time), the
// draft stays as it was, and saves on other documents — one that shared a
// lock stripe with it included — complete meanwhile.
func TestHugeSaveRefusedBeforeWork(t *testing.T) {
	r := newRepo(t)
	for _, id := range []string{"big", stripeMate("big"), "other"} {
		if _, err := r.CreateDoc(ctx, CreateParams{ID: id, Owner: "ana", Attrs: flowdoc.Attributes{Title: "T"}, Body: docOf(3)}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := r.Draft(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}

	// Another writer holds "big" while the huge save arrives. A save that
	// tried to take the lock would wait until the deadline and fail with
	// DeadlineExceeded instead of the limit error.
	release, err := r.writing(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	_, err = r.SaveDraft(c, SaveParams{Doc: "big", Actor: "author-a", BaseSeq: before.Seq, Changes: upserts(100000, "n")})
	if errs.KindOf(err) != errs.TooLarge || errs.CodeOf(err) != CodeTooManyChanges {
		t.Fatalf("100k-change save: %v (kind %s, code %s), want too_large too_many_changes", err, errs.KindOf(err), errs.CodeOf(err))
	}
	// Documents other than "big" are not behind its lock.
	for _, id := range []string{stripeMate("big"), "other"} {
		d, err := r.Draft(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		save(t, r, id, d.Seq, para("b0", "edited while big is locked"))
	}
	release()

	after, err := r.Draft(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if after.Seq != before.Seq || after.Fingerprint != before.Fingerprint || len(after.Body.Blocks) != 3 {
		t.Errorf("refused save changed the draft: seq %d -> %d, %d blocks", before.Seq, after.Seq, len(after.Body.Blocks))
	}
}

// The limits on blocks and runs are checked before any block is
// normalized, for bodies and changes alike, with the errors the HTTP
// decoder gives when it stops at the same limits.
func TestRequestLimitsOnBodiesAndChanges(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{Limits: flowdoc.Limits{MaxBlocks: 10}, MaxChanges: 5, MaxRuns: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	doc := create(t, r, 2)
	many := func(n, runs int) *flowdoc.Document {
		d := docOf(n)
		for i := 0; i < runs; i++ {
			d.Blocks[0].RichText = append(d.Blocks[0].RichText, flowdoc.Run{Text: "x", Marks: []flowdoc.Mark{flowdoc.Bold}})
		}
		return &d
	}
	tests := []struct {
		name string
		p    SaveParams
		code string
	}{
		{"changes", SaveParams{Changes: upserts(6, "c")}, CodeTooManyChanges},
		{"body blocks", SaveParams{Body: many(11, 0)}, CodeTooManyBlocks},
		{"body runs", SaveParams{Body: many(1, 20)}, CodeTooManyRuns},
		{"change blocks", SaveParams{Changes: append(upserts(5, "c")[:0], DraftChange{Op: ChangeUpsert, Block: &flowdoc.Block{ID: "d", Type: flowdoc.Details, Children: many(10, 0).Blocks}})}, CodeTooManyBlocks},
	}
	for _, tt := range tests {
		tt.p.Doc, tt.p.Actor, tt.p.BaseSeq = doc, "author-a", 1
		_, err := r.SaveDraft(ctx, tt.p)
		if got := errs.CodeOf(err); got != tt.code || errs.KindOf(err) != errs.TooLarge {
			t.Errorf("%s: %v (code %s), want %s", tt.name, err, got, tt.code)
		}
	}
	if _, err := r.CreateDoc(ctx, CreateParams{Owner: "ana", Attrs: flowdoc.Attributes{Title: "T"}, Body: *many(11, 0)}); errs.CodeOf(err) != CodeTooManyBlocks {
		t.Errorf("create with 11 blocks, limit 10: %v", err)
	}
}

// countdownCtx is a context whose Err turns Canceled after n calls: it
// makes "the caller went away half-way through" deterministic.
type countdownCtx struct {
	context.Context
	n atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// A save whose caller goes away half-way through its work stops and
// stores nothing.
func TestCanceledSaveStopsAndStoresNothing(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 5)
	before, _ := r.Draft(ctx, doc)
	for _, after := range []int64{1, 10, 1000, 3000} {
		c := &countdownCtx{Context: ctx}
		c.n.Store(after)
		_, err := r.SaveDraft(c, SaveParams{Doc: doc, Actor: "author-a", BaseSeq: before.Seq, Changes: upserts(3000, "n")})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("save canceled after %d checks: %v, want context.Canceled", after, err)
		}
		if c.n.Load() > 0 {
			t.Errorf("canceled after %d checks: the save checked ctx only %d times", after, after-c.n.Load())
		}
	}
	d, _ := r.Draft(ctx, doc)
	if d.Seq != before.Seq || len(d.Body.Blocks) != 5 {
		t.Errorf("canceled saves changed the draft: seq %d -> %d, %d blocks", before.Seq, d.Seq, len(d.Body.Blocks))
	}
}

// A save waiting for a document another writer holds gives up when its
// caller does.
func TestSaveWaitingForLockGivesUp(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 1)
	release, err := r.writing(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	c, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := r.SaveDraft(c, SaveParams{Doc: doc, Actor: "author-a", BaseSeq: 1, Changes: upserts(1, "n")})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("save waiting for a held document, caller gone: %v", err)
	}
}

// Insert, move and delete keep their meaning with the indexed block list:
// one save of changes against a large draft gives the same body as
// applying the changes one save at a time.
func TestManyChangesOneSaveEqualsOneByOne(t *testing.T) {
	r := newRepo(t)
	a := create(t, r, 200)
	b := create(t, r, 200)
	var ch []DraftChange
	str := func(s string) *string { return &s }
	for i := 0; i < 300; i++ {
		switch i % 5 {
		case 0: // insert after an existing block
			blk := para(fmt.Sprintf("n%d", i), "new")
			ch = append(ch, DraftChange{Op: ChangeUpsert, Block: &blk, After: str(fmt.Sprintf("b%d", (i*7)%200))})
		case 1: // move to the start
			ch = append(ch, DraftChange{Op: ChangeMove, BlockID: fmt.Sprintf("b%d", (i*3)%200), After: str("")})
		case 2: // edit in place
			blk := para(fmt.Sprintf("b%d", (i*11)%200), fmt.Sprintf("edit %d", i))
			ch = append(ch, DraftChange{Op: ChangeUpsert, Block: &blk})
		case 3: // delete
			ch = append(ch, DraftChange{Op: ChangeDelete, BlockID: fmt.Sprintf("b%d", (i*13)%200)})
		case 4: // edit and move after an inserted block
			blk := para(fmt.Sprintf("b%d", (i*17)%200), "moved")
			ch = append(ch, DraftChange{Op: ChangeUpsert, Block: &blk, After: str(fmt.Sprintf("n%d", i-4))})
		}
	}
	_, errAll := r.SaveDraft(ctx, SaveParams{Doc: a, Actor: "author-a", BaseSeq: 1, Changes: ch})
	var errOne error
	seq := uint64(1)
	for _, c := range ch {
		res, err := r.SaveDraft(ctx, SaveParams{Doc: b, Actor: "author-a", BaseSeq: seq, Changes: []DraftChange{c}})
		if err != nil {
			errOne = err
			break
		}
		if res.Seq > seq {
			seq = res.Seq
		}
	}
	if errAll != nil || errOne != nil {
		t.Fatalf("one save: %v; one by one: %v", errAll, errOne)
	}
	da, _ := r.Draft(ctx, a)
	db, _ := r.Draft(ctx, b)
	if da.Fingerprint != db.Fingerprint {
		t.Errorf("one save of %d changes and the same changes one by one differ: %d vs %d blocks", len(ch), len(da.Body.Blocks), len(db.Body.Blocks))
	}
}
