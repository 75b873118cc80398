package loadgen

import (
	"bufio"
	"bytes"
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

	"github.com/foliodev/folio"
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
	// Docs are the documents to edit: EditorsPerDoc editors each. Editor
	// k of a document edits its own block, so editors do not conflict:
	// the block at position k·len/EditorsPerDoc of Blocks when Blocks
	// lists the document's block ids (documents made by MakeDoc), else a
	// block of its own, "bench-<k>", added by its first save.
	Docs []string
	// Blocks are the block ids of every document (nil: see Docs).
	Blocks []string
	// Editors is the number of editing connections; zero:
	// len(Docs)·EditorsPerDoc. Editor i edits Docs[i/EditorsPerDoc].
	Editors int
	// EditorsPerDoc editors share each document (default 1).
	EditorsPerDoc int
	// ReadersPerDoc connections subscribe to each document (default 2;
	// negative: none).
	ReadersPerDoc int
	// Interval between an editor's saves (default 1.2 s). Saves follow a
	// fixed schedule per editor (open loop): a save that could not be
	// sent on time is sent as soon as the one before was answered, and
	// its latency counts from the time it was due, so a server that falls
	// behind shows it (no coordinated omission); no save is skipped.
	Interval time.Duration
	// Duration of the measured phase (default 30 s); a warm-up of one
	// Interval precedes it. Saves due in it are measured.
	Duration time.Duration
	// Drain bounds the wait for the answers to saves still in flight when
	// the measured phase ends (default 10 s); those never answered count
	// as errors.
	Drain time.Duration
	// IdleConns idle connections (hello, open a document, then silent)
	// are opened after the run to measure memory per connection
	// (default 0: not measured).
	IdleConns int
	// Memory returns the server's resident memory in bytes; default
	// SelfRSS, right when the server runs in this process (the clients'
	// side is then counted too, so the figures are upper bounds). For a
	// separate daemon pass ProcessRSS of its pid.
	Memory func() (uint64, error)
	// Breakdown splits the server's memory (nil: not split), read
	// together with Memory; for a separate daemon from its /metrics and
	// /proc.
	Breakdown func() (MemBreakdown, error)
	// CPU returns the CPU time (user and system) the server has used;
	// nil: not measured. For a separate daemon pass ProcessCPU of its pid.
	CPU func() (time.Duration, error)
	// SameBlock makes every editor of a document type into the same
	// block (the document's first, or "bench-0"): each save inserts a
	// word of its own into the editor's copy of the block, at a place of
	// its own (editor k of n at k/n of the words), and saves with merge
	// (docs/protocol.md "Merging inside a block"); the editor's copy is
	// what the ack merged, or the server's block after a conflict.
	SameBlock bool
	// Subprotocol defaults to folio.v1.msgpack.
	Subprotocol string
	// Log receives progress lines (default: discard).
	Log io.Writer
}

