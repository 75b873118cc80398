package kv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/faultfs"
)

// The disk-fault tests: a faultfs.FS under the store fails or hangs chosen
// operations the way a failing or full disk does, and each test checks
// what a user of the store would notice: whether a write was
// acknowledged, what error it got, whether anything hangs, what reaches
// the log, and what is on disk afterwards.

// logBook is a slog handler that keeps every record and lets a test wait
// for one.
type logBook struct {
	mu    sync.Mutex
	cond  *sync.Cond
	lines []string
}

func newLogBook() *logBook {
	b := &logBook{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *logBook) Enabled(context.Context, slog.Level) bool { return true }
func (b *logBook) WithAttrs([]slog.Attr) slog.Handler       { return b }
func (b *logBook) WithGroup(string) slog.Handler            { return b }
func (b *logBook) Handle(_ context.Context, r slog.Record) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&sb, " %s=%v", a.Key, a.Value)
		return true
	})
	b.mu.Lock()
	b.lines = append(b.lines, sb.String())
	b.cond.Broadcast()
	b.mu.Unlock()
	return nil
}

// wait returns the first line holding every one of parts, waiting for it
// as long as the test may run.
func (b *logBook) wait(t *testing.T, parts ...string) string {
	t.Helper()
	stop := time.AfterFunc(time.Minute, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop.Stop()
	start := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		for _, l := range b.lines {
			if containsAll(l, parts) {
				return l
			}
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("no log line with %q; the log:\n%s", parts, strings.Join(b.lines, "\n"))
		}
		b.cond.Wait()
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// openFaulty creates a store in a new directory on a fault-injecting
// filesystem, with no reserve unless o says otherwise.
func openFaulty(t *testing.T, o kv.Options) (*kv.DB, *faultfs.FS, *logBook, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	fs := faultfs.New(vfs.Default)
	book := newLogBook()
	o.Create, o.FS, o.Logger = true, fs, slog.New(book)
	if o.MinFree == 0 {
		o.MinFree = -1
	}
	db, err := kv.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return db, fs, book, dir
}

// within runs f and fails the test if it has not returned after a minute:
// the failure these tests guard against is a write that never returns.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	c := make(chan T, 1)
	go func() { c <- f() }()
	select {
	case v := <-c:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return: it hangs", what)
		panic("unreachable")
	}
}

func put(db *kv.DB, key, value string) error {
	b := db.NewBatch()
	defer b.Close()
	b.Set([]byte(key), []byte(value))
	return db.Apply(b, kv.Sync)
}

// copyStore copies a data directory file by file (without Pebble's lock),
// as a restart would find it.
func copyStore(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "copy")
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if fi.Name() == "LOCK" {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, src); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// A save whose write-ahead log sync fails is not acknowledged, fails the
// store with the cause in the log, and every later write is refused at
// once; a restart finds every acknowledged save.
func TestFailedSyncFailsStop(t *testing.T) {
	db, fs, book, dir := openFaulty(t, kv.Options{})
	var acked []string
	for i := range 20 {
		k := fmt.Sprintf("t/acked/%02d", i)
		if err := put(db, k, "v"); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, k)
	}

	fs.SetRule(faultfs.Fail(faultfs.OpSync, ".log", syscall.EIO))
	err := within(t, "a save whose sync fails", func() error { return put(db, "t/lost", "v") })
	if err == nil {
		t.Fatal("a save whose write-ahead log sync failed was acknowledged")
	}
	if errs.KindOf(err) != errs.Storage || errs.CodeOf(err) != "storage_failed" {
		t.Fatalf("failed save: kind %v code %q (%v), want storage_failed", errs.KindOf(err), errs.CodeOf(err), err)
	}
	select {
	case <-db.Failed():
	default:
		t.Fatal("the store is not marked failed")
	}
	if !errors.Is(db.Failure(), syscall.EIO) {
		t.Fatalf("Failure() = %v, want its cause to be the I/O error", db.Failure())
	}
	book.wait(t, "ERROR", "storage failed", "input/output error")

	fs.SetRule(nil) // the disk is fine again: the store stays failed
	if err := within(t, "a save after the failure", func() error { return put(db, "t/after", "v") }); errs.KindOf(err) != errs.Storage {
		t.Fatalf("save after the failure: %v, want storage_failed", err)
	}
	if err := within(t, "Close after the failure", db.Close); errs.KindOf(err) != errs.Storage {
		t.Fatalf("Close after the failure: %v", err)
	}

	re, err := kv.Open(copyStore(t, dir), kv.Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	for _, k := range acked {
		if ok, err := kv.Has(re, []byte(k)); err != nil || !ok {
			t.Fatalf("acknowledged %s is lost after the restart (%v)", k, err)
		}
	}
	if ok, _ := kv.Has(re, []byte("t/after")); ok {
		t.Fatal("a save refused after the failure was written")
	}
}

// Saves waiting on a write-ahead log sync that hangs are all answered, with
// storage_failed, once the stall exceeds MaxStall; none waits forever.
func TestStalledSyncAnswersEveryWaitingSave(t *testing.T) {
	db, fs, book, _ := openFaulty(t, kv.Options{MaxStall: time.Second})
	if err := put(db, "t/before", "v"); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release) // let the stuck syncs finish when the test ends
	fs.SetRule(func(op faultfs.Op, path string) error {
		if op == faultfs.OpSync && strings.HasSuffix(path, ".log") {
			<-release
		}
		return nil
	})
	const savers = 4
	results := make(chan error, savers)
	for i := range savers {
		go func() { results <- put(db, fmt.Sprintf("t/stuck/%d", i), "v") }()
	}
	for range savers {
		err := within(t, "a save behind a stalled sync", func() error { return <-results })
		if errs.KindOf(err) != errs.Storage {
			t.Fatalf("a save behind a stalled disk got %v, want storage_failed", err)
		}
	}
	book.wait(t, "storage failed", "disk stalled")
}

