package syncproto_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// rawReader is a reader connection that counts the frames it receives
// without decoding them, so that the benchmark measures the server.
type rawReader struct {
	ws     *websocket.Conn
	frames atomic.Int64
}

// tally counts the frames of all readers and wakes a waiter.
type tally struct {
	mu sync.Mutex
	n  int64
	c  *sync.Cond
}

func (t *tally) add() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
	t.c.Broadcast()
}

func (t *tally) waitFor(n int64) {
	t.mu.Lock()
	for t.n < n {
		t.c.Wait()
	}
	t.mu.Unlock()
}

func dialRaw(b *testing.B, ctx context.Context, url, token, proto, doc string, t *tally) *rawReader {
	b.Helper()
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{proto}})
	if err != nil {
		b.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	codec := syncproto.CodecFor(proto)
	open, _ := codec.Encode(&syncproto.Open{Envelope: syncproto.Envelope{Type: syncproto.TypeOpen, ID: "1"}, Doc: doc})
	typ := websocket.MessageText
	if codec.Binary() {
		typ = websocket.MessageBinary
	}
	if err := ws.Write(ctx, typ, open); err != nil {
		b.Fatal(err)
	}
	r := &rawReader{ws: ws}
	go func() {
		for {
			if _, _, err := ws.Read(context.Background()); err != nil {
				return
			}
			r.frames.Add(1)
			t.add()
		}
	}()
	return r
}

// BenchmarkFanout: one editor saves a block of a 200-block document that
// readers (half JSON, half MessagePack) have open; an operation is one
// save delivered to every reader. Run with -benchtime and compare
// before/after with benchstat.
func BenchmarkFanout(b *testing.B) {
	for _, readers := range []int{10, 100, 400} {
		b.Run(fmt.Sprint("readers=", readers), func(b *testing.B) {
			e := startEnv(b, func(c *syncproto.Config) { c.MaxSubscriptions = 4 })
			ctx := context.Background()
			doc := flowdoc.Document{SchemaVersion: 1}
			for i := range 200 {
				doc.Blocks = append(doc.Blocks, para(fmt.Sprintf("b%d", i), fmt.Sprintf("block %d with some text in it", i)))
			}
			if err := e.CreateDoc("big", "alice", doc); err != nil {
				b.Fatal(err)
			}
			t := &tally{}
			t.c = sync.NewCond(&t.mu)
			rs := make([]*rawReader, readers)
			for i := range rs {
				rs[i] = dialRaw(b, ctx, e.URL, "ta", codecs[i%2], "big", t)
			}
			t.waitFor(int64(2 * readers)) // welcome and snapshot
			w, err := client.Dial(ctx, e.URL, client.Options{Token: "ta"})
			if err != nil {
				b.Fatal(err)
			}
			defer w.CloseNow()
			snap, err := w.Open(ctx, "big")
			if err != nil {
				b.Fatal(err)
			}
			seq := snap.Seq
			b.ResetTimer()
			for i := range b.N {
				ack, err := w.Save(ctx, "big", seq, upsert(fmt.Sprintf("b%d", i%200), fmt.Sprintf("edit %d", i)))
				if err != nil {
					b.Fatal(err)
				}
				seq = ack.Seq
				t.waitFor(int64(readers * (2 + i + 1)))
			}
			b.StopTimer()
			for _, r := range rs {
				r.ws.CloseNow()
			}
		})
	}
}
