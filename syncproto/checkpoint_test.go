package syncproto_test

import (
	"context"
	"errors"
	"fmt"
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
	e := startEnv(t, func(c *syncproto.Config) { c.CheckpointIdle = -1; c.CheckpointMax = -1 })
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

func TestCheckpointTimers(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) {
		c.CheckpointIdle = 150 * time.Millisecond
		c.CheckpointMax = 400 * time.Millisecond
	})
	ctx := ctxT(t)
	w := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	snap, _ := w.Open(ctx, "d1")

	// One save then silence: an idle checkpoint.
	ack, err := w.Save(ctx, "d1", snap.Seq, upsert("p1", "a"))
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "idle checkpoint", func() bool { return len(e.Versions("d1")) == 2 })
	if v := e.Versions("d1")[1]; v.Reason != "idle" || v.Author != "alice" {
		t.Fatalf("idle checkpoint: %+v", v)
	}

	// Saves that never pause for the idle time: the max rule seals.
	seq := ack.Seq
	deadline := time.Now().Add(2 * time.Second)
	for len(e.Versions("d1")) < 3 && time.Now().Before(deadline) {
		ack, err := w.Save(ctx, "d1", seq, upsert("p2", fmt.Sprint(time.Now().UnixNano())))
		if err != nil {
			t.Fatal(err)
		}
		seq = ack.Seq
		time.Sleep(30 * time.Millisecond)
	}
	vs := e.Versions("d1")
	if len(vs) < 3 || vs[2].Reason != "max_duration" {
		t.Fatalf("versions %v, want a max checkpoint", reasons(vs))
	}
}

func TestCheckpointRestoreEvents(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) { c.CheckpointIdle = -1 })
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
	a := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	snap, err := a.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Recovered == nil || snap.Recovered.Reason != "recovery" || snap.Unsealed || snap.Head != snap.Recovered.Label ||
		blockText(snap.Body.Blocks[0]) != "unsaved work" {
		t.Fatalf("snapshot after a crash: %+v", snap)
	}
}

// TestShutdown: in-flight saves finish, editors with unsealed changes get
// a leave checkpoint, every connection is closed resumable, and every
// acknowledged save is in the draft.
func TestShutdown(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) { c.CheckpointIdle = -1; c.CheckpointMax = -1 })
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
