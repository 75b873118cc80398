package repo

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
)

// A deleted document is missing to every read and list, keeps its
// history for an undelete, and is purged by the first gc after the grace
// period, with the objects only it reached.
func TestSoftDeleteUndeleteAndPurge(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	r, err := Open(filepath.Join(dir), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	doc, keep := create(t, r, 2), create(t, r, 1)
	only := para("b0", "words only the deleted document ever held")
	save(t, r, doc, 1, only)
	if _, _, err := r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", "kept"); err != nil {
		t.Fatal(err)
	}
	del, err := r.DeleteDoc(ctx, doc, "ana")
	if err != nil || del.DeletedBy != "ana" || !del.Deleted.Equal(now) || del.Head != "v1.r1" {
		t.Fatalf("DeleteDoc = %+v, %v", del, err)
	}
	var nf *NotFoundError
	for name, err := range map[string]error{
		"GetDoc": func() error { _, err := r.GetDoc(ctx, doc); return err }(),
		"Log":    func() error { _, err := r.Log(ctx, doc, 0, 0); return err }(),
		"Show":   func() error { _, err := r.Show(ctx, doc, ""); return err }(),
		"Draft":  func() error { _, err := r.Draft(ctx, doc); return err }(),
		"Save": func() error {
			_, err := r.SaveDraft(ctx, SaveParams{Doc: doc, BaseSeq: 2, Body: &flowdoc.Document{SchemaVersion: 1}})
			return err
		}(),
		"Delete": func() error { _, err := r.DeleteDoc(ctx, doc, "ana"); return err }(),
	} {
		if !errors.As(err, &nf) || nf.Name != doc {
			t.Errorf("%s of a deleted document: %v, want not found", name, err)
		}
	}
	if docs, _ := r.ListDocs(ctx, ""); len(docs) != 1 || docs[0].ID != keep {
		t.Errorf("ListDocs = %+v, want only %s", docs, keep)
	}
	if ds, _ := r.ListDeleted(ctx, ""); len(ds) != 1 || ds[0].ID != doc {
		t.Errorf("ListDeleted = %+v", ds)
	}
	if f, err := r.Fsck(ctx, FsckOptions{}); err != nil || !f.OK {
		t.Errorf("fsck with a deleted document: %+v %v", f.Problems, err)
	}
	if _, err := r.CreateDoc(ctx, CreateParams{ID: doc, Attrs: flowdoc.Attributes{Title: "x"}}); !errors.Is(err, ErrConflict) {
		t.Errorf("a new document with a deleted one's id: %v, want a conflict", err)
	}
	// Undelete brings it back as it was; a second undelete conflicts.
	if _, err := r.UndeleteDoc(ctx, doc, "admin"); err != nil {
		t.Fatal(err)
	}
	if vs, err := r.Log(ctx, doc, 0, 0); err != nil || len(vs) != 2 || vs[0].Message != "kept" {
		t.Fatalf("log after undelete: %+v %v", vs, err)
	}
	if _, err := r.UndeleteDoc(ctx, doc, "admin"); !errors.Is(err, ErrConflict) {
		t.Errorf("undelete of a live document: %v", err)
	}
	// Deleted again: a gc within the grace period keeps it, one after
	// purges it and the content only it held.
	if _, err := r.DeleteDoc(ctx, doc, "ana"); err != nil {
		t.Fatal(err)
	}
	advance(DefaultPrune - time.Hour)
	if rep, err := r.GC(ctx, GCOptions{}); err != nil || rep.Purged != 0 {
		t.Fatalf("gc within the grace period: %+v %v", rep, err)
	}
	if _, err := r.UndeleteDoc(ctx, doc, "admin"); err != nil {
		t.Fatalf("undelete within the grace period: %v", err)
	}
	if _, err := r.DeleteDoc(ctx, doc, "ana"); err != nil {
		t.Fatal(err)
	}
	advance(DefaultPrune + time.Hour)
	if rep, err := r.GC(ctx, GCOptions{DryRun: true}); err != nil || rep.Purged != 1 {
		t.Fatalf("dry run: %+v %v", rep, err)
	}
	gone := objstore.ID(flowdoc.ContentHash(only))
	if ok, _ := r.objs.Has(gone); !ok {
		t.Fatal("a dry run removed content")
	}
	rep, err := r.GC(ctx, GCOptions{})
	if err != nil || rep.Purged != 1 || rep.Removed == 0 {
		t.Fatalf("gc after the grace period: %+v %v", rep, err)
	}
	if ok, _ := r.objs.Has(gone); ok {
		t.Error("the purged document's own content is still stored")
	}
	// Its stream goes with it (events name its history), numbering kept:
	// a cursor into it must resync.
	if last, err := r.LastEvent(ctx, Stream(doc)); err != nil || last == 0 {
		t.Errorf("last event of the purged stream = %d %v, want its old number", last, err)
	}
	if evs, err := r.ReadEvents(ctx, Stream(doc), 0, 0); !errors.Is(err, stream.ErrTrimmed) {
		t.Errorf("reading the purged document's stream: %d events, %v; want ErrTrimmed", len(evs), err)
	}
	if ds, _ := r.ListDeleted(ctx, ""); len(ds) != 0 {
		t.Errorf("ListDeleted after the purge = %+v", ds)
	}
	if _, err := r.UndeleteDoc(ctx, doc, "admin"); !errors.As(err, &nf) {
		t.Errorf("undelete after the purge: %v, want not found", err)
	}
	if f, err := r.Fsck(ctx, FsckOptions{}); err != nil || !f.OK {
		t.Fatalf("fsck after the purge: %+v %v", f.Problems, err)
	}
	if _, err := r.CreateDoc(ctx, CreateParams{ID: doc, Attrs: flowdoc.Attributes{Title: "again"}}); err != nil {
		t.Errorf("the id of a purged document is free again: %v", err)
	}
	if vs, err := r.Log(ctx, doc, 0, 0); err != nil || len(vs) != 1 {
		t.Errorf("log of the new document of that id: %+v %v", vs, err)
	}
	if vs, err := r.Log(ctx, keep, 0, 0); err != nil || len(vs) != 1 {
		t.Errorf("the other document: %+v %v", vs, err)
	}
}