// A write-ahead log rotation that cannot create the new log is fatal in
// Pebble (it panics holding its commit mutex, which used to hang every
// later write): the store fails, and later writes are answered at once.
func TestFailedWALRotationFailsStop(t *testing.T) {
	db, fs, book, _ := openFaulty(t, kv.Options{})
	if err := put(db, "t/a", "v"); err != nil {
		t.Fatal(err)
	}
	fs.SetRule(faultfs.Fail(faultfs.OpCreate, ".log", syscall.ENOSPC))
	err := within(t, "a flush whose log rotation fails", db.Flush)
	if errs.KindOf(err) != errs.Storage {
		t.Fatalf("flush with a failed log rotation: %v, want storage_failed", err)
	}
	book.wait(t, "storage failed", "no space left on device")
	for i := range 3 {
		err := within(t, "a save after the failed rotation", func() error { return put(db, fmt.Sprintf("t/b%d", i), "v") })
		if errs.KindOf(err) != errs.Storage {
			t.Fatalf("save after the failed rotation: %v, want storage_failed", err)
		}
	}
}

// A flush that runs out of space is retried by Pebble: the error reaches
// the log, writes answer storage_full while reads keep working, and writes
// resume by themselves once the flush gets through.
func TestFlushOutOfSpaceRefusesWritesUntilItSucceeds(t *testing.T) {
	db, fs, book, _ := openFaulty(t, kv.Options{})
	defer db.Close()
	for i := range 100 {
		if err := put(db, fmt.Sprintf("t/k/%03d", i), strings.Repeat("x", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	fs.SetRule(faultfs.Fail(faultfs.OpWrite, ".sst", syscall.ENOSPC))
	if err := kv.AsyncFlush(db); err != nil {
		t.Fatal(err)
	}
	book.wait(t, "pebble background error", "no space left on device")
	book.wait(t, "disk full")

	err := within(t, "a save on a full disk", func() error { return put(db, "t/refused", "v") })
	if errs.KindOf(err) != errs.StorageFull || errs.CodeOf(err) != "storage_full" || !errs.Retryable(err) {
		t.Fatalf("save while flushes fail for space: %v (kind %v), want a retryable storage_full", err, errs.KindOf(err))
	}
	if v, err := kv.Get(db, []byte("t/k/042")); err != nil || len(v) != 1000 {
		t.Fatalf("read while the disk is full: %d bytes, %v", len(v), err)
	}
	if db.Failure() != nil {
		t.Fatalf("a retried flush failed the store: %v", db.Failure())
	}

	fs.SetRule(nil) // space was freed
	book.wait(t, "writes resume")
	if err := db.Writable(); err != nil {
		t.Fatalf("writable after the flush succeeded: %v", err)
	}
	if err := put(db, "t/resumed", "v"); err != nil {
		t.Fatalf("save after space was freed: %v", err)
	}
	if ok, _ := kv.Has(db, []byte("t/refused")); ok {
		t.Fatal("the refused save was written")
	}
}

// Below the reserve, writes answer storage_full before Pebble sees them,
// reads work, and writes resume when space comes back.
func TestReserveRefusesWritesBeforePebbleRunsOut(t *testing.T) {
	db, fs, _, _ := openFaulty(t, kv.Options{MinFree: 64 << 20})
	defer db.Close()
	if err := put(db, "t/a", "v"); err != nil {
		t.Fatal(err)
	}
	fs.SetFree(10 << 20)
	err := put(db, "t/b", "v")
	if errs.KindOf(err) != errs.StorageFull {
		t.Fatalf("save below the reserve: %v, want storage_full", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "10.0 MiB free") || !strings.Contains(msg, "64.0 MiB") || !strings.Contains(msg, "min_free") {
		t.Fatalf("the message does not say how much is free and kept: %q", msg)
	}
	if errs.KindOf(db.Flush()) != errs.StorageFull {
		t.Fatal("a flush below the reserve was not refused")
	}
	if v, err := kv.Get(db, []byte("t/a")); err != nil || string(v) != "v" {
		t.Fatalf("read below the reserve: %q %v", v, err)
	}
	fs.SetFree(1 << 30)
	if err := put(db, "t/b", "v"); err != nil {
		t.Fatalf("save after space came back: %v", err)
	}
}

// Below the reserve, ApplyReserved commits a small batch, refuses one over
// MaxReservedWrite, refuses once the store spent ReservedBudget that way,
// and refuses when the write would leave less than ReservedFloor free.
func TestApplyReservedIsBounded(t *testing.T) {
	db, fs, _, _ := openFaulty(t, kv.Options{MinFree: 64 << 20})
	defer db.Close()
	fs.SetFree(32 << 20)
	batch := func(key string, n int) *kv.Batch {
		b := db.NewBatch()
		b.Set([]byte(key), make([]byte, n))
		return b
	}
	small := batch("t/small", 100)
	defer small.Close()
	if errs.KindOf(db.Apply(small, kv.Sync)) != errs.StorageFull {
		t.Fatal("Apply below the reserve was not refused")
	}
	if err := db.ApplyReserved(small, kv.Sync); err != nil {
		t.Fatalf("a small reserved write below the reserve: %v", err)
	}
	if v, err := kv.Get(db, []byte("t/small")); err != nil || len(v) != 100 {
		t.Fatalf("the reserved write is not there: %d bytes, %v", len(v), err)
	}
	big := batch("t/big", kv.MaxReservedWrite+1)
	defer big.Close()
	if errs.KindOf(db.ApplyReserved(big, kv.Sync)) != errs.StorageFull {
		t.Fatal("a reserved write over MaxReservedWrite was committed")
	}
	var spent int
	for spent = 0; spent < 2*kv.ReservedBudget; spent += kv.MaxReservedWrite - 64 {
		b := batch(fmt.Sprintf("t/budget%d", spent), kv.MaxReservedWrite-64)
		err := db.ApplyReserved(b, kv.Sync)
		b.Close()
		if err != nil {
			if errs.KindOf(err) != errs.StorageFull {
				t.Fatal(err)
			}
			break
		}
	}
	if spent > kv.ReservedBudget || spent < kv.ReservedBudget-kv.MaxReservedWrite {
		t.Fatalf("reserved writes stopped after %d bytes, want about ReservedBudget (%d)", spent, kv.ReservedBudget)
	}
	db2, fs2, _, _ := openFaulty(t, kv.Options{MinFree: 64 << 20})
	defer db2.Close()
	fs2.SetFree(kv.ReservedFloor)
	b := db2.NewBatch()
	defer b.Close()
	b.Set([]byte("t/floor"), []byte("v"))
	if errs.KindOf(db2.ApplyReserved(b, kv.Sync)) != errs.StorageFull {
		t.Fatal("a reserved write below the floor was committed")
	}
}

// listing is a directory's file names and sizes.
func listing(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fi.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Opening a store on a full disk fails with one line that names the
// directory, the free space and what to do, and leaves no new files:
// whether the free space is too small to start, or the disk fills up
// half-way through the open.
func TestOpenOnFullDiskLeavesNothing(t *testing.T) {
	src := filepath.Join(t.TempDir(), "data")
	db, err := kv.Open(src, kv.Options{Create: true, MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := put(db, fmt.Sprintf("t/k/%03d", i), strings.Repeat("y", 4000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil { // the writes stay in the write-ahead log
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		setup func(*faultfs.FS)
		want  []string
	}{
		{"too little free space to start", func(fs *faultfs.FS) { fs.SetFree(100 << 10) },
			[]string{"100 KiB free", "to replay 1.", "free space on that disk or move the data directory"}},
		{"disk fills while writing the replayed log", func(fs *faultfs.FS) {
			fs.SetRule(faultfs.Fail(faultfs.OpWrite, ".sst", syscall.ENOSPC))
		}, []string{"ran out of space", "no space left on device", "free space on that disk or move the data directory"}},
		{"disk fills while writing the manifest", func(fs *faultfs.FS) {
			fs.SetRule(func(op faultfs.Op, path string) error {
				if op == faultfs.OpCreate && strings.Contains(filepath.Base(path), "MANIFEST-") {
					return syscall.ENOSPC
				}
				return nil
			})
		}, []string{"ran out of space", "no space left on device", "free space on that disk or move the data directory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, src)
			before := listing(t, dir)
			fs := faultfs.New(vfs.Default)
			c.setup(fs)
			book := newLogBook()
			err := within(t, "opening on a full disk", func() error {
				db, err := kv.Open(dir, kv.Options{FS: fs, Logger: slog.New(book)})
				if err == nil {
					db.Close()
				}
				return err
			})
			if err == nil {
				t.Fatal("opened on a full disk")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, dir) || !containsAll(msg, c.want) {
				t.Fatalf("open error is not one clear line with %q:\n%s", c.want, msg)
			}
			if errs.KindOf(err) != errs.StorageFull {
				t.Fatalf("open error kind %v, want storage_full", errs.KindOf(err))
			}
			after := listing(t, dir)
			for name, size := range after {
				if _, ok := before[name]; !ok {
					t.Errorf("the failed open left %s (%d bytes)", name, size)
				}
			}
			for name, size := range before {
				if after[name] != size {
					t.Errorf("the failed open changed %s: %d -> %d bytes", name, size, after[name])
				}
			}
		})
	}
	// After all that, the original opens and has every write.
	re, err := kv.Open(src, kv.Options{MinFree: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if v, err := kv.Get(re, []byte("t/k/299")); err != nil || len(v) != 4000 {
		t.Fatalf("last write after reopening: %d bytes, %v", len(v), err)
	}
}

// Every write must go through DB.Apply (or Set, Delete...), which answers
// when the store fails; a pebble.Batch committed directly waits on Pebble
// forever after a fatal error. kv.Sync is not a pebble.WriteOptions, so
// b.Commit(kv.Sync) does not compile; this catches Pebble's own options
// used anywhere outside this package.
func TestWritesGoThroughKV(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s: %v", root, err)
	}
	banned := []string{"pebble.Sync", "pebble.NoSync", "pebble.WriteOptions"}
	err = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if n := fi.Name(); strings.HasPrefix(n, ".") || n == "testdata" || p == filepath.Join(root, "internal", "kv") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, w := range banned {
				if strings.Contains(line, w) {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("%s:%d uses %s: commit through kv.DB.Apply(b, kv.Sync) instead", rel, i+1, w)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
