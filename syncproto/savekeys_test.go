package syncproto_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/syncproto"
	"github.com/vmihailenco/msgpack/v5"
)

// A draft.save whose body or blocks carry keys the save does not have —
// the other codec's names for FlowDocument values, or a typo — is refused
// as invalid, naming the key, in both codecs. Decoded leniently, such a
// body lost its blocks and was saved as an empty document.
func TestSaveWithUnknownKeysRefused(t *testing.T) {
	e := startEnv(t, nil)
	ctx := ctxT(t)
	jsonBlock := map[string]any{"id": "p1", "type": "paragraph", "richText": []any{map[string]any{"text": "kept?"}}}
	storageBlock := map[string]any{"id": "p1", "t": "paragraph", "r": []any{map[string]any{"t": "kept?"}}}
	cases := []struct {
		name, proto string
		save        map[string]any
		field       string // the unknown key named; the other codec's keys of a block, when it is one of those
	}{
		{"msgpack body with JSON keys", syncproto.SubprotocolMsgpack,
			map[string]any{"body": map[string]any{"schemaVersion": 1, "blocks": []any{jsonBlock}}}, "schemaVersion|blocks"},
		{"msgpack change with a JSON-keyed block", syncproto.SubprotocolMsgpack,
			map[string]any{"changes": []any{map[string]any{"op": "upsert", "block": jsonBlock}}}, "type|richText"},
		{"JSON body with storage keys", syncproto.SubprotocolJSON,
			map[string]any{"body": map[string]any{"v": 1, "b": []any{storageBlock}}}, "v|b"},
		{"JSON save with a misspelt field", syncproto.SubprotocolJSON,
			map[string]any{"chnages": []any{map[string]any{"op": "delete", "blockId": "p1"}}}, "chnages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{c.proto}})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.CloseNow()
			codec := syncproto.CodecFor(c.proto)
			typ := websocket.MessageText
			if codec.Binary() {
				typ = websocket.MessageBinary
			}
			request := func(m map[string]any) syncproto.Message {
				t.Helper()
				var frame []byte
				if codec.Binary() {
					frame, err = msgpack.Marshal(m)
				} else {
					frame, err = json.Marshal(m)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := ws.Write(ctx, typ, frame); err != nil {
					t.Fatal(err)
				}
				for {
					_, data, err := ws.Read(ctx)
					if err != nil {
						t.Fatal(err)
					}
					reply, err := codec.Decode(data, true)
					if err != nil {
						t.Fatal(err)
					}
					if reply.Env().ID == m["id"] {
						return reply
					}
				}
			}
			request(map[string]any{"type": "hello", "id": "h", "token": "ta"})
			snap, ok := request(map[string]any{"type": "open", "id": "o", "doc": "d1"}).(*syncproto.Snapshot)
			if !ok {
				t.Fatal("open did not answer a snapshot")
			}
			save := map[string]any{"type": "draft.save", "id": "s", "doc": "d1", "baseSeq": snap.Seq}
			for k, v := range c.save {
				save[k] = v
			}
			em, ok := request(save).(*syncproto.Error)
			if !ok {
				t.Fatalf("the save was accepted")
			}
			// A Go map's keys go out in any order, so the first unknown
			// key the decoder meets is any of the block's foreign keys.
			named := false
			for _, f := range strings.Split(c.field, "|") {
				named = named || strings.Contains(em.Message, `unknown field "`+f+`"`)
			}
			if em.Code != syncproto.CodeInvalid || em.Kind != "invalid" || !named {
				t.Errorf("got %s/%s %q, want invalid naming %q", em.Code, em.Kind, em.Message, c.field)
			}
			d, err := e.Repo.Draft(ctx, "d1")
			if err != nil {
				t.Fatal(err)
			}
			if d.Seq != snap.Seq || len(d.Body.Blocks) != len(snap.Body.Blocks) {
				t.Errorf("a refused save changed the draft: seq %d→%d, %d→%d blocks", snap.Seq, d.Seq, len(snap.Body.Blocks), len(d.Body.Blocks))
			}
		})
	}
}
