package syncproto_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/internal/bounded/boundedtest"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/server/syncrepo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/syncproto"
)

// TestDecodeMemory decodes every corpus entry of the protocol's decoders
// (frames in both codecs, event data, stored events) and checks what each
// allocates against the bound of package bounded.
func TestDecodeMemory(t *testing.T) {
	boundedtest.CheckMemory(t, decodeTarget(), storedEventTarget())
}

// FuzzStoredEvent: a stored event's data, whatever its bytes, turns into
// wire data that both codecs encode, or into an error.
func FuzzStoredEvent(f *testing.F) { boundedtest.Fuzz(f, storedEventTarget()) }

func storedEventTarget() boundedtest.Target {
	var seeds [][]byte
	for _, m := range sampleEvents() {
		d, err := kv.Marshal(m.(*syncproto.Event).Data)
		if err != nil {
			panic(err)
		}
		seeds = append(seeds, d)
	}
	task, _ := kv.Marshal(map[string]any{"kind": "assist", "attempt": 2, "error": "model timed out", "ok": false, "ratio": 0.5, "raw": []byte{1, 2}})
	seeds = append(seeds, task, hostileFrame, []byte{0x81, 0xa6, 'b', 'l', 'o', 'c', 'k', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})
	seeds = append(seeds, boundedtest.Hostile("blocks")...)
	var decoders []boundedtest.Decoder
	for _, typ := range []string{syncproto.TypeDraftUpdated, syncproto.TypeVersionCreated, "succeeded"} {
		decoders = append(decoders, boundedtest.Decoder{Name: typ, Fn: func(p []byte) {
			syncrepo.Data(stream.Event{Stream: "doc:d1", Type: typ, Data: p})
		}})
	}
	return boundedtest.Target{Name: "FuzzStoredEvent", Seeds: seeds, Decoders: decoders, Check: func(t *testing.T, p []byte) {
		for _, d := range decoders {
			data, err := syncrepo.Data(stream.Event{Stream: "doc:d1", Type: d.Name, Data: p})
			if err != nil {
				continue
			}
			for _, c := range []syncproto.Codec{syncproto.JSONCodec, syncproto.MsgpackCodec} {
				c.Encode(&syncproto.Event{Envelope: syncproto.Envelope{Type: d.Name}, Stream: "doc:d1", Data: data})
			}
		}
	}}
}

