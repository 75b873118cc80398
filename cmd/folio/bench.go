package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/syncproto/loadgen"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:   "bench",
		Usage:  "load generators and benchmarks",
		Hidden: false,
		Subcommands: []*cli.Command{
			{
				Name:      "history",
				Usage:     "build a document history of N checkpoints in a fresh store, and the same history as a git fast-import stream",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "checkpoints", Value: 1000},
					&cli.IntFlag{Name: "blocks", Value: 200},
					&cli.Int64Flag{Name: "seed", Value: 1},
					&cli.StringFlag{Name: "git-stream", Usage: "write the same history as a git fast-import stream to this file"},
					&cli.StringFlag{Name: "input", Value: "changes", Usage: "what each checkpoint hands Folio: `changes` (the changed blocks, as an editor sends them) or document (the whole document, as git gets it)"},
					&cli.BoolFlag{Name: "census", Usage: "also report the compacted store's bytes (keys and values, before sstable compression) by key family"},
					formatFlag("text", "text", "json"),
				},
				Action: cmdBenchHistory,
			},
			{
				Name:  "sync",
				Usage: "editors saving over the sync protocol on a schedule: acknowledged saves/s, ack latency from the due time, server memory per connection",
				Description: "Each editor saves a one-block change of its own block every --interval, on a fixed schedule (open loop:\n" +
					"a save that is late is sent as soon as the one before is answered and its latency counts from when it\n" +
					"was due, so a server that falls behind shows it). --editors-per-doc editors share each document of\n" +
					"--blocks blocks; --readers-per-doc connections follow each.\n" +
					"Without --server it starts a sync server in this process on loopback over a temporary data directory\n" +
					"(memory figures then include the clients' side). With --server it loads a running daemon: pass --token,\n" +
					"and --pid to read the daemon's resident memory from /proc (otherwise from its /metrics); it creates\n" +
					"the documents, or edits those given with --doc.",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "editors", Value: 100, Usage: "editing connections"},
					&cli.IntFlag{Name: "editors-per-doc", Value: 1, Usage: "editors sharing each document (each edits its own block)"},
					&cli.BoolFlag{Name: "same-block", Usage: "the editors of a document all type into its first block, saving with merge"},
					&cli.IntFlag{Name: "readers-per-doc", Value: 2, Usage: "subscribed readers per document"},
					&cli.IntFlag{Name: "blocks", Value: 200, Usage: "blocks of each document the bench creates"},
					&cli.DurationFlag{Name: "interval", Value: 1200 * time.Millisecond, Usage: "time between an editor's saves"},
					&cli.DurationFlag{Name: "duration", Value: 30 * time.Second, Usage: "measured phase"},
					&cli.IntFlag{Name: "idle", Value: 0, Usage: "idle connections opened afterwards to measure memory per idle connection"},
					&cli.StringSliceFlag{Name: "doc", Usage: "with --server: edit this existing document instead of creating them (repeat)"},
					&cli.IntFlag{Name: "pid", Usage: "with --server: the daemon's process id, to read its resident memory from /proc/PID/status"},
					&cli.StringFlag{Name: "subprotocol", Value: "folio.v1.msgpack"},
					&cli.StringFlag{Name: "cpuprofile", Usage: "write the load generator's own CPU profile to this `file` (go tool pprof)"},
					formatFlag("text", "text", "json"),
				},
				Action: cmdBenchSync,
			},
		},
	})
}

// historyGen makes a deterministic history: a document of n paragraphs of
// about 100 bytes, then checkpoints that each change 1-3 random blocks.
type historyGen struct {
	rnd  *rand.Rand
	body flowdoc.Document
	step int
}

func newHistoryGen(seed int64, blocks int) *historyGen {
	g := &historyGen{rnd: rand.New(rand.NewSource(seed)), body: flowdoc.Document{SchemaVersion: 1}}
	for i := 0; i < blocks; i++ {
		g.body.Blocks = append(g.body.Blocks, flowdoc.Block{ID: fmt.Sprintf("b%03d", i), Type: flowdoc.Paragraph,
			RichText: []flowdoc.Run{{Text: g.sentence()}}})
	}
	return g
}

