package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/syncproto"
	"github.com/foliodev/folio/syncproto/client"
)

// Options configure Run.
type Options struct {
	// URL is the server's ws:// address of /v1/sync.
	URL string
	// Token authenticates every connection; it must reach every document.
	Token string
	// Docs are the documents to edit; editor i edits Docs[i%len(Docs)]
	// and writes its own block, so editors sharing a document do not
	// conflict.
	Docs []string
	// Editors is the number of editing connections (default len(Docs)).
	Editors int
	// ReadersPerDoc connections subscribe to each document (default 2).
	ReadersPerDoc int
	// Interval between an editor's saves (default 1.2 s).
	Interval time.Duration
	// Duration of the measured phase (default 30 s); a warm-up of one
	// Interval precedes it.
	Duration time.Duration
	// IdleConns idle connections (hello, open a document, then silent)
	// are opened after the run to measure memory per connection
	// (default 0: not measured).
	IdleConns int
	// Memory returns the server's resident memory in bytes; default
	// SelfRSS, right when the server runs in this process (the clients'
	// side is then counted too, so the figure is an upper bound).
	Memory func() (uint64, error)
	// Subprotocol defaults to folio.v1.msgpack.
	Subprotocol string
	// Log receives progress lines (default: discard).
	Log io.Writer
}

// Report is the outcome of Run.
type Report struct {
	Editors, Readers int
	Duration         time.Duration
	Acked            int // saves acknowledged in the measured phase
	Conflicts        int
	Errors           int
	AckedPerSec      float64
	AckP50, AckP99   time.Duration
	AckMax           time.Duration
	Events           int64 // events received by readers and editors
	IdleConns        int
	BytesPerIdleConn uint64 // resident memory per idle connection
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "editors %d, readers %d, %s\n", r.Editors, r.Readers, r.Duration.Round(time.Millisecond))
	fmt.Fprintf(&b, "acknowledged saves: %d (%.1f/s), conflicts %d, errors %d\n", r.Acked, r.AckedPerSec, r.Conflicts, r.Errors)
	fmt.Fprintf(&b, "ack latency: p50 %s, p99 %s, max %s\n", r.AckP50.Round(10*time.Microsecond),
		r.AckP99.Round(10*time.Microsecond), r.AckMax.Round(10*time.Microsecond))
	fmt.Fprintf(&b, "events received: %d\n", r.Events)
	if r.IdleConns > 0 {
		fmt.Fprintf(&b, "memory per idle connection: %.1f KiB (%d connections)\n", float64(r.BytesPerIdleConn)/1024, r.IdleConns)
	}
	return b.String()
}

func (o *Options) defaults() error {
	if o.URL == "" || len(o.Docs) == 0 {
		return errors.New("loadgen: URL and at least one document are needed")
	}
	if o.Editors <= 0 {
		o.Editors = len(o.Docs)
	}
	if o.ReadersPerDoc < 0 {
		o.ReadersPerDoc = 0
	} else if o.ReadersPerDoc == 0 {
		o.ReadersPerDoc = 2
	}
	if o.Interval <= 0 {
		o.Interval = 1200 * time.Millisecond
	}
	if o.Duration <= 0 {
		o.Duration = 30 * time.Second
	}
	if o.Memory == nil {
		o.Memory = SelfRSS
	}
	if o.Subprotocol == "" {
		o.Subprotocol = syncproto.SubprotocolMsgpack
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Run runs the load and returns its report.
func Run(ctx context.Context, o Options) (Report, error) {
	if err := o.defaults(); err != nil {
		return Report{}, err
	}
	var events atomic.Int64
	onEvent := func(*syncproto.Event) { events.Add(1) }
	dial := func(ctx context.Context) (*client.Client, error) {
		return client.Dial(ctx, o.URL, client.Options{Token: o.Token, Subprotocol: o.Subprotocol, Name: "folio-bench", OnEvent: onEvent})
	}
	var conns []*client.Client
	defer func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}()

	// Readers first, so that they see every save.
	readers := 0
	for _, doc := range o.Docs {
		for j := 0; j < o.ReadersPerDoc; j++ {
			c, err := dial(ctx)
			if err != nil {
				return Report{}, err
			}
			conns = append(conns, c)
			if _, err := c.Subscribe(ctx, syncproto.DocStream(doc), nil); err != nil {
				return Report{}, fmt.Errorf("loadgen: reader of %s: %w", doc, err)
			}
			readers++
		}
	}
	fmt.Fprintf(o.Log, "bench: %d readers connected\n", readers)

	eds := make([]*editor, o.Editors)
	for i := range eds {
		c, err := dial(ctx)
		if err != nil {
			return Report{}, err
		}
		conns = append(conns, c)
		ed := &editor{c: c, doc: o.Docs[i%len(o.Docs)], block: "bench-" + strconv.Itoa(i)}
		if err := ed.open(ctx); err != nil {
			return Report{}, err
		}
		eds[i] = ed
	}
	fmt.Fprintf(o.Log, "bench: %d editors connected; saving every %s for %s\n", len(eds), o.Interval, o.Duration)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	warm := time.Now().Add(o.Interval)
	end := warm.Add(o.Duration)
	var wg sync.WaitGroup
	for _, ed := range eds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ed.loop(runCtx, o.Interval, warm, end)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}

	r := Report{Editors: len(eds), Readers: readers, Duration: o.Duration, Events: events.Load()}
	var lat []time.Duration
	for _, ed := range eds {
		r.Acked += ed.acked
		r.Conflicts += ed.conflicts
		r.Errors += ed.errors
		lat = append(lat, ed.lat...)
	}
	r.AckedPerSec = float64(r.Acked) / o.Duration.Seconds()
	if len(lat) > 0 {
		slices.Sort(lat)
		r.AckP50 = lat[len(lat)*50/100]
		r.AckP99 = lat[min(len(lat)*99/100, len(lat)-1)]
		r.AckMax = lat[len(lat)-1]
	}

	if o.IdleConns > 0 {
		per, err := measureIdle(ctx, o, dial, &conns)
		if err != nil {
			return r, err
		}
		r.IdleConns, r.BytesPerIdleConn = o.IdleConns, per
	}
	return r, nil
}

