package syncproto_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
	"github.com/foliodev/folio/syncproto/synctest"
)

func reasons(vs []repo.VersionInfo) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Label + ":" + v.Reason
	}
	return out
}

func TestLeaveCheckpoint(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)

	// An editor that only read leaves no checkpoint.
	r := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	if _, err := r.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	r.Close()

	// An editor that saved: closing the socket seals "leave".
	w := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	snap, _ := w.Open(ctx, "d1")
	if _, err := w.Save(ctx, "d1", snap.Seq, upsert("p1", "edited")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	waitUntil(t, "leave checkpoint", func() bool { return len(e.Versions("d1")) == 2 })
	if got := fmt.Sprint(reasons(e.Versions("d1"))); got != "[v1.r0: v1.r1:leave]" {
		t.Fatalf("versions %s", got)
	}

	// A dropped connection (no close handshake) seals as well; so does leave.
	w = dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	snap, _ = w.Open(ctx, "d1")
	if _, err := w.Save(ctx, "d1", snap.Seq, upsert("p2", "edited")); err != nil {
		t.Fatal(err)
	}
	w.CloseNow()
	waitUntil(t, "leave checkpoint after a drop", func() bool { return len(e.Versions("d1")) == 3 })

	w = dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	snap, _ = w.Open(ctx, "d1")
	if _, err := w.Save(ctx, "d1", snap.Seq, upsert("p3", "edited")); err != nil {
		t.Fatal(err)
	}
	left, err := w.Leave(ctx, "d1")
	if err != nil || left.Version == nil || left.Version.Reason != "leave" || left.Version.Label != "v1.r3" {
		t.Fatalf("leave: %+v %v", left, err)
	}
	// Left: no more events of the document and saves are refused.
	if _, err := w.Save(ctx, "d1", snap.Seq+1, upsert("p3", "again")); err == nil {
		t.Fatal("save after leave was accepted")
	}
}

// TestCheckpointTimers: the repository's checkpoint rules seal what
// editors save over the socket, on the repository's clock: silence for
// checkpoint.idle seals "idle", saves that never pause that long are
// sealed "max_duration" checkpoint.max after the draft became unsealed,
// and the other editor sees each version.created.
func TestCheckpointTimers(t *testing.T) {
	clock := repo.NewFakeClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	e := startEnvWith(t, repo.Options{Clock: clock, CheckpointIdle: 30 * time.Second, CheckpointMax: 10 * time.Minute}, nil)
	ctx := ctxT(t)
	rec := newRecorder()
	w := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	r := dial(t, e, "ta", syncproto.SubprotocolMsgpack, rec)
	snap, _ := w.Open(ctx, "d1")
	if _, err := r.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}

	// One save then silence: nothing before 30 s, an idle checkpoint at 30 s.
	ack, err := w.Save(ctx, "d1", snap.Seq, upsert("p1", "a"))
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(29 * time.Second)
	if vs := e.Versions("d1"); len(vs) != 1 {
		t.Fatalf("sealed before the idle time: %v", reasons(vs))
	}
	clock.Advance(time.Second)
	vs := e.Versions("d1")
	if len(vs) != 2 || vs[1].Reason != "idle" || vs[1].Author != "alice" {
		t.Fatalf("after 30 s idle: %v", reasons(vs))
	}
	if d, _ := e.Repo.Draft(ctx, "d1"); d.Unsealed {
		t.Fatal("draft still unsealed after the idle checkpoint")
	}

	// A save every 20 s never leaves the draft idle for 30 s: the max
	// rule seals it 10 min after the first of them.
	seq := ack.Seq
	for i := 0; i < 30; i++ {
		ack, err := w.Save(ctx, "d1", seq, upsert("p2", fmt.Sprint("edit ", i)))
		if err != nil {
			t.Fatal(err)
		}
		seq = ack.Seq
		clock.Advance(20 * time.Second)
		if n := len(e.Versions("d1")); i < 29 && n != 2 {
			t.Fatalf("save %d: sealed before 10 min: %v", i, reasons(e.Versions("d1")))
		}
	}
	vs = e.Versions("d1")
	if len(vs) != 3 || vs[2].Reason != "max_duration" {
		t.Fatalf("after 10 min of saves: %v, want a max_duration checkpoint", reasons(vs))
	}
	// The last save came 20 s before the seal: nothing is left to seal.
	clock.Advance(time.Hour)
	if vs := e.Versions("d1"); len(vs) != 3 {
		t.Fatalf("sealed again without a save: %v", reasons(vs))
	}
	if p := e.Repo.PendingCheckpoints(); len(p) != 0 || clock.Pending() != 0 {
		t.Fatalf("pending after the seal: %v, %d timers", p, clock.Pending())
	}
	rec.waitFor(t, "both checkpoints on the other editor", func(evs []*syncproto.Event) bool {
		var got []string
		for _, ev := range evs {
			if ev.Type == syncproto.TypeVersionCreated {
				var v syncproto.VersionCreated
				if err := ev.DecodeData(&v); err == nil {
					got = append(got, v.Reason)
				}
			}
		}
		return fmt.Sprint(got) == "[idle max_duration]"
	})
}

