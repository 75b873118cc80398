package syncproto_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// slowEvents delays every store read of stream delivery a little, as a
// loaded server does, so that event delivery and replies race.
type slowEvents struct {
	syncproto.Events
	max time.Duration
}

func (s slowEvents) Read(ctx context.Context, name string, after uint64, limit int) ([]syncproto.StreamEvent, error) {
	time.Sleep(rand.N(s.max))
	return s.Events.Read(ctx, name, after, limit)
}

// naiveCopy is an editor's copy of a document kept by the spec's skip
// rule alone: apply draft.updated events in order, skipping one whose
// seq is not above the copy's; after an ack the copy is at the ack's seq.
type naiveCopy struct {
	mu     sync.Mutex
	seq    uint64
	blocks map[string]string
}

func (c *naiveCopy) onEvent(t testing.TB, e *syncproto.Event) {
	if e.Type != syncproto.TypeDraftUpdated {
		return
	}
	du := draftUpdated(t, e)
	c.mu.Lock()
	defer c.mu.Unlock()
	if du.Seq <= c.seq {
		return
	}
	c.seq = du.Seq
	for _, b := range du.Blocks {
		if b.Block != nil {
			c.blocks[b.ID] = blockText(*b.Block)
		}
	}
}

// TestAckFollowsEarlierUpdates is the lost update of four editors
// saving different blocks: each keeps its copy by the skip rule, so an
// update that reached it after its own ack of a higher seq would be
// dropped and its copy would diverge from the draft. The server queues
// the ack of seq S after every draft.updated below S.
func TestAckFollowsEarlierUpdates(t *testing.T) {
	for _, proto := range codecs {
		t.Run(proto, func(t *testing.T) {
			e := startEnv(t, func(c *syncproto.Config) {
				c.Events = slowEvents{Events: c.Events, max: 10 * time.Millisecond}
			})
			ctx := ctxT(t)
			const editors, saves = 4, 25
			doc := flowdoc.Document{SchemaVersion: 1}
			for i := range editors {
				doc.Blocks = append(doc.Blocks, para(fmt.Sprintf("b%d", i), ""))
			}
			if err := e.CreateDoc("four", "alice", doc); err != nil {
				t.Fatal(err)
			}
			copies := make([]*naiveCopy, editors)
			clients := make([]*client.Client, editors)
			for i := range editors {
				cp := &naiveCopy{blocks: map[string]string{}}
				copies[i] = cp
				c, err := client.Dial(ctx, e.URL, client.Options{Token: "ta", Subprotocol: proto,
					OnEvent: func(ev *syncproto.Event) { cp.onEvent(t, ev) }})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.CloseNow() })
				clients[i] = c
				snap, err := c.Open(ctx, "four")
				if err != nil {
					t.Fatal(err)
				}
				cp.seq = snap.Seq
				for _, b := range snap.Body.Blocks {
					cp.blocks[b.ID] = blockText(b)
				}
			}
			var wg sync.WaitGroup
			errc := make(chan error, editors)
			for i := range editors {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cp, id := copies[i], fmt.Sprintf("b%d", i)
					for n := range saves {
						cp.mu.Lock()
						text := cp.blocks[id] + fmt.Sprintf("%d.%d ", i, n)
						base := cp.seq
						cp.mu.Unlock()
						ack, err := clients[i].Save(ctx, "four", base, upsert(id, text))
						if err != nil {
							errc <- fmt.Errorf("editor %d save %d: %w", i, n, err)
							return
						}
						cp.mu.Lock()
						cp.blocks[id] = text
						cp.seq = max(cp.seq, ack.Seq)
						cp.mu.Unlock()
					}
				}()
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			d, err := e.Repo.Draft(ctx, "four")
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, b := range d.Body.Blocks {
				want[b.ID] = blockText(b)
				if strings.Count(want[b.ID], ".") != saves {
					t.Fatalf("block %s holds %q: not every save landed", b.ID, want[b.ID])
				}
			}
			for i, cp := range copies {
				waitUntil(t, fmt.Sprintf("editor %d at seq %d", i, d.Seq), func() bool {
					cp.mu.Lock()
					defer cp.mu.Unlock()
					return cp.seq >= d.Seq
				})
				cp.mu.Lock()
				for id, text := range want {
					if cp.blocks[id] != text {
						t.Errorf("editor %d has %s = %q, the draft %q: an update was dropped", i, id, cp.blocks[id], text)
					}
				}
				cp.mu.Unlock()
			}
		})
	}
}