// TestStoredEventPassThrough: the data of an event type the server does
// not know (a task's) reaches msgpack clients byte for byte and JSON
// clients as the same values, without being decoded into Go interfaces.
func TestStoredEventPassThrough(t *testing.T) {
	type detail struct {
		Kind    string  `msgpack:"kind"`
		Attempt int     `msgpack:"attempt"`
		Ratio   float64 `msgpack:"ratio"`
		Tags    []string
		Raw     []byte `msgpack:"raw"`
	}
	stored, err := kv.Marshal(detail{Kind: "assist", Attempt: -3, Ratio: 0.25, Tags: []string{"a", "é"}, Raw: []byte{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := syncrepo.Data(stream.Event{Stream: "run:r1", Type: "retry_scheduled", Data: stored})
	if err != nil {
		t.Fatal(err)
	}
	ev := &syncproto.Event{Envelope: syncproto.Envelope{Type: "retry_scheduled"}, Stream: "run:r1", Cursor: 4, Data: data}
	p, err := syncproto.MsgpackCodec.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(p, stored) {
		t.Fatalf("msgpack frame does not carry the stored data verbatim")
	}
	m, err := syncproto.MsgpackCodec.Decode(p, true)
	if err != nil {
		t.Fatal(err)
	}
	var back detail
	if err := m.(*syncproto.Event).DecodeData(&back); err != nil || back.Attempt != -3 || back.Tags[1] != "é" {
		t.Fatalf("msgpack client got %+v, %v", back, err)
	}
	j, err := syncproto.JSONCodec.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(j, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"kind": `"assist"`, "attempt": `-3`, "ratio": `0.25`, "Tags": `["a","é"]`, "raw": `"0001"`} // bin is hex, as every hash in JSON
	for k, v := range want {
		if string(got.Data[k]) != v {
			t.Errorf("JSON data %s = %s, want %s (frame %s)", k, got.Data[k], v, j)
		}
	}
	// Stored data that is not one well-formed value is an error, not a frame.
	if _, err := syncrepo.Data(stream.Event{Type: "x", Data: stored[:len(stored)-1]}); err == nil {
		t.Fatal("truncated stored data was accepted")
	}
}

// TestHostileFrameOverSocket sends the 14-byte frame that used to kill the
// daemon, unauthenticated, over a real socket: the connection gets a
// bad_message error, the same connection and others keep working, and a
// JSON frame built to amplify is refused the same way.
func TestHostileFrameOverSocket(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolMsgpack}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	read := func(ws *websocket.Conn, c syncproto.Codec) syncproto.Message {
		t.Helper()
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		m, err := c.Decode(data, true)
		if err != nil {
			t.Fatalf("undecodable reply: %v", err)
		}
		return m
	}
	if err := ws.Write(ctx, websocket.MessageBinary, hostileFrame); err != nil {
		t.Fatal(err)
	}
	m := read(ws, syncproto.MsgpackCodec)
	if em, ok := m.(*syncproto.Error); !ok || em.Code != syncproto.CodeBadMessage {
		t.Fatalf("reply to the hostile frame: %#v, want error %s", m, syncproto.CodeBadMessage)
	}

	// The connection goes on: it can still authenticate and open.
	enc := func(c syncproto.Codec, m syncproto.Message) []byte {
		m.Env().Type = syncproto.TypeOf(m)
		p, err := c.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ws.Write(ctx, websocket.MessageBinary, enc(syncproto.MsgpackCodec, &syncproto.Hello{Envelope: syncproto.Envelope{ID: "h"}, Token: "ta"}))
	if _, ok := read(ws, syncproto.MsgpackCodec).(*syncproto.Welcome); !ok {
		t.Fatal("no welcome after the hostile frame")
	}

	// A JSON save whose body is 20,000 "{}" (60 KB that would become
	// 20,000 160-byte blocks, grown by appending) is refused before decoding.
	jws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{syncproto.SubprotocolJSON},
		HTTPHeader: map[string][]string{"Authorization": {"Bearer tb"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer jws.CloseNow()
	if _, ok := read(jws, syncproto.JSONCodec).(*syncproto.Welcome); !ok {
		t.Fatal("no welcome")
	}
	amp := append(append([]byte(`{"type":"draft.save","id":"amp","doc":"d1","body":{"schemaVersion":1,"blocks":[`), bytes.Repeat([]byte("{},"), 20000)...), "{}]}}"...)
	jws.Write(ctx, websocket.MessageText, amp)
	m = read(jws, syncproto.JSONCodec)
	if em, ok := m.(*syncproto.Error); !ok || em.Code != syncproto.CodeBadMessage || em.ID != "amp" {
		t.Fatalf("reply to the amplifying frame: %#v", m)
	}

	// Another client edits as usual.
	c := dial(t, e, "ta", syncproto.SubprotocolMsgpack, nil)
	snap, err := c.Open(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	ack, err := c.Save(ctx, "d1", snap.Seq, upsert("p1", "after the attack"))
	if err != nil || ack.Seq != snap.Seq+1 {
		t.Fatalf("save after the attack: %+v %v", ack, err)
	}
	ws.Write(ctx, websocket.MessageBinary, enc(syncproto.MsgpackCodec, &syncproto.Ping{Envelope: syncproto.Envelope{ID: "p"}}))
	if _, ok := read(ws, syncproto.MsgpackCodec).(*syncproto.Pong); !ok {
		t.Fatal("the attacked connection no longer answers")
	}
}

// TestHostileFrameDecode: the 14-byte frame decodes to a bad_message
// error without allocating what it claims (before bounded decoding the id
// peek asked the runtime for 64 GiB and the process died).
func TestHostileFrameDecode(t *testing.T) {
	syncproto.MsgpackCodec.Decode(hostileFrame, false) // warm the codec's caches
	var err error
	got := boundedtest.Allocated(func() { _, err = syncproto.MsgpackCodec.Decode(hostileFrame, false) })
	var de *syncproto.DecodeError
	if !asDecodeError(err, &de) || de.Code != syncproto.CodeBadMessage {
		t.Fatalf("decode: %v, want a bad_message DecodeError", err)
	}
	if got > 4<<10 {
		t.Fatalf("decoding the 14-byte frame allocated %d bytes", got)
	}
	t.Logf("14-byte frame: %q, %d bytes allocated", err, got)
}