func TestCheckpointRestoreEvents(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	rec := newRecorder()
	a := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	b := dial(t, e, "ta", syncproto.SubprotocolJSON, rec)
	snap, _ := a.Open(ctx, "d1")
	if _, err := b.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Save(ctx, "d1", snap.Seq, upsert("p1", "changed")); err != nil {
		t.Fatal(err)
	}
	cp, err := a.Checkpoint(ctx, "d1", "publish", "before publishing")
	if err != nil || !cp.Created || cp.Version.Label != "v1.r1" || cp.Version.Reason != "publish" {
		t.Fatalf("checkpoint: %+v %v", cp, err)
	}
	cp2, err := a.Checkpoint(ctx, "d1", "", "")
	if err != nil || cp2.Created || cp2.Version.Label != "v1.r1" {
		t.Fatalf("checkpoint of a sealed draft: %+v %v", cp2, err)
	}
	rd, err := a.Restore(ctx, "d1", "v1.r0")
	if err != nil || rd.Version.Label != "v2.r0" || rd.Version.Kind != "restore" {
		t.Fatalf("restore: %+v %v", rd, err)
	}
	evs := rec.waitFor(t, "version events", func(evs []*syncproto.Event) bool { return len(evs) >= 4 })
	var labels []string
	for _, ev := range evs {
		if ev.Type == syncproto.TypeVersionCreated {
			var v syncproto.VersionCreated
			if err := ev.DecodeData(&v); err != nil {
				t.Fatal(err)
			}
			labels = append(labels, v.Label)
		}
	}
	if fmt.Sprint(labels) != "[v1.r1 v2.r0]" {
		t.Fatalf("version.created seen by the other editor: %v", labels)
	}
	// The restore's draft.updated brings p1 back, sealed.
	last := evs[len(evs)-2]
	du := draftUpdated(t, last)
	if last.Type != syncproto.TypeDraftUpdated || len(du.Blocks) != 1 || du.Blocks[0].ID != "p1" ||
		blockText(*du.Blocks[0].Block) != "one" || du.Unsealed || du.Session != "" {
		t.Fatalf("restore draft.updated: %s %+v", last.Type, du)
	}
}

