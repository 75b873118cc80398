package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
)

var ctx = context.Background()

func newRepo(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	o := Options{KV: testKV(t, dir)}
	if _, ok := t.(*testing.B); ok {
		// Benchmarks measure the disk, as the daemon runs (or
		// PostgreSQL with its WAL flushed).
		if err := Init(dir); err != nil {
			t.Fatal(err)
		}
		r, err := Open(dir, Options{KV: pgtest.Store(t, dir, kv.Options{})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	r, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// testKV opens a unit test's store in dir on the in-memory engine: the
// same Pebble code without the disk's syncs; or on PostgreSQL with
// FOLIO_TEST_ENGINE=postgres. Tests of what a disk does (crash, reopen,
// processes) open a data directory instead.
func testKV(tb testing.TB, dir string) kv.Options {
	return pgtest.Store(tb, dir, kv.Options{Engine: kv.EngineMemory})
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func para(id, text string) flowdoc.Block {
	return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
}

func docOf(n int) flowdoc.Document {
	d := flowdoc.Document{SchemaVersion: 1}
	for i := 0; i < n; i++ {
		d.Blocks = append(d.Blocks, para(fmt.Sprintf("b%d", i), fmt.Sprintf("paragraph %d", i)))
	}
	return d
}

func create(t testing.TB, r *Repo, n int) string {
	t.Helper()
	v, err := r.CreateDoc(ctx, CreateParams{Owner: "ana", Attrs: flowdoc.Attributes{Title: "T"}, Body: docOf(n)})
	if err != nil {
		t.Fatal(err)
	}
	if v.Label != "v1.r0" || v.Kind != objstore.KindCreate {
		t.Fatalf("first version = %s %s, want v1.r0 create", v.Label, v.Kind)
	}
	return v.Doc
}

func save(t testing.TB, r *Repo, doc string, base uint64, blocks ...flowdoc.Block) SaveResult {
	t.Helper()
	var ch []DraftChange
	for i := range blocks {
		ch = append(ch, DraftChange{Op: ChangeUpsert, Block: &blocks[i]})
	}
	res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", BaseSeq: base, Changes: ch})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCheckpointLabelsAndLog(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	res := save(t, r, doc, 1, para("b1", "changed"))
	if !res.Unsealed || res.Seq != 2 {
		t.Fatalf("save = %+v, want seq 2 unsealed", res)
	}
	v, ok, err := r.Seal(ctx, doc, objstore.ReasonIdle, "ana")
	if err != nil || !ok || v.Label != "v1.r1" {
		t.Fatalf("checkpoint = %+v %v %v, want v1.r1", v, ok, err)
	}
	// Nothing new: no version.
	if _, ok, err := r.Seal(ctx, doc, objstore.ReasonIdle, "ana"); ok || err != nil {
		t.Fatalf("empty checkpoint sealed a version: %v %v", ok, err)
	}
	d, _ := r.Draft(ctx, doc)
	if d.Unsealed {
		t.Fatal("draft still unsealed after checkpoint")
	}
	log, err := r.Log(ctx, doc, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Label != "v1.r1" || log[1].Label != "v1.r0" {
		t.Fatalf("log = %+v", log)
	}
	snap, err := r.Show(ctx, doc, "v1.r1")
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Body.Blocks[1].RichText[0].Text; got != "changed" {
		t.Fatalf("v1.r1 block b1 = %q", got)
	}
	old, _ := r.Show(ctx, doc, "v1.r0")
	if got := old.Body.Blocks[1].RichText[0].Text; got != "paragraph 1" {
		t.Fatalf("v1.r0 block b1 = %q (history rewritten?)", got)
	}
	var nf *NotFoundError
	if _, err := r.Show(ctx, doc, "v9.r9"); !errors.As(err, &nf) || nf.Latest != "v1.r1" {
		t.Fatalf("unknown label error = %v, want NotFoundError naming latest v1.r1", err)
	}
}

func TestDraftConflictRules(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	// Editor A and B both start at seq 1.
	a := save(t, r, doc, 1, para("b0", "A edits b0"))
	// B edits a different block from the stale seq: rebased and accepted.
	b := save(t, r, doc, 1, para("b2", "B edits b2"))
	if b.Seq != a.Seq+1 {
		t.Fatalf("B's seq = %d, want %d", b.Seq, a.Seq+1)
	}
	// B edits A's block from a seq before A's save: conflict with A's text.
	blk := para("b0", "B edits b0")
	_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "bo", BaseSeq: 1, Changes: []DraftChange{{Op: ChangeUpsert, Block: &blk}}})
	var ce *folio.ConflictError
	if !errors.As(err, &ce) || len(ce.Blocks) != 1 || ce.Blocks[0].ID != "b0" ||
		ce.Blocks[0].Block.RichText[0].Text != "A edits b0" {
		t.Fatalf("stale save of the same block = %v, want conflict carrying A's b0", err)
	}
	d, _ := r.Draft(ctx, doc)
	if d.Body.Blocks[0].RichText[0].Text != "A edits b0" || d.Body.Blocks[2].RichText[0].Text != "B edits b2" {
		t.Fatalf("acknowledged saves lost: %+v", d.Body.Blocks)
	}
	// Deleting a block another editor deleted later is a conflict; so is editing it.
	if _, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: d.Seq, Changes: []DraftChange{{Op: ChangeDelete, BlockID: "b1"}}}); err != nil {
		t.Fatal(err)
	}
	ghost := para("b1", "edit of a deleted block")
	_, err = r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: d.Seq, Changes: []DraftChange{{Op: ChangeUpsert, Block: &ghost}}})
	if !errors.As(err, &ce) || ce.Blocks[0].Block != nil {
		t.Fatalf("edit of a block deleted since baseSeq = %v, want conflict with deleted block", err)
	}
}