// Report is the outcome of Run.
type Report struct {
	Docs, Blocks, EditorsPerDoc int
	Editors, Readers            int
	Interval, Duration          time.Duration
	Offered                     int     // saves due in the measured phase
	OfferedPerSec               float64 // what the schedule asks for
	Acked                       int     // saves due in the measured phase and acknowledged
	AckedPerSec                 float64 // acknowledgements received in the measured phase, per second
	Conflicts                   int
	Merged                      int // acknowledged saves the server merged inside a block (SameBlock)
	SameBlock                   bool
	Errors                      int // refused, failed or never answered
	// Ack latency of the measured saves, from the time each was due to
	// its draft.ack.
	AckP50, AckP90, AckP99, AckP999, AckMax time.Duration
	// SendLateP50 and SendLateP99 are how late the generator itself sent
	// the measured saves (from the due time to the write): part of the
	// ack latency that is not the server's, when the generator shares a
	// busy machine with it.
	SendLateP50, SendLateP99 time.Duration
	Events                   int64 // events received by readers and editors
	// BytesPerActiveConn is the growth of the server's resident memory
	// from before the first connection to the end of the measured phase,
	// per editor and reader connection (the server's caches grown by the
	// load included, so an upper bound).
	BytesPerActiveConn uint64
	// PerActiveConn splits the same growth (Options.Breakdown; zero when
	// not measured).
	PerActiveConn MemBreakdown
	// ServerCPU is the CPU time the server used in the measured phase
	// (Options.CPU; zero when not measured) and ServerCPUPerAck that per
	// acknowledgement received in it: everything the server did for a
	// save, its fan-out and its background work (log writes, compactions,
	// collection) included.
	ServerCPU, ServerCPUPerAck time.Duration
	IdleConns                  int
	BytesPerIdleConn           uint64 // resident memory per idle connection
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d documents of %d blocks; %d editors (%d per document, a save every %s), %d readers; measured %s\n",
		r.Docs, r.Blocks, r.Editors, r.EditorsPerDoc, r.Interval, r.Readers, r.Duration.Round(time.Millisecond))
	fmt.Fprintf(&b, "saves: %d due (%.1f/s), %d acknowledged (%.1f/s received), conflicts %d, errors %d\n",
		r.Offered, r.OfferedPerSec, r.Acked, r.AckedPerSec, r.Conflicts, r.Errors)
	if r.SameBlock && r.Offered > 0 {
		pct := func(n int) float64 { return 100 * float64(n) / float64(r.Offered) }
		fmt.Fprintf(&b, "same block: %.1f%% acknowledged, %.1f%% merged by the server, %.1f%% conflicted\n",
			pct(r.Acked), pct(r.Merged), pct(r.Conflicts))
	}
	rd := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	fmt.Fprintf(&b, "ack latency from the due time: p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n",
		rd(r.AckP50), rd(r.AckP90), rd(r.AckP99), rd(r.AckP999), rd(r.AckMax))
	fmt.Fprintf(&b, "of which the generator's own lateness in sending: p50 %s, p99 %s\n", rd(r.SendLateP50), rd(r.SendLateP99))
	fmt.Fprintf(&b, "events received: %d\n", r.Events)
	if r.ServerCPU > 0 {
		fmt.Fprintf(&b, "server CPU: %.2f cores, %s per acknowledged save\n", r.ServerCPU.Seconds()/r.Duration.Seconds(), r.ServerCPUPerAck.Round(time.Microsecond))
	}
	if r.BytesPerActiveConn > 0 {
		fmt.Fprintf(&b, "server memory per active connection: %.1f KiB (%d connections)", float64(r.BytesPerActiveConn)/1024, r.Editors+r.Readers)
		if m := r.PerActiveConn; m != (MemBreakdown{}) {
			kib := func(n uint64) float64 { return float64(n) / 1024 }
			fmt.Fprintf(&b, ": Go heap %.1f KiB, goroutine stacks %.1f KiB", kib(m.Heap), kib(m.Stacks))
			if m.Native > 0 {
				fmt.Fprintf(&b, ", outside Go (the store's memtables and block cache) %.1f KiB", kib(m.Native))
			}
		}
		b.WriteByte('\n')
	}
	if r.IdleConns > 0 {
		fmt.Fprintf(&b, "server memory per idle connection: %.1f KiB (%d connections)\n", float64(r.BytesPerIdleConn)/1024, r.IdleConns)
	}
	return b.String()
}

