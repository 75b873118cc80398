package repo

import (
	"fmt"
	"testing"
	"time"

	"github.com/foliodev/folio/objstore"
)

var epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func newClockRepo(t testing.TB, o Options) (*Repo, *FakeClock) {
	t.Helper()
	clock := NewFakeClock(epoch)
	o.Clock = clock
	dir := t.TempDir()
	o.KV = testKV(t, dir)
	r, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, clock
}

func reasonsOf(t testing.TB, r *Repo, doc string) string {
	t.Helper()
	vs, err := r.Log(ctx, doc, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for i := len(vs) - 1; i >= 0; i-- {
		out += fmt.Sprintf(" %s:%s", vs[i].Label, vs[i].Reason)
	}
	return out
}

// TestCheckpointPolicy: the checkpoint rules seal every save made through
// SaveDraft, whatever called it, on the repository's clock.
func TestCheckpointPolicy(t *testing.T) {
	r, clock := newClockRepo(t, Options{CheckpointIdle: 30 * time.Second, CheckpointMax: 10 * time.Minute})
	doc := create(t, r, 3)
	var observed []string
	r.OnCheckpoint(func(v VersionInfo) { observed = append(observed, v.Label+":"+v.Reason) })

	// Idle: sealed 30 s after the last save that changed the draft, by
	// its author, with the clock's time.
	res := save(t, r, doc, 1, para("b0", "one"))
	clock.Advance(20 * time.Second)
	res = save(t, r, doc, res.Seq, para("b1", "two"))
	clock.Advance(29 * time.Second)
	if got := reasonsOf(t, r, doc); got != " v1.r0:" {
		t.Fatalf("sealed 29 s after a save: %s", got)
	}
	clock.Advance(time.Second)
	if got := reasonsOf(t, r, doc); got != " v1.r0: v1.r1:idle" {
		t.Fatalf("after 30 s idle: %s", got)
	}
	vs, _ := r.Log(ctx, doc, 1, 0)
	if vs[0].Author != "ana" || vs[0].Time != epoch.Add(50*time.Second).UnixMilli() {
		t.Fatalf("idle checkpoint %+v", vs[0])
	}

	// A save that leaves the draft as sealed arms nothing.
	res = save(t, r, doc, res.Seq, para("b1", "two"))
	if len(r.PendingCheckpoints()) != 0 {
		t.Fatalf("pending after a save that changed nothing: %v", r.PendingCheckpoints())
	}

	// A checkpoint sealed by other means (here a client's) stops the timers.
	res = save(t, r, doc, res.Seq, para("b2", "three"))
	if _, _, err := r.Checkpoint(ctx, doc, objstore.ReasonManual, "ana", ""); err != nil {
		t.Fatal(err)
	}
	if clock.Pending() != 0 || len(r.PendingCheckpoints()) != 0 {
		t.Fatalf("timers left after a manual checkpoint: %d %v", clock.Pending(), r.PendingCheckpoints())
	}
	clock.Advance(time.Hour)
	if got := reasonsOf(t, r, doc); got != " v1.r0: v1.r1:idle v1.r2:manual" {
		t.Fatalf("after a manual checkpoint: %s", got)
	}

	// Max: saves every 25 s keep the draft from going idle; it is sealed
	// 10 min after it became unsealed, and the saves after that start the
	// rules again.
	for i := 0; i < 26; i++ {
		res = save(t, r, doc, res.Seq, para("b0", fmt.Sprint("edit ", i)))
		clock.Advance(25 * time.Second)
	}
	if got := reasonsOf(t, r, doc); got != " v1.r0: v1.r1:idle v1.r2:manual v1.r3:max_duration" {
		t.Fatalf("after 650 s of saves: %s", got)
	}
	clock.Advance(5 * time.Second) // 30 s after the last save, which came after the seal
	if got := reasonsOf(t, r, doc); got != " v1.r0: v1.r1:idle v1.r2:manual v1.r3:max_duration v1.r4:idle" {
		t.Fatalf("after the last save went idle: %s", got)
	}
	// OnCheckpoint (metrics) learns of the rules' checkpoints, not of the others.
	if got := fmt.Sprint(observed); got != "[v1.r1:idle v1.r3:max_duration v1.r4:idle]" {
		t.Fatalf("observed %s", got)
	}
}

// TestCheckpointPolicyOff: negative durations turn the rules off, and
// Close stops the timers of drafts it leaves unsealed (OpenDraft in the
// next process recovers them).
func TestCheckpointPolicyOff(t *testing.T) {
	r, clock := newClockRepo(t, Options{CheckpointIdle: -1, CheckpointMax: -1})
	doc := create(t, r, 2)
	save(t, r, doc, 1, para("b0", "unsealed"))
	clock.Advance(24 * time.Hour)
	if got := reasonsOf(t, r, doc); got != " v1.r0:" || clock.Pending() != 0 {
		t.Fatalf("rules off: %s, %d timers", got, clock.Pending())
	}

	r2, clock2 := newClockRepo(t, Options{})
	doc = create(t, r2, 2)
	save(t, r2, doc, 1, para("b0", "unsealed"))
	if clock2.Pending() != 1 {
		t.Fatalf("%d timers after a save, want 1", clock2.Pending())
	}
	r2.Close()
	if clock2.Pending() != 0 {
		t.Fatalf("%d timers after Close", clock2.Pending())
	}
}
