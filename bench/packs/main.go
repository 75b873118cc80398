package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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

	repo := filepath.Join(work, "git")
	os.RemoveAll(repo)
	if err := git(work, "init", "-q", "--initial-branch=main", repo); err != nil {
		return err
	}
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
	t0 = time.Now()
	if err := gitStdin(repo, fiPath, "fast-import", "--quiet"); err != nil {
		return err
	}
	fastImportT := time.Since(t0)
	// The bundle as fast-import left the repository, then after `git repack -adf`
	// (deltas recomputed): the smaller one is what git users would keep.
	rawBundle := filepath.Join(work, "fastimport.bundle")
	if err := git(repo, "bundle", "create", "-q", rawBundle, "--all"); err != nil {
		return err
	}
	t0 = time.Now()
	if err := git(repo, "repack", "-a", "-d", "-f", "-q"); err != nil {
		return err
	}
	gcT := time.Since(t0)
	bundle := filepath.Join(work, "all.bundle")
	createT, err := timeN(runs, func(int) error { return git(repo, "bundle", "create", "-q", bundle, "--all") })
	if err != nil {
		return err
	}
	bverifyT, err := timeN(runs, func(int) error { return git(repo, "bundle", "verify", "-q", bundle) })
	if err != nil {
		return err
	}
	// `git bundle verify` checks the header and prerequisites only; a
	// clone from the bundle runs index-pack, which hashes every object:
	// the operation that matches a verified pack import.
	cloneT, err := timeN(runs, func(i int) error {
		dir := filepath.Join(work, fmt.Sprintf("clone%d", i))
		defer os.RemoveAll(dir)
		return git(work, "clone", "-q", "--bare", bundle, dir)
	})
	if err != nil {
		return err
	}
	pst, _ := os.Stat(packPath)
	bst, _ := os.Stat(bundle)
	rbst, _ := os.Stat(rawBundle)
	fist, _ := os.Stat(fiPath)

	raw := est.RawBytes
	fmt.Printf("pack: %d objects, %.2f MiB (%.1f%% of canonical)\n", est.Objects, float64(pst.Size())/(1<<20), 100*float64(pst.Size())/float64(raw))
	fmt.Printf("git:  %d commits, fast-import stream %.1f MiB (folio export git %s, git fast-import %s, git repack -adf %s)\n",
		gst.Commits, float64(fist.Size())/(1<<20), gitExportT.Round(time.Millisecond), fastImportT.Round(time.Millisecond), gcT.Round(time.Millisecond))
	fmt.Printf("      bundle %.2f MiB after git repack -adf (%.2f MiB straight after fast-import)\n", float64(bst.Size())/(1<<20), float64(rbst.Size())/(1<<20))
	fmt.Printf("\nmedians of %d runs (throughput = MB/s of canonical object data, %.1f MiB)\n", runs, float64(raw)/(1<<20))
	fmt.Printf("  %-28s %10s %10s\n", "step", "time", "MB/s")
	fmt.Printf("  %-28s %10s %10.1f\n", "folio pack export", exportT.Round(time.Millisecond), mbps(raw, exportT))
	fmt.Printf("  %-28s %10s %10.1f\n", "folio pack verify", verifyT.Round(time.Millisecond), mbps(raw, verifyT))
	fmt.Printf("  %-28s %10s %10.1f\n", "folio pack import (verified)", importT.Round(time.Millisecond), mbps(raw, importT))
	fmt.Printf("  %-28s %10s\n", "git bundle create --all", createT.Round(time.Millisecond))
	fmt.Printf("  %-28s %10s\n", "git bundle verify", bverifyT.Round(time.Millisecond))
	fmt.Printf("  %-28s %10s\n", "git clone from bundle", cloneT.Round(time.Millisecond))
	fmt.Printf("\nratios (folio / git; below 1 means folio is smaller or faster)\n")
	fmt.Printf("  pack size / bundle size:          %.2f\n", float64(pst.Size())/float64(bst.Size()))
	fmt.Printf("  pack export / bundle create:      %.2f\n", exportT.Seconds()/createT.Seconds())
	fmt.Printf("  pack verify / bundle verify:      %.2f\n", verifyT.Seconds()/bverifyT.Seconds())
	fmt.Printf("  pack import / bundle verify:      %.2f\n", importT.Seconds()/bverifyT.Seconds())
	fmt.Printf("  pack import / clone from bundle:  %.2f\n", importT.Seconds()/cloneT.Seconds())
	return nil
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