// editor is one editing connection.
type editor struct {
	c     *client.Client
	doc   string
	block string
	seq   uint64

	// Written by the editor's goroutine only; read after it ended.
	acked, conflicts, errors int
	lat                      []time.Duration
}

func (ed *editor) open(ctx context.Context) error {
	snap, err := ed.c.Open(ctx, ed.doc)
	if err != nil {
		return fmt.Errorf("loadgen: open %s: %w", ed.doc, err)
	}
	ed.seq = snap.Seq
	return nil
}

func (ed *editor) loop(ctx context.Context, every time.Duration, warm, end time.Time) {
	// Spread the editors over the interval, as real ones are.
	select {
	case <-time.After(rand.N(every)):
	case <-ctx.Done():
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 0; ; n++ {
		now := time.Now()
		if now.After(end) {
			return
		}
		b := flowdoc.Block{ID: ed.block, Type: flowdoc.Paragraph,
			RichText: []flowdoc.Run{{Text: "Autosaved paragraph, revision " + strconv.Itoa(n) + ", of the load generator."}}}
		start := time.Now()
		ack, err := ed.c.Save(ctx, ed.doc, ed.seq, syncproto.Change{Op: "upsert", Block: &b})
		measured := start.After(warm) && start.Before(end)
		var ce *client.ConflictError
		switch {
		case err == nil:
			ed.seq = ack.Seq
			if measured {
				ed.acked++
				ed.lat = append(ed.lat, time.Since(start))
			}
		case errors.As(err, &ce):
			ed.seq = ce.Seq
			if measured {
				ed.conflicts++
			}
		default:
			if ctx.Err() != nil {
				return
			}
			if measured {
				ed.errors++
			}
			if ed.c.Err() != nil {
				return
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

func settle() {
	runtime.GC()
	debug.FreeOSMemory()
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	debug.FreeOSMemory()
}

// measureIdle opens o.IdleConns connections that each open a document and
// stay silent, and returns the growth of resident memory per connection.
func measureIdle(ctx context.Context, o Options, dial func(context.Context) (*client.Client, error), conns *[]*client.Client) (uint64, error) {
	settle()
	before, err := o.Memory()
	if err != nil {
		return 0, err
	}
	for i := 0; i < o.IdleConns; i++ {
		c, err := dial(ctx)
		if err != nil {
			return 0, fmt.Errorf("loadgen: idle connection %d: %w", i, err)
		}
		*conns = append(*conns, c)
		if _, err := c.Open(ctx, o.Docs[i%len(o.Docs)]); err != nil {
			return 0, err
		}
	}
	settle()
	after, err := o.Memory()
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(o.Log, "bench: %d idle connections: resident %d -> %d KiB\n", o.IdleConns, before>>10, after>>10)
	if after < before {
		return 0, nil
	}
	return (after - before) / uint64(o.IdleConns), nil
}

// SelfRSS returns this process's resident memory.
func SelfRSS() (uint64, error) { return ProcessRSS(os.Getpid()) }

// ProcessRSS returns the resident memory of process pid (Linux /proc).
func ProcessRSS(pid int) (uint64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("loadgen: resident memory: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("loadgen: parse VmRSS %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("loadgen: no VmRSS in /proc status")
}
