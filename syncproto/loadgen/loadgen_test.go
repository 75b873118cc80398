package loadgen_test

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/syncproto/loadgen"
)

var (
	editors  = flag.Int("editors", 20, "editing connections")
	duration = flag.Duration("duration", time.Second, "measured phase")
	interval = flag.Duration("interval", 200*time.Millisecond, "save interval per editor")
	idle     = flag.Int("idle", 100, "idle connections for the memory figure")
	blocks   = flag.Int("blocks", 200, "blocks per document")
)

// TestRun drives a server on a real repository with the load generator.
// Larger runs: go test ./syncproto/loadgen -run TestRun -v -editors 1000
// -interval 1.2s -duration 30s -idle 1000
func TestRun(t *testing.T) {
	o := loadgen.LocalOptions{Dir: t.TempDir(), Blocks: *blocks, Options: loadgen.Options{EditorsPerDoc: 2,
		Editors: *editors, ReadersPerDoc: 1, Interval: *interval, Duration: *duration, IdleConns: *idle}}
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration+time.Minute)
	defer cancel()
	r, err := loadgen.RunLocal(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", r)
	want := float64(*editors) / interval.Seconds()
	if r.Errors > 0 || r.Conflicts > 0 || r.Acked == 0 || r.Acked != r.Offered || r.AckedPerSec < want/2 {
		t.Fatalf("load run: %+v (expected about %.0f saves/s, every one acknowledged)", r, want)
	}
	if r.Docs != (*editors+1)/2 || r.Blocks != *blocks || r.AckP50 > r.AckP99 || r.AckP99 > r.AckMax {
		t.Fatalf("report: %+v", r)
	}
	// Each save reaches the other editor of its document and one reader.
	if r.Events < 2*int64(r.Acked) {
		t.Fatalf("readers and editors received %d events for %d saves", r.Events, r.Acked)
	}
	if *idle > 0 && r.BytesPerIdleConn == 0 || r.BytesPerActiveConn == 0 {
		t.Fatalf("no memory figure: %+v", r)
	}
}

// TestOpenLoop: against a server that cannot keep up (every save is held
// for longer than the editors' interval), the load generator keeps the
// schedule: every save that was due is sent (none skipped), latency
// counts from the due time so it grows with the backlog, and the
// acknowledged rate falls below the offered one.
func TestOpenLoop(t *testing.T) {
	const every = 20 * time.Millisecond
	o := loadgen.LocalOptions{Dir: t.TempDir(), Blocks: 10, Options: loadgen.Options{EditorsPerDoc: 1,
		Editors: 2, ReadersPerDoc: -1, Interval: every, Duration: 300 * time.Millisecond, Drain: 5 * time.Second}}
	o.SaveDelay = 3 * every // the server holds each save this long
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := loadgen.RunLocal(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", r)
	// 2 editors, 15 saves due each in 300 ms; answered one per 60 ms.
	if r.Offered < 28 || r.Acked != r.Offered || r.Errors != 0 {
		t.Fatalf("saves due %d, acknowledged %d, errors %d: a save was skipped or lost", r.Offered, r.Acked, r.Errors)
	}
	if r.AckedPerSec > r.OfferedPerSec*0.6 {
		t.Fatalf("acknowledged %.0f/s of %.0f/s offered from a server 3 times too slow", r.AckedPerSec, r.OfferedPerSec)
	}
	// The last saves waited for the whole backlog: far more than one
	// save's service time.
	if r.AckMax < 10*every {
		t.Fatalf("max latency %s: counted from the send, not from the due time", r.AckMax)
	}
}