func (o *Options) defaults() error {
	if o.URL == "" || len(o.Docs) == 0 {
		return errors.New("loadgen: URL and at least one document are needed")
	}
	if o.EditorsPerDoc <= 0 {
		o.EditorsPerDoc = 1
	}
	if o.Editors <= 0 {
		o.Editors = len(o.Docs) * o.EditorsPerDoc
	}
	if need := (o.Editors + o.EditorsPerDoc - 1) / o.EditorsPerDoc; need > len(o.Docs) {
		return fmt.Errorf("loadgen: %d editors at %d per document need %d documents, got %d", o.Editors, o.EditorsPerDoc, need, len(o.Docs))
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
	if o.Drain <= 0 {
		o.Drain = 10 * time.Second
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

// MakeDoc returns a document of n paragraphs of about 100 bytes, with
// block ids b0000, b0001, …, and those ids.
func MakeDoc(n int) (flowdoc.Document, []string) {
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%04d", i)
		d.Blocks = append(d.Blocks, flowdoc.Block{ID: ids[i], Type: flowdoc.Paragraph,
			RichText: []flowdoc.Run{{Text: fmt.Sprintf("Paragraph %d of the load test: a sentence or two of ordinary prose, about a hundred bytes.", i)}}})
	}
	return d, ids
}

// Run runs the load and returns its report.
func Run(ctx context.Context, o Options) (Report, error) {
	if err := o.defaults(); err != nil {
		return Report{}, err
	}
	ndocs := (o.Editors + o.EditorsPerDoc - 1) / o.EditorsPerDoc
	docs := o.Docs[:ndocs]
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
	settle()
	base, err := o.Memory()
	if err != nil {
		return Report{}, err
	}
	var baseMem MemBreakdown
	if o.Breakdown != nil {
		if baseMem, err = o.Breakdown(); err != nil {
			return Report{}, err
		}
	}

	// Readers first, so that they see every save.
	readers := 0
	for _, doc := range docs {
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
		k := i % o.EditorsPerDoc
		ed := &editor{c: c, doc: docs[i/o.EditorsPerDoc], block: "bench-" + strconv.Itoa(k)}
		if len(o.Blocks) > 0 {
			ed.block = o.Blocks[k*len(o.Blocks)/o.EditorsPerDoc%len(o.Blocks)]
		}
		if o.SameBlock {
			ed.same, ed.k, ed.n, ed.who, ed.block = true, k, o.EditorsPerDoc, i, "bench-0"
			if len(o.Blocks) > 0 {
				ed.block = o.Blocks[0]
			}
		}
		if err := ed.open(ctx); err != nil {
			return Report{}, err
		}
		eds[i] = ed
	}
	fmt.Fprintf(o.Log, "bench: %d editors connected; each saves every %s for %s\n", len(eds), o.Interval, o.Duration)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	warm := start.Add(o.Interval)
	end := warm.Add(o.Duration)
	drainCtx, drainCancel := context.WithDeadline(runCtx, end.Add(o.Drain))
	defer drainCancel()
	var wg sync.WaitGroup
	for _, ed := range eds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Spread the editors over the interval, as real ones are.
			ed.loop(drainCtx, start.Add(rand.N(o.Interval)), o.Interval, warm, end)
		}()
	}
	// The server's CPU time over the measured phase, and its resident
	// memory under load: sampled at the end of the measured phase, every
	// connection open and busy.
	var active uint64
	var activeMem MemBreakdown
	var activeErr error
	var cpu0, cpu1 time.Duration
	select {
	case <-time.After(time.Until(warm)):
		if o.CPU != nil {
			cpu0, activeErr = o.CPU()
		}
	case <-ctx.Done():
	}
	select {
	case <-time.After(time.Until(end)):
		if o.CPU != nil && activeErr == nil {
			cpu1, activeErr = o.CPU()
		}
		if activeErr == nil {
			active, activeErr = o.Memory()
		}
		if activeErr == nil && o.Breakdown != nil {
			activeMem, activeErr = o.Breakdown()
		}
	case <-ctx.Done():
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	if activeErr != nil {
		return Report{}, activeErr
	}

	r := Report{Docs: len(docs), Blocks: len(o.Blocks), EditorsPerDoc: o.EditorsPerDoc, Editors: len(eds), Readers: readers, SameBlock: o.SameBlock,
		Interval: o.Interval, Duration: o.Duration, Events: events.Load()}
	var lat, late []time.Duration
	received := 0
	for _, ed := range eds {
		r.Offered += ed.offered
		r.Acked += ed.acked
		received += ed.received
		r.Conflicts += ed.conflicts
		r.Merged += ed.merged
		r.Errors += ed.errors
		lat = append(lat, ed.lat...)
		late = append(late, ed.late...)
	}
	r.OfferedPerSec = float64(r.Offered) / o.Duration.Seconds()
	r.AckedPerSec = float64(received) / o.Duration.Seconds()
	if len(lat) > 0 {
		slices.Sort(lat)
		q := func(p float64) time.Duration { return quantile(lat, p) }
		r.AckP50, r.AckP90, r.AckP99, r.AckP999 = q(0.50), q(0.90), q(0.99), q(0.999)
		r.AckMax = lat[len(lat)-1]
	}
	if len(late) > 0 {
		slices.Sort(late)
		r.SendLateP50, r.SendLateP99 = quantile(late, 0.50), quantile(late, 0.99)
	}
	if cpu1 > cpu0 {
		r.ServerCPU = cpu1 - cpu0
		if received > 0 {
			r.ServerCPUPerAck = r.ServerCPU / time.Duration(received)
		}
	}
	if n := uint64(len(eds) + readers); n > 0 {
		grow := func(now, before uint64) uint64 {
			if now > before {
				return (now - before) / n
			}
			return 0
		}
		r.BytesPerActiveConn = grow(active, base)
		r.PerActiveConn = MemBreakdown{Heap: grow(activeMem.Heap, baseMem.Heap), Stacks: grow(activeMem.Stacks, baseMem.Stacks),
			Native: grow(activeMem.Native, baseMem.Native)}
	}
	fmt.Fprintf(o.Log, "bench: resident %d KiB before connecting, %d KiB under load\n", base>>10, active>>10)

	if o.IdleConns > 0 {
		per, err := measureIdle(ctx, o, docs, dial, &conns)
		if err != nil {
			return r, err
		}
		r.IdleConns, r.BytesPerIdleConn = o.IdleConns, per
	}
	return r, nil
}

// quantile returns the p quantile of sorted, which is not empty.
func quantile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(int(float64(len(sorted))*p), len(sorted)-1)]
}

// MemBreakdown is a server's memory by kind, in bytes.
type MemBreakdown struct {
	// Heap is Go's heap in use: live data and the garbage not yet
	// collected (under load the heap grows to about twice the live
	// data between collections, at the default GOGC).
	Heap uint64
	// Stacks are the goroutine stacks.
	Stacks uint64
	// Native is anonymous resident memory outside Go's: mostly the
	// store's memtables and block cache (allocated in C), which grow
	// with writes and reads, not with connections. Zero when unknown.
	Native uint64
}