var words = []string{"the", "draft", "version", "history", "block", "writer", "keeps", "every", "change",
	"sealed", "quiet", "morning", "paragraph", "restore", "river", "light", "notes", "from", "a", "long",
	"journey", "through", "old", "letters", "and", "new", "ideas", "about", "careful", "editing"}

func (g *historyGen) sentence() string {
	s := ""
	for len(s) < 100 {
		if s != "" {
			s += " "
		}
		s += words[g.rnd.Intn(len(words))]
	}
	return s + "."
}

// next changes 1-3 blocks and returns them.
func (g *historyGen) next() []flowdoc.Block {
	g.step++
	n := 1 + g.rnd.Intn(3)
	var out []flowdoc.Block
	for i := 0; i < n; i++ {
		j := g.rnd.Intn(len(g.body.Blocks))
		g.body.Blocks[j].RichText = []flowdoc.Run{{Text: g.sentence()}}
		out = append(out, g.body.Blocks[j])
	}
	return out
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

func cmdBenchHistory(c *cli.Context) error {
	input := c.String("input")
	if input != "changes" && input != "document" {
		return usagef("--input %q: want changes or document", input)
	}
	dir, err := os.MkdirTemp("", "folio-bench-history-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := repo.Init(dir); err != nil {
		return err
	}
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		return err
	}
	n, blocks := c.Int("checkpoints"), c.Int("blocks")
	g := newHistoryGen(c.Int64("seed"), blocks)
	var git *gitStream
	if p := c.String("git-stream"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		git = &gitStream{w: bufio.NewWriterSize(f, 1<<20)}
	}
	ctx := c.Context
	v, err := r.CreateDoc(ctx, repo.CreateParams{ID: "bench", Owner: "bench", Author: "bench", Attrs: flowdoc.Attributes{Title: "bench"}, Body: g.body})
	if err != nil {
		return err
	}
	git.commit(g.body, v.Label)
	lat := make([]time.Duration, 0, n)
	seq := uint64(1)
	var wall time.Duration // Folio's time only: the git stream is written outside it
	// cpu is the process's CPU time (user + system, every thread: the
	// store's background flushes and compactions too) while saves ran and
	// while the store closed, the figure to compare on a loaded machine.
	var cpu time.Duration
	for i := 0; i < n; i++ {
		changed := g.next()
		var whole flowdoc.Document
		if input == "document" {
			whole = g.body.Clone() // what the caller holds; the copy is not timed
		}
		t0 := time.Now()
		c0 := processCPU()
		p := repo.SaveParams{Doc: "bench", Actor: "bench", BaseSeq: seq, Seal: objstore.ReasonManual}
		if input == "document" {
			p.Body = &whole
		} else {
			p.Changes = make([]repo.DraftChange, len(changed))
			for k := range changed {
				b := changed[k]
				p.Changes[k] = repo.DraftChange{Op: repo.ChangeUpsert, Block: &b}
			}
		}
		res, err := r.SaveDraft(ctx, p)
		if err != nil {
			return err
		}
		if res.Version == nil {
			return fmt.Errorf("checkpoint %d sealed nothing", i)
		}
		seq = res.Seq
		v := *res.Version
		cpu += processCPU() - c0
		lat = append(lat, time.Since(t0))
		wall += lat[len(lat)-1]
		git.commit(g.body, v.Label)
	}
	if err := git.close(); err != nil {
		return err
	}
	c0 := processCPU()
	if err := r.Close(); err != nil {
		return err
	}
	cpu += processCPU() - c0
	if err := compactStore(dir); err != nil {
		return err
	}
	var census []censusRow
	if c.Bool("census") {
		if census, err = storeCensus(dir); err != nil {
			return err
		}
	}
	if os.Getenv("FOLIO_BENCH_LS") != "" {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				fmt.Fprintln(c.App.ErrWriter, fi.Size(), p)
			}
			return nil
		})
	}
	size, err := dirSize(dir)
	if err != nil {
		return err
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	out := map[string]any{
		"checkpoints": n, "blocks": blocks, "input": input, "wallSeconds": wall.Seconds(),
		"checkpointsPerSecond": float64(n) / wall.Seconds(),
		"p50Micros":            lat[len(lat)/2].Microseconds(), "p99Micros": lat[len(lat)*99/100].Microseconds(),
		"storeBytes": size, "bytesPerCheckpoint": float64(size) / float64(n),
		"cpuMicrosPerCheckpoint": float64(cpu.Microseconds()) / float64(n),
	}
	if census != nil {
		out["census"] = census
	}
	if c.String("format") == "json" {
		return json.NewEncoder(c.App.Writer).Encode(out)
	}
	fmt.Fprintf(c.App.Writer, "folio: %d checkpoints of a %d-block document (input: %s) in %.2fs (%.0f/s, p50 %v, p99 %v, CPU %.0f µs/checkpoint), store %d bytes (%.0f B/checkpoint)\n",
		n, blocks, input, wall.Seconds(), float64(n)/wall.Seconds(), lat[len(lat)/2], lat[len(lat)*99/100], float64(cpu.Microseconds())/float64(n), size, float64(size)/float64(n))
	for _, r := range census {
		fmt.Fprintf(c.App.Writer, "  %-24s %8d keys %10d B keys %10d B values\n", r.Family, r.Keys, r.KeyBytes, r.ValueBytes)
	}
	return nil
}

