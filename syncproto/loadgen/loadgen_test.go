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
)

// TestRun drives a server on a real repository with the load generator.
// Larger runs: go test ./syncproto/loadgen -run TestRun -v -editors 1000
// -interval 1.2s -duration 30s -idle 1000
func TestRun(t *testing.T) {
	o := loadgen.LocalOptions{Dir: t.TempDir(), EditorsPerDoc: 2, Options: loadgen.Options{
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
	if r.Errors > 0 || r.Conflicts > 0 || r.Acked == 0 || r.AckedPerSec < want/2 {
		t.Fatalf("load run: %+v (expected about %.0f saves/s)", r, want)
	}
	// Each save reaches the other editor of its document and one reader.
	if r.Events < 2*int64(r.Acked) {
		t.Fatalf("readers and editors received %d events for %d saves", r.Events, r.Acked)
	}
	if *idle > 0 && r.BytesPerIdleConn == 0 {
		t.Fatalf("no memory figure: %+v", r)
	}
}