// editor is one editing connection.
type editor struct {
	c     *client.Client
	doc   string
	block string
	seq   uint64

	// SameBlock: the editor's copy of the block's words, its place k of n.
	same      bool
	words     []string
	k, n, who int

	// Written by the editor's goroutine only; read after it ended.
	offered, acked, received, conflicts, errors, merged int
	lat, late                                           []time.Duration
}

func (ed *editor) open(ctx context.Context) error {
	snap, err := ed.c.Open(ctx, ed.doc)
	if err != nil {
		return fmt.Errorf("loadgen: open %s: %w", ed.doc, err)
	}
	ed.seq = snap.Seq
	if ed.same {
		for _, b := range snap.Body.Blocks {
			if b.ID == ed.block {
				ed.words = strings.Fields(flowdoc.PlainText(b.RichText))
			}
		}
	}
	return nil
}

// loop saves on a fixed schedule, first at first, then every interval,
// until a save would be due at or after end; ctx bounds the wait for the
// last answers.
func (ed *editor) loop(ctx context.Context, first time.Time, every time.Duration, warm, end time.Time) {
	timer := time.NewTimer(time.Until(first))
	defer timer.Stop()
	for n, due := 0, first; due.Before(end); n, due = n+1, due.Add(every) {
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		measured := !due.Before(warm)
		if measured {
			ed.offered++
		}
		b := flowdoc.Block{ID: ed.block, Type: flowdoc.Paragraph,
			RichText: []flowdoc.Run{{Text: "Autosaved paragraph, revision " + strconv.Itoa(n) + ", of the load generator: a sentence or two of ordinary prose."}}}
		var words []string
		if ed.same {
			at := len(ed.words) * ed.k / ed.n
			words = slices.Insert(slices.Clone(ed.words), at, fmt.Sprintf("w%d.%d", ed.who, n))
			b.RichText = []flowdoc.Run{{Text: strings.Join(words, " ")}}
		}
		if measured {
			ed.late = append(ed.late, time.Since(due))
		}
		ack, err := ed.c.SaveMessage(ctx, &syncproto.Save{Doc: ed.doc, BaseSeq: ed.seq, Merge: ed.same,
			Changes: []syncproto.Change{{Op: "upsert", Block: &b}}})
		answered := time.Now()
		if answered.After(warm) && answered.Before(end) && err == nil {
			ed.received++
		}
		var ce *folio.ConflictError
		switch {
		case err == nil:
			ed.seq = ack.Seq
			ed.words = words
			for _, m := range ack.Merged {
				if m.ID == ed.block && m.Block != nil {
					ed.words = strings.Fields(flowdoc.PlainText(m.Block.RichText))
					if measured {
						ed.merged++
					}
				}
			}
			if measured {
				ed.acked++
				ed.lat = append(ed.lat, answered.Sub(due))
			}
		case errors.As(err, &ce):
			ed.seq = ce.Seq
			for _, cb := range ce.Blocks {
				if cb.ID == ed.block && cb.Block != nil {
					ed.words = strings.Fields(flowdoc.PlainText(cb.Block.RichText))
				}
			}
			if measured {
				ed.conflicts++
			}
		default:
			if measured {
				ed.errors++ // refused, failed, or not answered before the drain ended
			}
			if ctx.Err() != nil || ed.c.Err() != nil {
				return
			}
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
func measureIdle(ctx context.Context, o Options, docs []string, dial func(context.Context) (*client.Client, error), conns *[]*client.Client) (uint64, error) {
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
		if _, err := c.Open(ctx, docs[i%len(docs)]); err != nil {
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

// ProcessCPU returns the CPU time (user and system) process pid has used
// (Linux /proc; clock ticks of 10 ms).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("loadgen: CPU time: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15, the 12th and 13th after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("loadgen: unexpected /proc stat format")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("loadgen: unexpected /proc stat format")
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("loadgen: parse /proc stat times %q %q", f[11], f[12])
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// SelfRSS returns this process's resident memory.
func SelfRSS() (uint64, error) { return ProcessRSS(os.Getpid()) }

// ProcessRSS returns the resident memory of process pid (Linux /proc).
func ProcessRSS(pid int) (uint64, error) { return ProcessStatus(pid, "VmRSS") }

// ProcessStatus returns a memory figure of /proc/PID/status (VmRSS,
// RssAnon, RssFile, …) in bytes.
func ProcessStatus(pid int, field string) (uint64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("loadgen: resident memory: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("loadgen: parse %s %q: %w", field, v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("loadgen: no %s in /proc status", field)
}