// gitStream writes the same history as a git fast-import stream: one
// commit per version, the document as docs/bench.json.
type gitStream struct {
	w    *bufio.Writer
	mark int
	t    int64
}

func (g *gitStream) commit(d flowdoc.Document, label string) {
	if g == nil {
		return
	}
	g.mark++
	g.t++
	data := append(flowdoc.CanonicalJSON(d), '\n')
	fmt.Fprintf(g.w, "commit refs/heads/main\nmark :%d\ncommitter bench <bench@localhost> %d +0000\ndata %d\n%s\n",
		g.mark, 1700000000+g.t, len(label), label)
	if g.mark > 1 {
		fmt.Fprintf(g.w, "from :%d\n", g.mark-1)
	}
	fmt.Fprintf(g.w, "M 100644 inline docs/bench.json\ndata %d\n%s\n", len(data), data)
}

func (g *gitStream) close() error {
	if g == nil {
		return nil
	}
	return g.w.Flush()
}

// compactStore reopens the store at dir, compacts it fully and closes it
// twice, so that what remains on disk is the data (sstables) and no
// write-ahead log waiting to be replayed or recycled: the counterpart of
// `git gc` before measuring a repository's size.
func compactStore(dir string) error {
	for i := 0; i < 2; i++ {
		db, err := kv.Open(dir, kv.Options{})
		if err != nil {
			return err
		}
		if i == 0 {
			if err := db.Compact([]byte{0}, []byte{0xff, 0xff}, true); err != nil {
				db.Close()
				return err
			}
		}
		if err := db.Close(); err != nil {
			return err
		}
	}
	return nil
}

