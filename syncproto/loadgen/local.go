package loadgen

import (
	"context"
	"fmt"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/synctest"
)

// LocalOptions configure RunLocal.
type LocalOptions struct {
	Options
	// Dir is the data directory of the server; empty: a temporary one.
	// It must not be in use by a running daemon.
	Dir string
	// EditorsPerDoc editors share each document (default 1).
	EditorsPerDoc int
}

// RunLocal starts a sync server on loopback in this process, over a
// repository in Dir with checkpoint timers at their defaults, creates
// the documents and runs the load against it. Options.URL, Token and
// Docs are set by RunLocal. The memory figure counts the clients' side
// of each idle connection too (both ends live in this process).
func RunLocal(ctx context.Context, o LocalOptions) (Report, error) {
	if o.Editors <= 0 {
		o.Editors = 100
	}
	if o.EditorsPerDoc <= 0 {
		o.EditorsPerDoc = 1
	}
	env, err := synctest.Start(synctest.Options{Dir: o.Dir, Configure: func(c *syncproto.Config) {
		// Editors save every Interval; allow them and the readers a margin.
		c.MessagesPerSecond, c.Burst = 100, 200
	}})
	if err != nil {
		return Report{}, err
	}
	defer env.Close()
	env.Auth.Add("bench-token", "bench", false)
	ndocs := (o.Editors + o.EditorsPerDoc - 1) / o.EditorsPerDoc
	o.Docs = o.Docs[:0]
	for i := 0; i < ndocs; i++ {
		id := fmt.Sprintf("bench-%d", i)
		if err := env.CreateDoc(id, "bench", flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion, Blocks: []flowdoc.Block{
			{ID: "title", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 1}, RichText: []flowdoc.Run{{Text: "Load test " + id}}},
		}}); err != nil {
			return Report{}, fmt.Errorf("loadgen: create %s: %w", id, err)
		}
		o.Docs = append(o.Docs, id)
	}
	o.URL, o.Token = env.URL, "bench-token"
	return Run(ctx, o.Options)
}
