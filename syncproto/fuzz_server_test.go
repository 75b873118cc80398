package syncproto_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/syncproto"
)

// TestMangledFrames sends thousands of mangled messages (bytes flipped,
// cut, duplicated, fields swapped between messages) on one authenticated
// connection with an open document, in both codecs: whatever arrives, the
// server answers and the connection stays usable (a ping after each frame
// gets its pong). The decoder itself is fuzzed by FuzzDecode; this checks
// that no message the decoder accepts breaks the handlers.
func TestMangledFrames(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	e := startEnv(t, func(c *syncproto.Config) {
		c.MessagesPerSecond, c.Burst = 1e9, 1e9
		c.MaxSubscriptions = 1 << 20
	})
	for _, codec := range []syncproto.Codec{syncproto.JSONCodec, syncproto.MsgpackCodec} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, e.URL, &websocket.DialOptions{Subprotocols: []string{codec.Name()},
			HTTPHeader: map[string][]string{"Authorization": {"Bearer ta"}}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		ws.SetReadLimit(-1)
		typ := websocket.MessageText
		if codec.Binary() {
			typ = websocket.MessageBinary
		}
		enc := func(m syncproto.Message) []byte {
			m.Env().Type = syncproto.TypeOf(m)
			p, err := codec.Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		var seeds [][]byte
		for _, m := range append(append(sampleMessages(), sampleEvents()...), assistSamples()...) {
			seeds = append(seeds, enc(m))
		}
		open := enc(&syncproto.Open{Envelope: syncproto.Envelope{ID: "o"}, Doc: "d1"})
		ping := enc(&syncproto.Ping{Envelope: syncproto.Envelope{ID: "mangle-ping"}})
		ws.Write(ctx, typ, open)

		rng := rand.New(rand.NewPCG(1, uint64(len(codec.Name()))))
		for i := 0; i < n; i++ {
			p := mangle(rng, seeds)
			if err := ws.Write(ctx, typ, p); err != nil {
				t.Fatalf("write: %v", err)
			}
			if err := ws.Write(ctx, typ, ping); err != nil {
				t.Fatalf("write ping: %v", err)
			}
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					t.Fatalf("%s: the connection broke after frame %d %q: %v", codec.Name(), i, p, err)
				}
				m, err := codec.Decode(data, true)
				if err != nil {
					t.Fatalf("%s: the server sent an undecodable frame: %v", codec.Name(), err)
				}
				if m.Env().ID == "mangle-ping" {
					if _, ok := m.(*syncproto.Pong); !ok {
						t.Fatalf("ping after %q answered with %s", p, m.Env().Type)
					}
					break
				}
			}
		}
	}
}

// mangle derives a broken or odd message from the seeds.
func mangle(rng *rand.Rand, seeds [][]byte) []byte {
	p := append([]byte(nil), seeds[rng.IntN(len(seeds))]...)
	for k := rng.IntN(4); k >= 0; k-- {
		switch rng.IntN(6) {
		case 0: // flip a byte
			if len(p) > 0 {
				p[rng.IntN(len(p))] ^= byte(1 << rng.IntN(8))
			}
		case 1: // cut
			if len(p) > 1 {
				p = p[:rng.IntN(len(p))]
			}
		case 2: // splice another message's tail in
			q := seeds[rng.IntN(len(seeds))]
			if len(p) > 0 && len(q) > 0 {
				p = append(p[:rng.IntN(len(p))], q[rng.IntN(len(q)):]...)
			}
		case 3: // duplicate a slice
			if len(p) > 2 {
				a := rng.IntN(len(p) - 1)
				b := a + 1 + rng.IntN(len(p)-a-1)
				p = append(p[:b:b], p[a:]...)
			}
		case 4: // change a type name to another request type
			types := []string{"open", "leave", "draft.save", "checkpoint", "restore", "subscribe", "unsubscribe", "hello"}
			s := string(p)
			for _, from := range types {
				if strings.Contains(s, from) {
					s = strings.Replace(s, from, types[rng.IntN(len(types))], 1)
					break
				}
			}
			p = []byte(s)
		case 5: // random bytes
			q := make([]byte, rng.IntN(32))
			for i := range q {
				q[i] = byte(rng.Uint32())
			}
			p = append(p, q...)
		}
	}
	return p
}