func TestSaveInsertMoveDelete(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	first, after1 := "", "b1"
	n1, n2 := para("n1", "new at start"), para("n2", "new after b1")
	res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: 1, Changes: []DraftChange{
		{Op: ChangeUpsert, Block: &n1, After: &first},
		{Op: ChangeUpsert, Block: &n2, After: &after1},
		{Op: ChangeMove, BlockID: "b0", After: &after1},
		{Op: ChangeDelete, BlockID: "b2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := r.Draft(ctx, doc)
	var ids []string
	for _, b := range d.Body.Blocks {
		ids = append(ids, b.ID)
	}
	if fmt.Sprint(ids) != "[n1 b1 b0 n2]" {
		t.Fatalf("order = %v", ids)
	}
	if d.Fingerprint != flowdoc.FingerprintOf(d.Body) || res.Fingerprint != d.Fingerprint {
		t.Fatal("fingerprint does not match the draft body")
	}
	v, _, err := r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", "")
	if err != nil {
		t.Fatal(err)
	}
	txnKinds := map[string]string{}
	ver, _ := r.objs.GetVersion(v.Hash)
	txn, _ := r.objs.GetTxn(ver.Txn)
	for _, e := range txn.Events {
		txnKinds[e.BlockID] = e.Op
	}
	want := map[string]string{"n1": "add", "n2": "add", "b2": "delete"}
	for id, op := range want {
		if txnKinds[id] != op {
			t.Errorf("txn event for %s = %q, want %q (all: %v)", id, txnKinds[id], op, txnKinds)
		}
	}
	// b0 and b1 swapped places: exactly one of them is reported moved.
	if (txnKinds["b0"] == "move") == (txnKinds["b1"] == "move") {
		t.Errorf("want exactly one of b0, b1 moved, got %v", txnKinds)
	}
	hist, err := r.BlockHistory(ctx, doc, "b2")
	if err != nil || len(hist) != 2 || !hist[1].Deleted || hist[1].Label != "v1.r1" {
		t.Fatalf("history of b2 = %+v %v", hist, err)
	}
	if _, ok, _ := r.BlockAt(doc, "b2"); ok {
		t.Fatal("deleted block still at head in the index")
	}
}

func TestRestore(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 4)
	v0, _ := r.Show(ctx, doc, "v1.r0")
	save(t, r, doc, 1, para("b3", "edited"))
	r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", "")
	d, _ := r.Draft(ctx, doc)
	save(t, r, doc, d.Seq, para("b0", "unsealed edit"))
	v, err := r.Restore(ctx, doc, "v1.r0", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if v.Label != "v2.r0" || v.Kind != objstore.KindRestore || v.RestoredFrom != "v1.r0" {
		t.Fatalf("restore = %+v, want v2.r0 restore from v1.r0", v)
	}
	// The unsealed edit was sealed first, not lost.
	log, _ := r.Log(ctx, doc, 0, 0)
	if len(log) != 4 || log[1].Reason != objstore.ReasonRestore {
		t.Fatalf("log = %+v, want the unsealed edit sealed (reason restore) before the restore", log)
	}
	s, _ := r.Show(ctx, doc, "")
	if string(flowdoc.CanonicalJSON(s.Body)) != string(flowdoc.CanonicalJSON(v0.Body)) {
		t.Fatal("restored body differs from the source version")
	}
	// Block restore.
	bv, err := r.RestoreBlock(ctx, doc, "v1.r1", "b3", "ana")
	if err != nil {
		t.Fatal(err)
	}
	if bv.Label != "v2.r1" {
		t.Fatalf("block restore label = %s, want v2.r1", bv.Label)
	}
	s, _ = r.Show(ctx, doc, "")
	if s.Body.Blocks[3].RichText[0].Text != "edited" {
		t.Fatalf("block b3 = %q after block restore", s.Body.Blocks[3].RichText[0].Text)
	}
	rep, err := r.Fsck(ctx, FsckOptions{})
	if err != nil || !rep.OK {
		t.Fatalf("fsck = %+v %v", rep, err)
	}
}

func TestRecoveryCheckpointOnOpen(t *testing.T) {
	dir := t.TempDir()
	Init(dir)
	r, _ := Open(dir, Options{})
	doc := create(t, r, 2)
	save(t, r, doc, 1, para("b0", "typed before the crash"))
	r.Close()
	r2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	d, sealed, err := r2.OpenDraft(ctx, doc, "ana")
	if err != nil {
		t.Fatal(err)
	}
	if sealed == nil || sealed.Kind != objstore.KindRecovery || sealed.Label != "v1.r1" {
		t.Fatalf("open sealed %+v, want a recovery checkpoint v1.r1", sealed)
	}
	if d.Unsealed || d.Body.Blocks[0].RichText[0].Text != "typed before the crash" {
		t.Fatalf("draft after recovery = %+v", d)
	}
	// The same session opening again seals nothing more.
	if _, again, _ := r2.OpenDraft(ctx, doc, "ana"); again != nil {
		t.Fatal("second open sealed again")
	}
}

func TestInvalidSaveStoresNothing(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 2)
	bad := flowdoc.Block{ID: "b0", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 9}, RichText: []flowdoc.Run{{Text: "x"}}}
	_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: 1, Changes: []DraftChange{{Op: ChangeUpsert, Block: &bad}}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid block saved: %v", err)
	}
	d, _ := r.Draft(ctx, doc)
	if d.Seq != 1 || d.Unsealed {
		t.Fatalf("draft changed by a rejected save: %+v", d)
	}
}

