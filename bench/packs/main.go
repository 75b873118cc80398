package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/foliodev/folio/objstore/pack/packtest"
)

func main() {
	docs := flag.Int("docs", 200, "documents")
	versions := flag.Int("versions", 20, "versions per document")
	runs := flag.Int("runs", 3, "timed runs of each step (medians are printed)")
	keep := flag.String("keep", "", "work in this directory and keep it (default: a temp dir, removed)")
	flag.Parse()
	if err := run(*docs, *versions, *runs, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "packs:", err)
		os.Exit(1)
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func timeN(n int, f func(i int) error) (time.Duration, error) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if err := f(i); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(t0))
	}
	return median(ds), nil
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %v: %v: %s", args, err, errb.String())
	}
	return nil
}

func mbps(bytes uint64, d time.Duration) float64 { return float64(bytes) / (1 << 20) / d.Seconds() }

func run(docs, versions, runs int, keep string) error {
	ctx := context.Background()
	work := keep
	if work == "" {
		d, err := os.MkdirTemp("", "folio-bench-packs-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	srcDB, err := kv.Open(filepath.Join(work, "src"), kv.Options{Create: true, CacheSize: pack.MinCache})
	if err != nil {
		return err
	}
	src := pack.NewStores(srcDB)
	t0 := time.Now()
	b := packtest.New(srcDB, src.Objects, src.Refs, 1)
	if err := b.Build(docs, versions); err != nil {
		return err
	}
	objs := 0
	for _, n := range b.Written {
		objs += n
	}
	fmt.Printf("store: %d documents x %d versions = %d versions, %d objects, %.1f MiB canonical (built in %s)\n",
		docs, versions, docs*versions, objs, float64(b.RawBytes)/(1<<20), time.Since(t0).Round(time.Millisecond))
	// Reopen as `folio pack export` does: with a cache sized for the store.
	if err := srcDB.Close(); err != nil {
		return err
	}
	cache := pack.CacheSize(filepath.Join(work, "src"))
	if srcDB, err = kv.Open(filepath.Join(work, "src"), kv.Options{CacheSize: cache}); err != nil {
		return err
	}
	defer srcDB.Close()
	src = pack.NewStores(srcDB)
	fmt.Printf("store on disk: %.1f MiB; export opens it with a %.0f MiB block cache\n", float64(srcDB.DiskUsage())/(1<<20), float64(cache)/(1<<20))

	packPath := filepath.Join(work, "all.fpack")
	var est pack.ExportStats
	exportT, err := timeN(runs, func(int) error {
		f, err := os.Create(packPath)
		if err != nil {
			return err
		}
		defer f.Close()
		est, err = pack.Export(ctx, src, f, pack.ExportOptions{})
		return err
	})
	if err != nil {
		return err
	}
	verifyT, err := timeN(runs, func(int) error {
		f, err := os.Open(packPath)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = pack.Verify(ctx, f)
		return err
	})
	if err != nil {
		return err
	}
	importT, err := timeN(runs, func(i int) error {
		dir := filepath.Join(work, fmt.Sprintf("dst%d", i))
		db, err := kv.Open(dir, kv.Options{Create: true, CacheSize: pack.CacheSizeFor(dir, est.PackBytes)})
		if err != nil {
			return err
		}
		f, err := os.Open(packPath)
		if err != nil {
			db.Close()
			return err
		}
		_, err = pack.Import(ctx, pack.NewStores(db), f, pack.ImportOptions{})
		f.Close()
		db.Close()
		os.RemoveAll(dir)
		return err
	})
	if err != nil {
		return err
	}

	// The git side gets the same history through `folio export git`,
	// which writes each version as Markdown and JSON. The JSON alone
	// carries what a pack carries, so that is the like-for-like copy;
	// the Markdown+JSON one is what `folio export git` users keep.
	fiPath := filepath.Join(work, "history.fi")
	fi, err := os.Create(fiPath)
	if err != nil {
		return err
	}
	t0 = time.Now()
	gst, err := pack.ExportGit(ctx, src, fi, pack.GitOptions{})
	fi.Close()
	if err != nil {
		return err
	}
	gitExportT := time.Since(t0)
	jsonPath := filepath.Join(work, "history-json.fi")
	if err := jsonOnly(fiPath, jsonPath); err != nil {
		return err
	}
	// Each copy is imported, then packed the two ways git users pack:
	// plain `git gc` and `git gc --aggressive` (deltas recomputed with a
	// wider window). The bundle of everything is the git counterpart of a
	// pack.
	type gitCopy struct {
		name, stream     string
		gc, aggressive   int64 // bundle bytes after git gc, after gc --aggressive
		gcT, aggressiveT time.Duration
		repo, bundle     string // after plain gc: what the timings use
		fastImportT      time.Duration
		streamBytes      int64
	}
	copies := []*gitCopy{{name: "JSON only", stream: jsonPath}, {name: "Markdown+JSON (folio export git)", stream: fiPath}}
	for k, gc := range copies {
		gc.repo = filepath.Join(work, fmt.Sprintf("git%d", k))
		gc.bundle = filepath.Join(work, fmt.Sprintf("git%d.bundle", k))
		if st, err := os.Stat(gc.stream); err == nil {
			gc.streamBytes = st.Size()
		}
		os.RemoveAll(gc.repo)
		if err := git(work, "init", "-q", "--bare", "--initial-branch=main", gc.repo); err != nil {
			return err
		}
		t0 = time.Now()
		if err := gitStdin(gc.repo, gc.stream, "fast-import", "--quiet"); err != nil {
			return err
		}
		gc.fastImportT = time.Since(t0)
		t0 = time.Now()
		if err := git(gc.repo, "gc", "--quiet", "--prune=now"); err != nil {
			return err
		}
		gc.gcT = time.Since(t0)
		if gc.gc, err = bundleSize(gc.repo, gc.bundle); err != nil {
			return err
		}
		// The aggressive pack in a copy, so that the timings below run on
		// the plainly packed repository git users have.
		aggr := gc.repo + "-aggressive"
		if err := git(work, "clone", "-q", "--bare", "--no-local", gc.repo, aggr); err != nil {
			return err
		}
		t0 = time.Now()
		if err := git(aggr, "gc", "--quiet", "--aggressive", "--prune=now"); err != nil {
			return err
		}
		gc.aggressiveT = time.Since(t0)
		if gc.aggressive, err = bundleSize(aggr, aggr+".bundle"); err != nil {
			return err
		}
		os.RemoveAll(aggr)
		os.Remove(aggr + ".bundle")
	}
	jc := copies[0]
	createT, err := timeN(runs, func(int) error { return git(jc.repo, "bundle", "create", "-q", jc.bundle, "--all") })
	if err != nil {
		return err
	}
	// A clone from the bundle runs index-pack, which hashes every object:
	// the git counterpart of a verified import. git syncs only part of
	// what it writes by default; core.fsync=all syncs it all, as Folio's
	// import does.
	clone := func(cfg ...string) (time.Duration, error) {
		return timeN(runs, func(i int) error {
			dir := filepath.Join(work, fmt.Sprintf("clone%d", i))
			defer os.RemoveAll(dir)
			return git(work, append(cfg, "clone", "-q", "--bare", jc.bundle, dir)...)
		})
	}
	cloneT, err := clone()
	if err != nil {
		return err
	}
	cloneSyncT, err := clone("-c", "core.fsync=all", "-c", "core.fsyncMethod=fsync")
	if err != nil {
		return err
	}
	pst, err := os.Stat(packPath)
	if err != nil {
		return err
	}
	packBytes := pst.Size()

	raw := est.RawBytes
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	fmt.Printf("pack: %d objects, %.2f MiB (%.1f%% of canonical)\n", est.Objects, mib(packBytes), 100*float64(packBytes)/float64(raw))
	fmt.Printf("git:  %d commits from folio export git (%s); a bundle of everything, in MiB:\n", gst.Commits, gitExportT.Round(time.Millisecond))
	fmt.Printf("  %-34s %10s %10s %24s\n", "copy", "stream", "after gc", "after gc --aggressive")
	for _, gc := range copies {
		fmt.Printf("  %-34s %10.2f %10.2f %24.2f\n", gc.name, mib(gc.streamBytes), mib(gc.gc), mib(gc.aggressive))
	}
	for _, gc := range copies {
		fmt.Printf("  %s: git fast-import %s, git gc %s, git gc --aggressive %s\n", gc.name,
			gc.fastImportT.Round(time.Millisecond), gc.gcT.Round(time.Millisecond), gc.aggressiveT.Round(time.Millisecond))
	}
	fmt.Printf("\nmedians of %d runs (throughput = MB/s of canonical object data, %.1f MiB); git runs on the JSON-only copy after git gc\n", runs, mib(int64(raw)))
	fmt.Printf("  %-44s %10s %10s\n", "step", "time", "MB/s")
	row := func(name string, d time.Duration) {
		fmt.Printf("  %-44s %10s %10.1f\n", name, d.Round(time.Millisecond), mbps(raw, d))
	}
	row("folio pack export", exportT)
	row("git bundle create --all", createT)
	row("folio pack import (verified, synced)", importT)
	row("git clone from the bundle (index-pack)", cloneT)
	row("git clone from the bundle, core.fsync=all", cloneSyncT)
	row("folio pack verify (no git counterpart)", verifyT)
	fmt.Printf("\nratios (folio / git; below 1 means folio is smaller or faster)\n")
	ratio := func(name string, v float64) { fmt.Printf("  %-56s %6.2f\n", name, v) }
	ratio("pack size / JSON-only bundle after git gc", float64(packBytes)/float64(jc.gc))
	ratio("pack size / JSON-only bundle after git gc --aggressive", float64(packBytes)/float64(jc.aggressive))
	ratio("pack size / Markdown+JSON bundle after git gc", float64(packBytes)/float64(copies[1].gc))
	ratio("pack size / Markdown+JSON bundle after gc --aggressive", float64(packBytes)/float64(copies[1].aggressive))
	ratio("pack export / bundle create", exportT.Seconds()/createT.Seconds())
	ratio("pack import / clone from bundle, both synced", importT.Seconds()/cloneSyncT.Seconds())
	ratio("pack import (synced) / clone from bundle (git defaults)", importT.Seconds()/cloneT.Seconds())
	return nil
}

// bundleSize writes a bundle of every ref of repo to path and returns its
// size.
func bundleSize(repo, path string) (int64, error) {
	if err := git(repo, "bundle", "create", "-q", path, "--all"); err != nil {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// jsonOnly copies the fast-import stream at in to out without its
// Markdown files: every "M 100644 inline PATH.md" command and its data.
// Other data (commit messages, the JSON files) is copied byte for byte.
func jsonOnly(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	w := bufio.NewWriterSize(o, 1<<20)
	// data copies (or skips) the payload a "data N" line announces, and
	// the line end after it.
	data := func(line string, keep bool) error {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "data "), "\n"))
		if err != nil || n < 0 {
			return fmt.Errorf("%s: bad data command %q", in, line)
		}
		if keep {
			w.WriteString(line)
			_, err = io.CopyN(w, r, int64(n))
			return err
		}
		if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
			return err
		}
		// The optional line end after the data goes too: left alone it
		// would read as the blank line that ends the commit.
		if c, err := r.Peek(1); err == nil && c[0] == '\n' {
			r.Discard(1)
		}
		return nil
	}
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			break
		}
		if err != nil && err != io.EOF {
			o.Close()
			return err
		}
		switch {
		case strings.HasPrefix(line, "data "):
			err = data(line, true)
		case strings.HasPrefix(line, "M 100644 inline ") && strings.HasSuffix(line, ".md\n"):
			var next string
			if next, err = r.ReadString('\n'); err == nil {
				err = data(next, false)
			}
		default:
			_, err = w.WriteString(line)
		}
		if err != nil {
			o.Close()
			return fmt.Errorf("%s: %w", in, err)
		}
	}
	if err := w.Flush(); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

func gitStdin(dir, in string, args ...string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	cmd.Stdin = f
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %v: %v: %s", args, err, errb.String())
	}
	return nil
}
