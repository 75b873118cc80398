package syncproto_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
	"github.com/foliodev/folio/syncproto/synctest"
)

var codecs = []string{syncproto.SubprotocolMsgpack, syncproto.SubprotocolJSON}

func para(id, text string) flowdoc.Block {
	return flowdoc.Block{ID: id, Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: text}}}
}

func upsert(id, text string) syncproto.Change {
	b := para(id, text)
	return syncproto.Change{Op: "upsert", Block: &b}
}

func blockText(b flowdoc.Block) string {
	s := ""
	for _, r := range b.RichText {
		s += r.Text
	}
	return s
}

// startEnv starts a server with users alice (author, token "ta"), bob
// (author, "tb") and root (admin, "tr"), and alice's document "d1" with
// paragraphs p1..p3.
func startEnv(t testing.TB, configure func(*syncproto.Config)) *synctest.Env {
	t.Helper()
	return startEnvWith(t, repo.Options{}, configure)
}

// startEnvWith is startEnv over a repository with options ro (a fake
// clock, checkpoint rules).
func startEnvWith(t testing.TB, ro repo.Options, configure func(*syncproto.Config)) *synctest.Env {
	t.Helper()
	e, err := synctest.Start(synctest.Options{Repo: ro, Configure: func(c *syncproto.Config) {
		c.MessagesPerSecond = 1000
		c.Burst = 1000
		if configure != nil {
			configure(c)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	e.Auth.Add("ta", "alice", false)
	e.Auth.Add("tb", "bob", false)
	e.Auth.Add("tr", "root", true)
	if err := e.CreateDoc("d1", "alice", docOf3()); err != nil {
		t.Fatal(err)
	}
	return e
}

// recorder collects the events a client receives.
type recorder struct {
	mu     sync.Mutex
	events []*syncproto.Event
	wake   chan struct{}
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{}, 1)} }

func (r *recorder) on(e *syncproto.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *recorder) snapshot() []*syncproto.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*syncproto.Event(nil), r.events...)
}

// waitFor waits until cond holds for the recorded events.
func (r *recorder) waitFor(t testing.TB, what string, cond func([]*syncproto.Event) bool) []*syncproto.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		evs := r.snapshot()
		if cond(evs) {
			return evs
		}
		select {
		case <-r.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s; got %d events", what, len(evs))
		}
	}
}

func dial(t testing.TB, e *synctest.Env, token, proto string, rec *recorder) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := client.Options{Token: token, Subprotocol: proto}
	if rec != nil {
		o.OnEvent = rec.on
	}
	c, err := client.Dial(ctx, e.URL, o)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func draftUpdated(t testing.TB, e *syncproto.Event) syncproto.DraftUpdated {
	t.Helper()
	var du syncproto.DraftUpdated
	if err := e.DecodeData(&du); err != nil {
		t.Fatalf("decode %s: %v", e.Type, err)
	}
	return du
}

// waitUntil polls cond.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func docOf3() flowdoc.Document {
	return flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("p1", "one"), para("p2", "two"), para("p3", "three")}}
}

func asDecodeError(err error, de **syncproto.DecodeError) bool { return errors.As(err, de) }