func cmdBenchSync(c *cli.Context) error {
	format, err := checkFormat(c, "text", "json")
	if err != nil {
		return err
	}
	o := loadgen.Options{
		Editors: c.Int("editors"), EditorsPerDoc: c.Int("editors-per-doc"), ReadersPerDoc: c.Int("readers-per-doc"),
		Interval: c.Duration("interval"), Duration: c.Duration("duration"), IdleConns: c.Int("idle"),
		Subprotocol: c.String("subprotocol"), Log: c.App.ErrWriter, SameBlock: c.Bool("same-block"),
	}
	if o.Editors <= 0 || o.EditorsPerDoc <= 0 || c.Int("blocks") <= 0 {
		return usagef("--editors, --editors-per-doc and --blocks must be positive")
	}
	if c.Int("readers-per-doc") == 0 {
		o.ReadersPerDoc = -1 // loadgen: negative means none
	}
	// The generator shares the machine with the server it measures: it
	// collects its own garbage less often (trading memory it has plenty
	// of for CPU the server can use). It does not touch the server's
	// settings.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if path := c.String("cpuprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var rep loadgen.Report
	if server := serverURL(c); server != "" {
		o.URL = strings.TrimRight(strings.Replace(strings.Replace(server, "https://", "wss://", 1), "http://", "ws://", 1), "/") + "/v1/sync"
		o.Token = c.String("token")
		metricsURL := strings.TrimRight(server, "/") + "/metrics"
		pid := c.Int("pid")
		o.Breakdown = func() (loadgen.MemBreakdown, error) { return daemonMemory(c.Context, metricsURL, pid) }
		if pid > 0 {
			o.Memory = func() (uint64, error) { return loadgen.ProcessRSS(pid) }
			o.CPU = func() (time.Duration, error) { return loadgen.ProcessCPU(pid) }
		} else {
			// The daemon's own resident memory, from its /metrics (the
			// process collector).
			o.Memory = func() (uint64, error) {
				v, err := scrapeMetric(c.Context, metricsURL, "process_resident_memory_bytes")
				return uint64(v), err
			}
			o.CPU = func() (time.Duration, error) {
				v, err := scrapeMetric(c.Context, metricsURL, "process_cpu_seconds_total")
				return time.Duration(v * float64(time.Second)), err
			}
		}
		if o.Docs = c.StringSlice("doc"); len(o.Docs) == 0 {
			if o.Docs, o.Blocks, err = benchDocs(c, o.Editors, o.EditorsPerDoc, c.Int("blocks")); err != nil {
				return err
			}
		}
		rep, err = loadgen.Run(c.Context, o)
	} else {
		rep, err = loadgen.RunLocal(c.Context, loadgen.LocalOptions{Options: o, Blocks: c.Int("blocks")})
	}
	if err != nil {
		return err
	}
	if format == "json" {
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		return printJSON(c.App.Writer, map[string]any{
			"docs": rep.Docs, "blocks": rep.Blocks, "editors": rep.Editors, "editorsPerDoc": rep.EditorsPerDoc,
			"readers": rep.Readers, "intervalSeconds": rep.Interval.Seconds(), "seconds": rep.Duration.Seconds(),
			"offered": rep.Offered, "offeredPerSecond": rep.OfferedPerSec,
			"acked": rep.Acked, "ackedPerSecond": rep.AckedPerSec, "conflicts": rep.Conflicts, "merged": rep.Merged, "errors": rep.Errors,
			"ackP50Millis": ms(rep.AckP50), "ackP90Millis": ms(rep.AckP90), "ackP99Millis": ms(rep.AckP99),
			"ackP999Millis": ms(rep.AckP999), "ackMaxMillis": ms(rep.AckMax),
			"sendLateP50Millis": ms(rep.SendLateP50), "sendLateP99Millis": ms(rep.SendLateP99), "events": rep.Events,
			"bytesPerActiveConn": rep.BytesPerActiveConn, "heapBytesPerActiveConn": rep.PerActiveConn.Heap, "stackBytesPerActiveConn": rep.PerActiveConn.Stacks,
			"nativeBytesPerActiveConn": rep.PerActiveConn.Native,
			"serverCpuCores":           rep.ServerCPU.Seconds() / rep.Duration.Seconds(), "serverCpuMicrosPerAck": float64(rep.ServerCPUPerAck) / 1e3, "idleConns": rep.IdleConns, "bytesPerIdleConn": rep.BytesPerIdleConn,
		})
	}
	_, err = fmt.Fprint(c.App.Writer, rep.String())
	return err
}