func TestReindexRebuildsProjections(t *testing.T) {
	r := newRepo(t)
	doc := create(t, r, 3)
	for i := 0; i < 5; i++ {
		d, _ := r.Draft(ctx, doc)
		save(t, r, doc, d.Seq, para(fmt.Sprintf("b%d", i%3), fmt.Sprintf("round %d", i)))
		r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", "")
	}
	before, _ := r.Log(ctx, doc, 0, 0)
	hist, _ := r.BlockHistory(ctx, doc, "b1")
	if err := r.Reindex(ctx, doc, ""); err != nil {
		t.Fatal(err)
	}
	after, _ := r.Log(ctx, doc, 0, 0)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("log changed by reindex:\n%v\n%v", before, after)
	}
	hist2, _ := r.BlockHistory(ctx, doc, "b1")
	if fmt.Sprint(hist) != fmt.Sprint(hist2) {
		t.Fatalf("block history changed by reindex:\n%v\n%v", hist, hist2)
	}
	if rep, _ := r.Fsck(ctx, FsckOptions{}); !rep.OK {
		t.Fatalf("fsck after reindex: %+v", rep.Problems)
	}
}

func TestEventStreamRetention(t *testing.T) {
	dir := t.TempDir()
	Init(dir)
	r, err := Open(dir, Options{EventRetention: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	doc := create(t, r, 2)
	seq := uint64(1)
	for i := 0; i < 300; i++ {
		res := save(t, r, doc, seq, para("b0", fmt.Sprintf("edit %d", i)))
		seq = res.Seq
	}
	last, _ := stream.Last(r.db, Stream(doc))
	first, _ := stream.FirstRetained(r.db, Stream(doc))
	if last != 301 || last-first+1 < 100 || last-first+1 > 100+trimEvery {
		t.Fatalf("stream keeps %d..%d, want about the last 100 of 301", first, last)
	}
	if _, err := stream.Read(r.db, Stream(doc), 0, 10); !errors.Is(err, stream.ErrTrimmed) {
		t.Fatalf("read from 0 after trim = %v, want ErrTrimmed", err)
	}
	evs, err := stream.Read(r.db, Stream(doc), first-1, 0)
	if err != nil || len(evs) != int(last-first+1) || evs[0].Seq != first {
		t.Fatalf("read retained = %d events, %v", len(evs), err)
	}
}