func TestRecoveryOnOpen(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t)
	// A save whose session never ended cleanly: the process stopped
	// without sealing it.
	first, err := synctest.Start(synctest.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.CreateDoc("d1", "alice", docOf3()); err != nil {
		t.Fatal(err)
	}
	d, _ := first.Repo.Draft(ctx, "d1")
	b := para("p1", "unsaved work")
	if _, err := first.Repo.SaveDraft(ctx, repo.SaveParams{Doc: "d1", Actor: "alice", BaseSeq: d.Seq,
		Changes: []repo.DraftChange{{Op: repo.ChangeUpsert, Block: &b}}}); err != nil {
		t.Fatal(err)
	}
	first.Close()

	e, err := synctest.Start(synctest.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Auth.Add("ta", "alice", false)
	rec := newRecorder()
	a := dial(t, e, "ta", syncproto.SubprotocolJSON, rec)
	snap, err := a.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Recovered == nil || snap.Recovered.Reason != "recovery" || snap.Unsealed || snap.Head != snap.Recovered.Label ||
		blockText(snap.Body.Blocks[0]) != "unsaved work" {
		t.Fatalf("snapshot after a crash: %+v", snap)
	}
	// As docs/protocol.md "open → snapshot" says: the snapshot's cursor is
	// read before the draft, so the version this open sealed (its head)
	// arrives again as version.created after the cursor; a client that
	// announces versions skips those up to the snapshot's head.
	evs := rec.waitFor(t, "the recovery's version.created", func(evs []*syncproto.Event) bool {
		for _, ev := range evs {
			var v syncproto.VersionCreated
			if ev.Type == syncproto.TypeVersionCreated && ev.DecodeData(&v) == nil && v.Label == snap.Head {
				return true
			}
		}
		return false
	})
	if evs[len(evs)-1].Cursor <= snap.Cursor {
		t.Fatalf("the recovery's version.created is at cursor %d, not after the snapshot's %d", evs[len(evs)-1].Cursor, snap.Cursor)
	}
}

// TestShutdown: in-flight saves finish, editors with unsealed changes get
// a leave checkpoint, every connection is closed resumable, and every
// acknowledged save is in the draft.
func TestShutdown(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	for i := 2; i <= 4; i++ {
		if err := e.CreateDoc(fmt.Sprint("d", i), "alice", docOf3()); err != nil {
			t.Fatal(err)
		}
	}
	type editor struct {
		c     *client.Client
		doc   string
		acked string
	}
	var eds []*editor
	for i := 1; i <= 4; i++ {
		eds = append(eds, &editor{c: dial(t, e, "ta", codecs[i%2], nil), doc: fmt.Sprint("d", i)})
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, ed := range eds {
		snap, err := ed.c.Open(ctx, ed.doc)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq := snap.Seq
			for i := 0; ; i++ {
				text := fmt.Sprint("save ", i)
				ack, err := ed.c.Save(ctx, ed.doc, seq, upsert("p1", text))
				if err != nil {
					return // closed by the shutdown
				}
				ed.acked, seq = text, ack.Seq
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Server.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	for _, ed := range eds {
		<-ed.c.Done()
		var ce *client.CloseError
		if !errors.As(ed.c.Err(), &ce) || ce.Code != syncproto.CloseShutdown || !ce.Resumable() {
			t.Errorf("%s: closed with %v, want %d", ed.doc, ed.c.Err(), syncproto.CloseShutdown)
		}
		d, _ := e.Repo.Draft(ctx, ed.doc)
		if ed.acked == "" || blockText(d.Body.Blocks[0]) != ed.acked {
			t.Errorf("%s: draft has %q, last acknowledged %q", ed.doc, blockText(d.Body.Blocks[0]), ed.acked)
		}
		vs := e.Versions(ed.doc)
		if d.Unsealed || vs[len(vs)-1].Reason != "leave" {
			t.Errorf("%s: no leave checkpoint at shutdown: %v", ed.doc, reasons(vs))
		}
	}
	// New connections are refused while shut down.
	if _, err := client.Dial(ctx, e.URL, client.Options{Token: "ta"}); err == nil {
		t.Fatal("connected after shutdown")
	}
}

// TestShutdownLeaveEvents: on shutdown every subscriber receives the
// version.created of each leave checkpoint before its resumable close, so
// an editor that reconnects knows the version its colleague left.
func TestShutdownLeaveEvents(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	if err := e.CreateDoc("d2", "alice", docOf3()); err != nil {
		t.Fatal(err)
	}
	type reader struct {
		c   *client.Client
		rec *recorder
	}
	var readers []reader
	for i := 0; i < 4; i++ {
		rec := newRecorder()
		c := dial(t, e, "ta", codecs[i%2], rec)
		for _, doc := range []string{"d1", "d2"} {
			if _, err := c.Open(ctx, doc); err != nil {
				t.Fatal(err)
			}
		}
		readers = append(readers, reader{c, rec})
	}
	for _, doc := range []string{"d1", "d2"} {
		w := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
		snap, err := w.Open(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Save(ctx, doc, snap.Seq, upsert("p1", "left unsealed in "+doc)); err != nil {
			t.Fatal(err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Server.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"d1", "d2"} {
		if vs := e.Versions(doc); vs[len(vs)-1].Reason != "leave" {
			t.Fatalf("%s: no leave checkpoint: %v", doc, reasons(vs))
		}
	}
	for i, rd := range readers {
		<-rd.c.Done()
		var ce *client.CloseError
		if !errors.As(rd.c.Err(), &ce) || ce.Code != syncproto.CloseShutdown {
			t.Errorf("reader %d closed with %v", i, rd.c.Err())
		}
		leaves := map[string]bool{}
		for _, ev := range rd.rec.snapshot() {
			if ev.Type != syncproto.TypeVersionCreated {
				continue
			}
			var v syncproto.VersionCreated
			if err := ev.DecodeData(&v); err != nil {
				t.Fatal(err)
			}
			if v.Reason == "leave" {
				leaves[ev.Stream] = true
			}
		}
		if !leaves["doc:d1"] || !leaves["doc:d2"] {
			t.Errorf("reader %d closed before the leave checkpoints reached it: %v", i, leaves)
		}
	}
}

// TestResumeListsFollowedStreams: a resumable close lists the cursor of
// every stream the connection still follows, and none of those it
// unsubscribed or left, however many it followed one after another (the
// server keeps no record of each).
func TestResumeListsFollowedStreams(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	for i := 0; i < 20; i++ {
		if err := e.CreateDoc(fmt.Sprintf("t%d", i), "alice", docOf3()); err != nil {
			t.Fatal(err)
		}
	}
	c := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	for i := 0; i < 20; i++ {
		doc := fmt.Sprintf("t%d", i)
		if i%2 == 0 {
			if _, err := c.Open(ctx, doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Request(ctx, &syncproto.Leave{Doc: doc}); err != nil {
				t.Fatal(err)
			}
		} else {
			if _, err := c.Subscribe(ctx, syncproto.DocStream(doc), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Request(ctx, &syncproto.Unsubscribe{Stream: syncproto.DocStream(doc)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(ctx, syncproto.DocStream("t3"), nil); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Server.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	var ce *client.CloseError
	if !errors.As(c.Err(), &ce) || ce.Code != syncproto.CloseShutdown {
		t.Fatalf("closed with %v", c.Err())
	}
	if _, resume, _ := strings.Cut(ce.Reason, "; resume "); resume != "doc:d1@1 doc:t3@1" {
		t.Fatalf("close reason %q, want it to resume doc:d1@1 doc:t3@1 only", ce.Reason)
	}
}
