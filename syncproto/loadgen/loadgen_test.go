package loadgen_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/loadgen"
	"github.com/foliodev/folio/syncproto/synctest"
)

var (
	editors  = flag.Int("editors", 20, "editing connections")
	duration = flag.Duration("duration", time.Second, "measured phase")
	interval = flag.Duration("interval", 200*time.Millisecond, "save interval per editor")
	idle     = flag.Int("idle", 100, "idle connections for the memory figure")
)

// TestRun drives the in-memory server with the load generator. Larger
// runs: go test ./syncproto/loadgen -run TestRun -v -editors 1000
// -interval 1.2s -duration 30s -idle 1000
func TestRun(t *testing.T) {
	e, err := synctest.Start(synctest.Options{Configure: func(c *syncproto.Config) { c.CheckpointIdle = -1; c.CheckpointMax = -1 }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Auth.Add("bench", "bench", false)
	ndocs := max(*editors/2, 1)
	var docs []string
	for i := 0; i < ndocs; i++ {
		id := fmt.Sprint("doc", i)
		if err := e.CreateDoc(id, "bench", flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
			{ID: "title", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 1}, RichText: []flowdoc.Run{{Text: "Bench"}}}}}); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, id)
	}
	o := loadgen.Options{URL: e.URL, Token: "bench", Docs: docs, Editors: *editors, ReadersPerDoc: 1,
		Interval: *interval, Duration: *duration, IdleConns: *idle}
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration+time.Minute)
	defer cancel()
	r, err := loadgen.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", r)
	want := float64(*editors) / interval.Seconds()
	if r.Errors > 0 || r.Conflicts > 0 || r.Acked == 0 || r.AckedPerSec < want/2 {
		t.Fatalf("load run: %+v (expected about %.0f saves/s)", r, want)
	}
	if r.Events < int64(r.Acked) {
		t.Fatalf("readers and editors received %d events for %d saves", r.Events, r.Acked)
	}
	if *idle > 0 && r.BytesPerIdleConn == 0 {
		t.Fatalf("no memory figure: %+v", r)
	}
}
