package syncproto_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/server/syncrepo"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// checkContiguous asserts that cursors run first, first+1, ... last.
func checkContiguous(t *testing.T, cursors []uint64, first, last uint64) {
	t.Helper()
	if uint64(len(cursors)) != last-first+1 {
		t.Fatalf("got %d events, want %d (cursors %d..%d): %v", len(cursors), last-first+1, first, last, short(cursors))
	}
	for i, c := range cursors {
		if c != first+uint64(i) {
			t.Fatalf("event %d has cursor %d, want %d (a gap, duplicate or reorder): %v", i, c, first+uint64(i), short(cursors))
		}
	}
}

func short(cs []uint64) string {
	if len(cs) > 40 {
		return fmt.Sprint(cs[:20], "...", cs[len(cs)-20:])
	}
	return fmt.Sprint(cs)
}

func cursorsOf(evs []*syncproto.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.Cursor
	}
	return out
}

// TestResume drops a reader in the middle of a burst and resumes it from
// its last cursor: every event arrives once, in order.
func TestResume(t *testing.T) {
	for _, proto := range codecs {
		t.Run(proto, func(t *testing.T) {
			e := startEnv(t, nil)
			ctx := ctxT(t)
			writer := dial(t, e, "ta", proto, nil)
			snap, err := writer.Open(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			rec1 := newRecorder()
			reader := dial(t, e, "ta", proto, rec1)
			sub, err := reader.Subscribe(ctx, "doc:d1", nil)
			if err != nil {
				t.Fatal(err)
			}
			start := sub.Cursor

			const burst = 200
			done := make(chan error, 1)
			go func() {
				seq := snap.Seq
				for i := 0; i < burst; i++ {
					ack, err := writer.Save(ctx, "d1", seq, upsert("p"+strconv.Itoa(1+i%3), fmt.Sprint("w", i)))
					if err != nil {
						done <- err
						return
					}
					seq = ack.Seq
				}
				done <- nil
			}()
			// Drop the reader (no close handshake) mid-burst.
			rec1.waitFor(t, "a third of the burst", func(evs []*syncproto.Event) bool { return len(evs) >= burst/3 })
			reader.CloseNow()
			got := cursorsOf(rec1.snapshot())
			last, _ := reader.Cursor("doc:d1")
			if last != got[len(got)-1] {
				t.Fatalf("client cursor %d, last event %d", last, got[len(got)-1])
			}

			rec2 := newRecorder()
			reader2 := dial(t, e, "ta", proto, rec2)
			if _, err := reader2.Subscribe(ctx, "doc:d1", &last); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			end, _ := e.Events().Last(ctx, "doc:d1")
			rec2.waitFor(t, "the rest of the burst", func(evs []*syncproto.Event) bool {
				return len(evs) > 0 && evs[len(evs)-1].Cursor >= end
			})
			all := append(got, cursorsOf(rec2.snapshot())...)
			checkContiguous(t, all, start+1, end)
		})
	}
}

func TestSubscribeReplayAndResync(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	w := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	snap, _ := w.Open(ctx, "d1")
	seq := snap.Seq
	for i := 0; i < 10; i++ {
		ack, err := w.Save(ctx, "d1", seq, upsert("p1", fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		seq = ack.Seq
	}
	last, _ := e.Events().Last(ctx, "doc:d1")

	// Replay from 0: every event, in order, then live.
	rec := newRecorder()
	r := dial(t, e, "ta", syncproto.SubprotocolMsgpack, rec)
	zero := uint64(0)
	sub, err := r.Subscribe(ctx, "doc:d1", &zero)
	if err != nil || sub.Last != last {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	rec.waitFor(t, "replay", func(evs []*syncproto.Event) bool { return len(evs) >= int(last) })
	if _, err := w.Save(ctx, "d1", seq, upsert("p2", "live")); err != nil {
		t.Fatal(err)
	}
	evs := rec.waitFor(t, "live event", func(evs []*syncproto.Event) bool { return len(evs) >= int(last)+1 })
	checkContiguous(t, cursorsOf(evs), 1, last+1)
	if evs[0].Type != syncproto.TypeVersionCreated {
		t.Fatalf("first event %s, want the v1.r0 version.created", evs[0].Type)
	}

	// A second subscribe to the same stream is refused; unsubscribe works once.
	var re *syncproto.RemoteError
	if _, err := r.Subscribe(ctx, "doc:d1", nil); !errors.As(err, &re) || re.Code != syncproto.CodeAlreadySubscribed {
		t.Fatalf("double subscribe: %v", err)
	}
	if err := r.Unsubscribe(ctx, "doc:d1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Unsubscribe(ctx, "doc:d1"); !errors.As(err, &re) || re.Code != syncproto.CodeNotSubscribed {
		t.Fatalf("second unsubscribe: %v", err)
	}

	// Trimmed history: a cursor older than retention gets resync.
	if err := e.Trim("doc:d1", 5); err != nil {
		t.Fatal(err)
	}
	two := uint64(2)
	_, err = r.Subscribe(ctx, "doc:d1", &two)
	var rs *client.ResyncError
	if !errors.As(err, &rs) || rs.First != 5 || rs.After != 2 || rs.Last != last+1 {
		t.Fatalf("old cursor: %v", err)
	}
	// The cursor just before the first retained event still resumes.
	four := uint64(4)
	if _, err := r.Subscribe(ctx, "doc:d1", &four); err != nil {
		t.Fatalf("cursor at retention edge: %v", err)
	}
}

func TestRunStreamAccess(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	e.Access.AllowStream("run:r1", "alice")
	for i := 0; i < 3; i++ {
		if _, err := e.AppendEvent("run:r1", "run.delta", map[string]any{"text": fmt.Sprint("part ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder()
	a := dial(t, e, "ta", syncproto.SubprotocolJSON, rec)
	zero := uint64(0)
	if _, err := a.Subscribe(ctx, "run:r1", &zero); err != nil {
		t.Fatal(err)
	}
	evs := rec.waitFor(t, "run events", func(evs []*syncproto.Event) bool { return len(evs) == 3 })
	var data struct{ Text string }
	if err := evs[2].DecodeData(&data); err != nil || data.Text != "part 2" || evs[2].Type != "run.delta" {
		t.Fatalf("run event: %+v %v", data, err)
	}
	b := dial(t, e, "tb", syncproto.SubprotocolJSON, nil)
	var re *syncproto.RemoteError
	if _, err := b.Subscribe(ctx, "run:r1", &zero); !errors.As(err, &re) || re.Code != syncproto.CodeNotFound {
		t.Fatalf("bob on alice's run: %v", err)
	}
	if _, err := b.Subscribe(ctx, "nope:x", nil); !errors.As(err, &re) || re.Code != syncproto.CodeInvalid {
		t.Fatalf("unknown stream kind: %v", err)
	}
}

// TestSlowConsumer stops reading on one connection while a writer floods
// its document: the server's queue for it never exceeds its bound, the
// connection is closed with CloseSlowConsumer and a cursor, and resuming
// from the last event read loses nothing. Nothing depends on timing: the
// flood goes on until stream delivery has filled the queue up to the
// replies' reserve (the lag timeout is far away), then the reader sends
// pings until a reply finds the queue full, which closes it at once.
func TestSlowConsumer(t *testing.T) {
	const queue = 16
	e := startEnv(t, func(c *syncproto.Config) {
		c.SendQueue = queue
		c.LagTimeout = time.Minute
		c.MessagesPerSecond, c.Burst = 1e6, 1e6
	})
	ctx := ctxT(t)

	// The slow reader speaks the protocol by hand so that it can stop reading.
	ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolJSON}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(-1)
	send := func(s string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() (*syncproto.Event, syncproto.Message, error) {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return nil, nil, err
		}
		m, err := syncproto.JSONCodec.Decode(data, true)
		if err != nil {
			t.Fatal(err)
		}
		ev, _ := m.(*syncproto.Event)
		return ev, m, nil
	}
	send(`{"type":"hello","id":"h","token":"ta"}`)
	send(`{"type":"subscribe","id":"s","stream":"doc:d1"}`)
	for i := 0; i < 2; i++ {
		if _, _, err := read(); err != nil {
			t.Fatal(err)
		}
	}
	var slowID string
	for _, ci := range e.Server.Conns() {
		if len(ci.Streams) == 1 && len(ci.OpenDocs) == 0 {
			slowID = ci.Session
		}
	}
	if slowID == "" {
		t.Fatal("slow reader's connection not listed")
	}
	// session is the slow reader's connection; ok is false once the
	// server has closed it and forgotten it.
	session := func() (syncproto.ConnInfo, bool) {
		for _, ci := range e.Server.Conns() {
			if ci.Session == slowID {
				return ci, true
			}
		}
		return syncproto.ConnInfo{}, false
	}

	// Flood with large saves until the server gives up on the reader.
	w := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	snap, _ := w.Open(ctx, "d1")
	seq := snap.Seq
	big := strings.Repeat("x", 64<<10)
	saves, pings := 0, 0
	for {
		ci, ok := session()
		if !ok {
			t.Fatal("the slow reader's connection is gone before it was told why")
		}
		if ci.QueueLen > queue || ci.QueueMax > queue {
			t.Fatalf("send queue %d (max %d) beyond its bound %d", ci.QueueLen, ci.QueueMax, queue)
		}
		if ci.Closing != "" {
			if !strings.HasPrefix(ci.Closing, "4003 ") {
				t.Fatalf("slow reader closed with %q, want 4003", ci.Closing)
			}
			break
		}
		if saves+pings == 5000 {
			t.Fatalf("the slow reader was never disconnected: %+v", ci)
		}
		if ci.QueueLen < queue-queue/4 {
			// Stream delivery stops short of the replies' reserve.
			ack, err := w.Save(ctx, "d1", seq, upsert("p1", fmt.Sprint(saves, big)))
			if err != nil {
				t.Fatal(err)
			}
			seq = ack.Seq
			saves++
			continue
		}
		send(fmt.Sprintf(`{"type":"ping","id":"p%d"}`, pings))
		pings++
		// Handled: its pong is queued behind the stuck events, or it
		// closed the connection (or the writer got unstuck after all).
		waitUntil(t, "the ping handled", func() bool {
			ci, ok := session()
			return !ok || ci.Closing != "" || ci.QueueLen >= queue-queue/4+pings || ci.QueueLen < queue-queue/4
		})
	}
	t.Logf("disconnected after %d saves of 64 KiB and %d pings", saves, pings)

	// Reading again, the client gets what was on the wire, then the close
	// with its cursor.
	var got []uint64
	var closeErr error
	for {
		ev, _, err := read()
		if err != nil {
			closeErr = err
			break
		}
		if ev != nil {
			got = append(got, ev.Cursor)
		}
	}
	var ce websocket.CloseError
	if !errors.As(closeErr, &ce) || ce.Code != syncproto.CloseSlowConsumer || !syncproto.Resumable(ce.Code) {
		t.Fatalf("close: %v", closeErr)
	}
	_, at, ok := strings.Cut(ce.Reason, "doc:d1@")
	sent, perr := strconv.ParseUint(at, 10, 64)
	if !ok || perr != nil {
		t.Fatalf("close reason %q has no cursor for doc:d1", ce.Reason)
	}
	if len(got) == 0 || got[len(got)-1] != sent {
		t.Fatalf("close reason says %d was sent last; the client read up to %v", sent, got[len(got)-1:])
	}

	// Resume from the last event read: nothing is missing.
	rec := newRecorder()
	r := dial(t, e, "ta", syncproto.SubprotocolMsgpack, rec)
	from := got[len(got)-1]
	if _, err := r.Subscribe(ctx, "doc:d1", &from); err != nil {
		t.Fatal(err)
	}
	end, _ := e.Events().Last(ctx, "doc:d1")
	evs := rec.waitFor(t, "resumed events", func(evs []*syncproto.Event) bool {
		return len(evs) > 0 && evs[len(evs)-1].Cursor >= end
	})
	checkContiguous(t, append(got, cursorsOf(evs)...), got[0], end)
}

func TestConnStaysUsableAfterBadInput(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolJSON}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	roundTrip := func(typ websocket.MessageType, s string) *syncproto.Error {
		t.Helper()
		if err := ws.Write(ctx, typ, []byte(s)); err != nil {
			t.Fatal(err)
		}
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m, err := syncproto.JSONCodec.Decode(data, true)
		if err != nil {
			t.Fatal(err)
		}
		em, _ := m.(*syncproto.Error)
		return em
	}
	cases := []struct {
		name  string
		typ   websocket.MessageType
		frame string
		code  syncproto.Code
		id    string
	}{
		{"before hello", websocket.MessageText, `{"type":"ping","id":"0"}`, syncproto.CodeHelloRequired, "0"},
		{"not json", websocket.MessageText, `{"type":`, syncproto.CodeBadMessage, ""},
		{"no type", websocket.MessageText, `{"id":"1"}`, syncproto.CodeBadMessage, "1"},
		{"unknown type", websocket.MessageText, `{"type":"draft.explode","id":"2"}`, syncproto.CodeUnknownType, "2"},
		{"server type", websocket.MessageText, `{"type":"welcome","id":"3"}`, syncproto.CodeUnknownType, "3"},
		{"wrong field type", websocket.MessageText, `{"type":"open","id":"4","doc":42}`, syncproto.CodeBadMessage, "4"},
		{"binary on json", websocket.MessageBinary, `{"type":"ping","id":"5"}`, syncproto.CodeBadMessage, ""},
	}
	for _, c := range cases {
		em := roundTrip(c.typ, c.frame)
		if em == nil || em.Code != c.code || em.ID != c.id || em.Message == "" {
			t.Errorf("%s: got %+v, want code %s id %q", c.name, em, c.code, c.id)
		}
		if c.name == "before hello" {
			if em := roundTrip(websocket.MessageText, `{"type":"hello","id":"h","token":"ta"}`); em != nil {
				t.Fatalf("hello: %+v", em)
			}
		}
	}
	// Still usable.
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"type":"ping","id":"p"}`)); err != nil {
		t.Fatal(err)
	}
	_, data, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(data), `"type":"pong"`) || !strings.Contains(string(data), `"id":"p"`) {
		t.Fatalf("after bad frames: %s %v", data, err)
	}
}

func TestRequestErrors(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) { c.MaxSubscriptions = 2 })
	ctx := ctxT(t)
	a := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	code := func(err error) syncproto.Code {
		var re *syncproto.RemoteError
		if errors.As(err, &re) {
			return re.Code
		}
		return syncproto.Code(fmt.Sprint("not a remote error: ", err))
	}
	if _, err := a.Save(ctx, "d1", 0, upsert("p1", "x")); code(err) != syncproto.CodeNotOpen {
		t.Errorf("save before open: %v", err)
	}
	snap, err := a.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Open(ctx, "d1"); code(err) != syncproto.CodeAlreadySubscribed {
		t.Errorf("second open: %v", err)
	}
	// Invalid document: a block without an id. Nothing is stored.
	_, err = a.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: snap.Seq,
		Changes: []syncproto.Change{upsert("p9", "fine"), {Op: "upsert", Block: &flowdoc.Block{Type: flowdoc.Paragraph}}}})
	var re *syncproto.RemoteError
	if !errors.As(err, &re) || re.Code != syncproto.CodeInvalid || len(re.Problems) == 0 || re.Problems[0].Path == "" {
		t.Fatalf("invalid save: %+v", err)
	}
	if d, _ := e.Repo.Draft(ctx, "d1"); d.Seq != snap.Seq || len(d.Body.Blocks) != 3 {
		t.Fatalf("an invalid save changed the draft: seq %d, %d blocks", d.Seq, len(d.Body.Blocks))
	}
	if _, err := a.SaveMessage(ctx, &syncproto.Save{Doc: "d1", BaseSeq: snap.Seq, Changes: []syncproto.Change{{Op: "explode", BlockID: "p1"}}}); code(err) != syncproto.CodeInvalid {
		t.Errorf("unknown op: %v", err)
	}
	if _, err := a.Subscribe(ctx, "doc:d2", nil); code(err) != syncproto.CodeNotFound {
		t.Errorf("missing document stream: %v", err)
	}
	e.Access.AllowStream("run:a", "alice")
	e.Access.AllowStream("run:b", "alice")
	if _, err := a.Subscribe(ctx, "run:a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Subscribe(ctx, "run:b", nil); code(err) != syncproto.CodeTooManySubscriptions {
		t.Errorf("third subscription with a limit of 2: %v", err)
	}
	if _, err := a.Restore(ctx, "d1", "v9.r9"); code(err) != syncproto.CodeNotFound {
		t.Errorf("restore of a missing label: %v", err)
	}
	if _, err := a.Checkpoint(ctx, "d1", "idle", ""); code(err) != syncproto.CodeInvalid {
		t.Errorf("checkpoint with a server-only reason: %v", err)
	}
}

func TestRateLimit(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) { c.MessagesPerSecond = 1; c.Burst = 3 })
	ctx := ctxT(t)
	a := dial(t, e, "ta", syncproto.SubprotocolJSON, nil) // hello took one token
	var limited *syncproto.RemoteError
	for i := 0; i < 5 && limited == nil; i++ {
		_, err := a.Ping(ctx)
		errors.As(err, &limited)
	}
	if limited == nil || limited.Code != syncproto.CodeRateLimited || limited.RetryAfterMs <= 0 {
		t.Fatalf("no rate_limited after the burst: %+v", limited)
	}
	time.Sleep(time.Duration(limited.RetryAfterMs) * time.Millisecond)
	if _, err := a.Ping(ctx); err != nil {
		t.Fatalf("after waiting RetryAfterMs: %v", err)
	}
}

func TestFrameTooLarge(t *testing.T) {
	e := startEnv(t, func(c *syncproto.Config) { c.MaxFrame = 4096 })
	ctx := ctxT(t)
	a := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
	if _, err := a.Open(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if a.Welcome().Limits.MaxFrame != 4096 {
		t.Fatalf("welcome limits: %+v", a.Welcome().Limits)
	}
	_, err := a.Save(ctx, "d1", 0, upsert("p1", strings.Repeat("y", 8192)))
	var ce *client.CloseError
	if !errors.As(err, &ce) || ce.Code != syncproto.CloseTooLarge {
		t.Fatalf("oversized frame: %v", err)
	}
	<-a.Done()
}

func TestPingAcrossCodecs(t *testing.T) {
	e := startEnv(t, nil)
	for _, proto := range codecs {
		c := dial(t, e, "ta", proto, nil)
		if _, err := c.Ping(context.Background()); err != nil {
			t.Fatalf("%s: %v", proto, err)
		}
		if c.Welcome().User != "alice" || c.Welcome().Protocol != proto {
			t.Fatalf("%s welcome: %+v", proto, c.Welcome())
		}
	}
}

// TestResyncWhileOpen: events trimmed under an open document end its
// subscription with an unsolicited resync; opening again recovers.
func TestResyncWhileOpen(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	resyncs := make(chan *syncproto.Resync, 1)
	a, err := client.Dial(ctx, e.URL, client.Options{Token: "ta", OnResync: func(r *syncproto.Resync) { resyncs <- r }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.CloseNow()
	snap, err := a.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Trim("doc:d1", snap.Cursor+2); err != nil {
		t.Fatal(err)
	}
	if _, err := (syncrepo.Docs{Content: e.Repo}).SaveDraft(ctx, syncproto.SaveParams{Doc: "d1", Actor: "alice", BaseSeq: snap.Seq, Changes: []syncproto.Change{upsert("p1", "elsewhere")}}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-resyncs:
		if r.Stream != "doc:d1" || r.After != snap.Cursor || r.First != snap.Cursor+2 || r.ID != "" {
			t.Fatalf("resync: %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no resync after the stream was trimmed under the subscription")
	}
	snap2, err := a.Open(ctx, "d1")
	if err != nil || blockText(snap2.Body.Blocks[0]) != "elsewhere" {
		t.Fatalf("open again after resync: %+v %v", snap2, err)
	}
}
