package repo

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/objstore"
)

// recorder is a subscriber that keeps what it was told.
type recorder struct {
	mu  sync.Mutex
	got []Event
	n   chan struct{}
}

func newRecorder() *recorder { return &recorder{n: make(chan struct{}, 1024)} }

func (rc *recorder) fn(e Event) {
	rc.mu.Lock()
	e.Changed = slices.Clone(e.Changed)
	rc.got = append(rc.got, e)
	rc.mu.Unlock()
	rc.n <- struct{}{}
}

// wait returns the first n events, waiting for them to arrive.
func (rc *recorder) wait(t *testing.T, n int) []Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		rc.mu.Lock()
		if len(rc.got) >= n {
			out := slices.Clone(rc.got)
			rc.mu.Unlock()
			return out
		}
		rc.mu.Unlock()
		select {
		case <-rc.n:
		case <-deadline:
			t.Fatalf("waited for %d events, have %v", n, rc.got)
		}
	}
}

// TestSubscribersSeeEveryChange: every subscriber learns of every
// committed change in commit order — saves, checkpoints, accepts,
// restores and the changes that do not touch the body (delete, undelete,
// chown, purge) — and a subscriber that does not return holds up neither
// the writers nor the other subscribers.
func TestSubscribersSeeEveryChange(t *testing.T) {
	r := newRepo(t)
	a, b := newRecorder(), newRecorder()
	cancelA := r.Subscribe(a.fn)
	defer cancelA()
	r.Subscribe(b.fn)
	stuck := make(chan struct{})
	defer close(stuck)
	entered := make(chan struct{}, 1)
	cancelStuck := r.Subscribe(func(Event) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-stuck
	})
	defer func() { go cancelStuck() }()

	doc := create(t, r, 3)
	<-entered // the stuck subscriber holds its first event from here on
	save(t, r, doc, 1, para("b1", "edited"))
	if _, _, err := r.Checkpoint(ctx, doc, "manual", "ana", ""); err != nil {
		t.Fatal(err)
	}
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	blk := para("b2", "accepted")
	if _, err := r.CommitChange(ctx, ChangeParams{Doc: doc, Actor: "ana", Kind: objstore.KindAcceptSuggestion,
		BaseVersion: d.HeadID, BaseFingerprint: d.Fingerprint, SuggestionID: "s1",
		TargetBlocks: map[string]objstore.ID{"b2": objstore.ID(flowdoc.ContentHash(d.Body.Blocks[2]))},
		Ops:          []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: "b2", Block: &blk}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore(ctx, doc, "v1.r0", "ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Chown(ctx, ChownParams{Doc: doc, Owner: "bo", Actor: "admin"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DeleteDoc(ctx, doc, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UndeleteDoc(ctx, doc, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DeleteDoc(ctx, doc, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, n, err := r.purgeDeleted(ctx, time.Now().Add(time.Hour).UnixMilli(), false); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	type step struct{ kind, version, actor string }
	want := []step{{"create", "v1.r0", ""}, {ChangeDraft, "", "ana"}, {"checkpoint", "v1.r1", "ana"},
		{"accept_suggestion", "v1.r2", "ana"}, {"restore", "v2.r0", "ana"}, {ChangeChown, "", "admin"},
		{ChangeDeleteDoc, "", "admin"}, {ChangeUndeleteDoc, "", "admin"}, {ChangeDeleteDoc, "", "admin"}, {ChangePurge, "", ""}}
	for name, rc := range map[string]*recorder{"a": a, "b": b} {
		got := rc.wait(t, len(want))
		for i, w := range want {
			e := got[i]
			if e.Doc != doc || e.Kind != w.kind || e.Version != w.version || e.Actor != w.actor {
				t.Errorf("subscriber %s, event %d: %+v, want %+v", name, i, e, w)
			}
		}
		if e := got[1]; !slices.Equal(e.Changed, []string{"b1"}) || !e.BodyChanged {
			t.Errorf("subscriber %s: the save's event %+v does not name b1", name, e)
		}
		if e := got[3]; e.SuggestionID != "s1" || !slices.Equal(e.Changed, []string{"b2"}) {
			t.Errorf("subscriber %s: the accept's event %+v", name, e)
		}
	}
	// A cancelled subscriber hears nothing more.
	cancelA()
	n := len(a.wait(t, len(want)))
	create(t, r, 1)
	b.wait(t, len(want)+1)
	if len(a.wait(t, 0)) != n {
		t.Fatal("a cancelled subscriber was called")
	}
}
