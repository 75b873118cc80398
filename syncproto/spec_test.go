package syncproto_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/foliodev/folio"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/syncproto"
	"github.com/vmihailenco/msgpack/v5"
)

// Behaviour docs/protocol.md states that other tests do not pin.
func TestSpecDetails(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)

	t.Run("error without a readable id carries an empty id", func(t *testing.T) {
		for _, proto := range codecs {
			ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{proto}})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			typ := websocket.MessageText
			if proto == syncproto.SubprotocolMsgpack {
				typ = websocket.MessageBinary
			}
			if err := ws.Write(ctx, typ, []byte{0xc1}); err != nil { // not JSON, not msgpack
				t.Fatal(err)
			}
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if proto == syncproto.SubprotocolMsgpack {
				err = msgpack.Unmarshal(data, &m)
			} else {
				err = jsonUnmarshal(data, &m)
			}
			id, has := m["id"]
			if err != nil || m["type"] != "error" || !has || id != "" {
				t.Fatalf("%s: error reply %q (%v): want an \"id\" member, empty", proto, data, err)
			}
		}
	})

	t.Run("a second hello keeps the first identity", func(t *testing.T) {
		c := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
		r, err := c.Request(ctx, &syncproto.Hello{Token: "tr"}) // root's token
		if err != nil {
			t.Fatal(err)
		}
		w, ok := r.(*syncproto.Welcome)
		if !ok || w.User != "alice" || w.Admin || w.Session != c.Welcome().Session {
			t.Fatalf("second hello with another token: %+v", r)
		}
		r, err = c.Request(ctx, &syncproto.Hello{Token: "no such token"})
		if w, ok := r.(*syncproto.Welcome); err != nil || !ok || w.User != "alice" {
			t.Fatalf("second hello with a bad token: %+v %v", r, err)
		}
		if admin := dial(t, e, "tr", syncproto.SubprotocolJSON, nil); !admin.Welcome().Admin {
			t.Fatalf("an admin's welcome lacks admin: %+v", admin.Welcome())
		}
	})

	t.Run("a fragmented message is one message", func(t *testing.T) {
		ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolJSON}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		w, err := ws.Writer(ctx, websocket.MessageText)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{`{"type":"hel`, `lo","id":"f1",`, `"token":"ta"}`} {
			if _, err := w.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		_, data, err := ws.Read(ctx)
		if err != nil || !strings.Contains(string(data), `"type":"welcome","id":"f1"`) {
			t.Fatalf("fragmented hello answered %s %v", data, err)
		}
	})

	t.Run("a save without baseSeq is invalid", func(t *testing.T) {
		c := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
		if _, err := c.Open(ctx, "d1"); err != nil {
			t.Fatal(err)
		}
		before, _ := e.Repo.Draft(ctx, "d1")
		_, err := c.Save(ctx, "d1", 0, upsert("p1", "no base"))
		var re *syncproto.RemoteError
		if !errors.As(err, &re) || !errors.Is(err, errs.Invalid) || !strings.Contains(re.Message, "baseSeq") {
			t.Fatalf("save without baseSeq: %v", err)
		}
		if after, _ := e.Repo.Draft(ctx, "d1"); after.Seq != before.Seq {
			t.Fatalf("a refused save changed the draft")
		}
	})

	t.Run("after naming a missing block is a draft.conflict", func(t *testing.T) {
		c := dial(t, e, "ta", syncproto.SubprotocolJSON, nil)
		snap, err := c.Open(ctx, "d1")
		if err != nil {
			t.Fatal(err)
		}
		nb := para("n1", "new")
		missing := "p9"
		_, err = c.Save(ctx, "d1", snap.Seq, syncproto.Change{Op: syncproto.OpUpsert, Block: &nb, After: &missing})
		var ce *folio.ConflictError
		if !errors.As(err, &ce) || ce.Seq != snap.Seq || ce.BaseSeq != snap.Seq || ce.Check != folio.CheckMissingBlock ||
			ce.Missing != "p9" || ce.Reason != `changes[0].after: block "p9" is not in the draft` {
			t.Fatalf("upsert after a missing block: %v", err)
		}
	})

	t.Run("checkpoint.done follows its version.created", func(t *testing.T) {
		rec := newRecorder()
		c := dial(t, e, "ta", syncproto.SubprotocolMsgpack, rec)
		snap, err := c.Open(ctx, "d1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Save(ctx, "d1", snap.Seq, upsert("p2", "sealed soon")); err != nil {
			t.Fatal(err)
		}
		done, err := c.Checkpoint(ctx, "d1", "", "")
		if err != nil || !done.Created {
			t.Fatalf("checkpoint: %+v %v", done, err)
		}
		// Client dispatch is in arrival order: what arrived before the
		// reply is recorded when Checkpoint returns.
		var seen bool
		for _, ev := range rec.snapshot() {
			var v syncproto.VersionCreated
			if ev.Type == syncproto.TypeVersionCreated && ev.DecodeData(&v) == nil && v.Label == done.Version.Label {
				seen = true
			}
		}
		if !seen {
			t.Fatalf("checkpoint.done of %s arrived before its version.created", done.Version.Label)
		}
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
