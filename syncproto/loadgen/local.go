package loadgen

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/synctest"
)

// LocalOptions configure RunLocal.
type LocalOptions struct {
	Options
	// Dir is the data directory of the server; empty: a temporary one.
	// It must not be in use by a running daemon.
	Dir string
	// Blocks is the size of each document RunLocal creates (MakeDoc;
	// default 200).
	Blocks int
	// SaveDelay makes the server hold every save this long before it
	// handles it: a server that cannot keep up, to test the generator.
	SaveDelay time.Duration
}

// slowDocs holds every save for delay.
type slowDocs struct {
	syncproto.Docs
	delay time.Duration
}

func (s slowDocs) SaveDraft(ctx context.Context, p syncproto.SaveParams) (syncproto.SaveResult, error) {
	time.Sleep(s.delay)
	return s.Docs.SaveDraft(ctx, p)
}

// RunLocal starts a sync server on loopback in this process, over a
// repository in Dir with the checkpoint rules at their defaults, creates
// one document of Blocks blocks per EditorsPerDoc editors and runs the
// load against it. Options.URL, Token, Docs and Blocks are set by
// RunLocal. The memory figures count the clients' side of each
// connection too (both ends live in this process).
func RunLocal(ctx context.Context, o LocalOptions) (Report, error) {
	if o.Editors <= 0 {
		o.Editors = 100
	}
	if o.EditorsPerDoc <= 0 {
		o.EditorsPerDoc = 1
	}
	if o.Blocks <= 0 {
		o.Blocks = 200
	}
	env, err := synctest.Start(synctest.Options{Dir: o.Dir, Configure: func(c *syncproto.Config) {
		// Editors save every Interval; allow them and the readers a margin.
		c.MessagesPerSecond, c.Burst = 100, 200
		if o.SaveDelay > 0 {
			c.Docs = slowDocs{c.Docs, o.SaveDelay}
		}
	}})
	if err != nil {
		return Report{}, err
	}
	defer env.Close()
	env.Auth.Add("bench-token", "bench", false)
	ndocs := (o.Editors + o.EditorsPerDoc - 1) / o.EditorsPerDoc
	body, ids := MakeDoc(o.Blocks)
	o.Docs, o.Options.Blocks = nil, ids
	for i := 0; i < ndocs; i++ {
		id := fmt.Sprintf("bench-%d", i)
		if err := env.CreateDoc(id, "bench", body); err != nil {
			return Report{}, fmt.Errorf("loadgen: create %s: %w", id, err)
		}
		o.Docs = append(o.Docs, id)
	}
	o.URL, o.Token = env.URL, "bench-token"
	if o.Breakdown == nil {
		o.Breakdown = selfGoMemory // the clients' side included, as for Memory
	}
	return Run(ctx, o.Options)
}

// selfGoMemory is this process's Go heap in use and goroutine stacks.
func selfGoMemory() (MemBreakdown, error) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return MemBreakdown{Heap: m.HeapInuse, Stacks: m.StackInuse}, nil
}