// benchDocs creates the documents a bench against a daemon edits: one of
// blocks paragraphs per perDoc editors.
func benchDocs(c *cli.Context, editors, perDoc, blocks int) ([]string, []string, error) {
	b, err := openBackend(c)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close()
	body, ids := loadgen.MakeDoc(blocks)
	n := (editors + perDoc - 1) / perDoc
	docs := make([]string, n)
	for i := range docs {
		v, err := b.CreateDoc(c.Context, repo.CreateParams{Attrs: flowdoc.Attributes{Title: fmt.Sprintf("Sync bench %d", i)}, Body: body})
		if err != nil {
			return nil, nil, fmt.Errorf("create bench document %d of %d: %w", i+1, n, err)
		}
		docs[i] = v.Doc
	}
	fmt.Fprintf(c.App.ErrWriter, "bench: created %d documents of %d blocks\n", n, blocks)
	return docs, ids, nil
}

// daemonMemory splits a daemon's memory: Go's heap in use and stacks
// from its /metrics and, with its pid, the anonymous resident memory
// outside Go's (RssAnon from /proc less what Go holds from the OS and has
// not released).
func daemonMemory(ctx context.Context, metricsURL string, pid int) (loadgen.MemBreakdown, error) {
	var m loadgen.MemBreakdown
	vals, err := scrapeMetrics(ctx, metricsURL, "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes",
		"go_memstats_sys_bytes", "go_memstats_heap_released_bytes")
	if err != nil {
		return m, err
	}
	m.Heap, m.Stacks = uint64(vals["go_memstats_heap_inuse_bytes"]), uint64(vals["go_memstats_stack_inuse_bytes"])
	if pid > 0 {
		anon, err := loadgen.ProcessStatus(pid, "RssAnon")
		if err != nil {
			return m, err
		}
		if goHeld := uint64(vals["go_memstats_sys_bytes"] - vals["go_memstats_heap_released_bytes"]); anon > goHeld {
			m.Native = anon - goHeld
		}
	}
	return m, nil
}

// scrapeMetric reads the value of an unlabelled metric from a Prometheus
// text endpoint.
func scrapeMetric(ctx context.Context, url, name string) (float64, error) {
	vals, err := scrapeMetrics(ctx, url, name)
	return vals[name], err
}

// scrapeMetrics reads the values of unlabelled metrics from a Prometheus
// text endpoint, in one request.
func scrapeMetrics(ctx context.Context, url string, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	vals := make(map[string]float64, len(names))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() && len(vals) < len(names) {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s %q: %w", url, name, v, err)
		}
		vals[name] = f
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, ok := vals[name]; !ok {
			return nil, fmt.Errorf("%s has no %s", url, name)
		}
	}
	return vals, nil
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// censusRow is one key family of a store: its keys and their bytes as
// Pebble holds them before compressing sstable blocks.
type censusRow struct {
	Family     string `json:"family"`
	Keys       int    `json:"keys"`
	KeyBytes   int64  `json:"keyBytes"`
	ValueBytes int64  `json:"valueBytes"`
}

// storeCensus counts the store at dir by key family: objects by kind and
// storage codec, every other prefix by its first name component.
func storeCensus(dir string) ([]censusRow, error) {
	db, err := kv.Open(dir, kv.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	it, err := db.NewIter(nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	rows := map[string]*censusRow{}
	for it.First(); it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		fam := censusFamily(k, v)
		r := rows[fam]
		if r == nil {
			r = &censusRow{Family: fam}
			rows[fam] = r
		}
		r.Keys++
		r.KeyBytes += int64(len(k))
		r.ValueBytes += int64(len(v))
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	out := make([]censusRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].KeyBytes+out[i].ValueBytes > out[j].KeyBytes+out[j].ValueBytes
	})
	return out, nil
}

func censusFamily(k, v []byte) string {
	if len(k) < 2 {
		return string(k)
	}
	if k[0] == 'o' && len(v) >= 2 {
		return fmt.Sprintf("o/%s codec %d", objstore.Kind(v[1]), v[0])
	}
	rest := k[2:]
	end := len(rest)
	for i, c := range rest {
		if c == '/' || c == 0 || c == ':' {
			end = i
			break
		}
	}
	if k[0] == 't' && end < len(rest) && rest[end] == '/' {
		// tables: t/<table>/<key>, the table names the family
		return string(k[:2]) + string(rest[:end])
	}
	return string(k[:2]) + string(rest[:end])
}
