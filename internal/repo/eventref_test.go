package repo

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
)

// openDisk opens (creating when asked) a repository in dir on disk, so
// that a test can close it and read what a restarted daemon reads.
func openDisk(t *testing.T, dir string, create bool) *Repo {
	t.Helper()
	if create {
		if err := Init(dir); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sealingHistory makes a history whose events cover every stored form: a
// sealing save that edits, inserts and deletes blocks and changes the
// attributes over a session; a save without a seal and its checkpoint; a
// restore (a sealing change made from a whole body).
func sealingHistory(t *testing.T, r *Repo) string {
	t.Helper()
	doc := create(t, r, 4)
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	edited, added := para("b1", "edited 世界 👋"), para("n1", "a new block")
	after := "b0"
	title := flowdoc.Attributes{Title: "Renamed"}
	res, err := r.SaveDraft(ctx, SaveParams{Doc: doc, Actor: "ana", Session: "s7", BaseSeq: d.Seq, Attrs: &title,
		Changes: []DraftChange{{Op: ChangeUpsert, Block: &edited}, {Op: ChangeUpsert, Block: &added, After: &after},
			{Op: ChangeDelete, BlockID: "b2"}}, Seal: objstore.ReasonManual})
	if err != nil || res.Version == nil {
		t.Fatalf("sealing save: %+v %v", res, err)
	}
	res = save(t, r, doc, res.Seq, para("b3", "typed, not sealed"))
	if _, created, err := r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", ""); err != nil || !created {
		t.Fatalf("checkpoint: %v %v", created, err)
	}
	if _, err := r.Restore(ctx, doc, "v1.r0", "bo"); err != nil {
		t.Fatal(err)
	}
	return doc
}

// A sealing change's events are stored by reference to the version it
// seals, and a reader of the store (a restarted daemon, a client
// replaying from an old cursor) gets each exactly as it was published.
func TestSealedEventsReadBackAsPublished(t *testing.T) {
	dir := t.TempDir()
	r := openDisk(t, dir, true)
	doc := sealingHistory(t, r)
	published, err := r.ReadEvents(ctx, Stream(doc), 0, 0) // the hub's tail, then the store
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = openDisk(t, dir, false)
	defer r.Close()
	stored, err := stream.Read(r.db, Stream(doc), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]int{}
	for _, e := range stored {
		if e.Ref {
			refs[e.Type]++
			if bytes.Contains(e.Data, []byte("edited")) || bytes.Contains(e.Data, []byte("a new block")) {
				t.Errorf("event %d (%s) stored by reference still holds block text", e.Seq, e.Type)
			}
		}
	}
	// Every version.created is stored by reference (the first version's,
	// the sealing save's, the checkpoint's, the restore's); so are the
	// draft.updated of the sealing save and of the restore, not that of
	// the save the checkpoint sealed later.
	if refs[EventDraftUpdated] != 2 || refs[EventVersionCreated] != 4 {
		t.Errorf("events stored by reference: %v, want 2 draft.updated and 4 version.created", refs)
	}
	for _, limit := range []int{0, 1, 2} { // a page may end between a draft.updated and its version
		var got []stream.Event
		for after := uint64(0); ; {
			evs, err := r.ReadEvents(ctx, Stream(doc), after, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) == 0 {
				break
			}
			got = append(got, evs...)
			after = evs[len(evs)-1].Seq
		}
		if len(got) != len(published) {
			t.Fatalf("limit %d: read back %d events, %d were published", limit, len(got), len(published))
		}
		for i, e := range got {
			p := published[i]
			if e.Ref || e.Seq != p.Seq || e.Type != p.Type || e.Time != p.Time || !bytes.Equal(e.Data, p.Data) {
				t.Errorf("limit %d: event %d read back as %s at %d %x\nwas published as %s at %d %x", limit, p.Seq,
					e.Type, e.Time, e.Data, p.Type, p.Time, p.Data)
			}
		}
	}
	// What a client sees of the sealing save.
	var de DraftEvent
	if err := kv.Unmarshal(published[1].Data, &de); err != nil || published[1].Type != EventDraftUpdated {
		t.Fatalf("event 2: %s %v", published[1].Type, err)
	}
	var ve VersionEvent
	if err := kv.Unmarshal(published[2].Data, &ve); err != nil || ve.Label != "v1.r1" || ve.Fingerprint != de.Fingerprint {
		t.Fatalf("event 3: %+v %v", ve, err)
	}
	if len(de.Blocks) != 3 || de.Session != "s7" || de.Attrs == nil || de.Attrs.Title != "Renamed" || len(de.Order) != 4 {
		t.Fatalf("draft.updated of the sealing save: %+v", de)
	}
	for _, eb := range de.Blocks {
		switch eb.ID {
		case "b1", "n1":
			if eb.Block == nil || eb.Block.ID != eb.ID || eb.Block.RichText[0].Text == "" {
				t.Errorf("block %s: %+v", eb.ID, eb.Block)
			}
		case "b2":
			if eb.Block != nil {
				t.Errorf("deleted block b2 has content %+v", eb.Block)
			}
		}
	}
	if f, err := r.Fsck(ctx, FsckOptions{}); err != nil || !f.OK {
		t.Fatalf("fsck: %+v %v", f.Problems, err)
	}
}

// Stores written before hold every event whole: they read as they are.
func TestWholeEventsOfOlderStoresRead(t *testing.T) {
	r := newRepo(t)
	doc := sealingHistory(t, r)
	published, err := r.ReadEvents(ctx, Stream(doc), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := r.db.NewBatch()
	for _, e := range published { // rewritten as an older folio wrote them
		if err := stream.Append(b, e.Stream, e.Seq, e.Type, e.Time, e.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	stored, err := stream.Read(r.db, Stream(doc), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range stored {
		if e.Ref {
			t.Fatalf("event %d is still stored by reference", e.Seq)
		}
		if e.Time != published[i].Time || !bytes.Equal(e.Data, published[i].Data) {
			t.Errorf("event %d stored whole reads %x, want %x", e.Seq, e.Data, published[i].Data)
		}
	}
	if err := r.resolveEvents(Stream(doc), stored); err != nil {
		t.Fatal(err)
	}
	if f, err := r.Fsck(ctx, FsckOptions{}); err != nil || !f.OK {
		t.Fatalf("fsck: %+v %v", f.Problems, err)
	}
}

// An event whose reference does not resolve is an error for its reader
// and a problem fsck reports, never an event with other content.
func TestUnresolvedEventReference(t *testing.T) {
	r := newRepo(t)
	doc := sealingHistory(t, r)
	stored, err := stream.Read(r.db, Stream(doc), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	for i, e := range stored { // the version of the sealing save
		if e.Ref && e.Type == EventVersionCreated && i > 0 && stored[i-1].Ref {
			seq = e.Seq
			break
		}
	}
	b := r.db.NewBatch()
	if _, err := stream.AppendEventAs(b, Stream(doc), seq, EventVersionCreated, 0, nil, versionEventRef{Seq: 99}); err != nil {
		t.Fatal(err)
	}
	if err := r.db.Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	r.hub.Notify(Stream(doc)) // forget the tail: read the store
	if _, err := r.ReadEvents(ctx, Stream(doc), 0, 0); !errors.Is(err, errEventRef) {
		t.Fatalf("reading a stream with a dangling reference: %v", err)
	}
	f, err := r.Fsck(ctx, FsckOptions{})
	if err != nil || f.OK {
		t.Fatalf("fsck: %+v %v", f, err)
	}
	var saw []string
	for _, p := range f.Problems {
		saw = append(saw, p.Problem)
	}
	// The version.created itself, and the draft.updated before it that it seals.
	all := strings.Join(saw, "\n")
	if !strings.Contains(all, "(version.created)") || !strings.Contains(all, "(draft.updated)") || !strings.Contains(all, "no version 99") {
		t.Errorf("fsck problems:\n%s", all)
	}
}
