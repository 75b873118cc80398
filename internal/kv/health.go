package kv

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/gopool"
)

// health is what the store knows about its disk: whether Pebble failed
// (fail-stop), whether a background write ran out of space, and how much
// space is left. It is shared by Open, the DB and Pebble's logger and
// event listener.
//
// What Pebble (v1.1) does with disk errors, and so what health does:
//   - A failed write or sync of the write-ahead log, a failed WAL rotation
//     and a failed MANIFEST write are fatal in Pebble: it calls
//     Logger.Fatalf or panics, sometimes holding its commit and database
//     mutexes, after which no commit can complete. health marks the store
//     failed, and every write then answers errs.Storage at once.
//   - A failed flush or compaction is reported to
//     EventListener.BackgroundError and retried (at once, in a loop); the
//     data stays in the memtable and the write-ahead log. When the error
//     is ENOSPC, writes answer errs.StorageFull until a flush or
//     compaction succeeds again, and the retries are slowed down.
//   - Running out of space in the write-ahead log is fatal, so writes are
//     refused (errs.StorageFull) while the disk has less than MinFree
//     available, checked with statfs on every write attempt.
//   - A disk operation hanging longer than MaxStall fails the store.
type health struct {
	log      *slog.Logger
	dir      string // the data directory, for messages
	path     string // Pebble's directory inside it
	fs       vfs.FS
	minFree  uint64 // 0: no reserve
	maxStall time.Duration

	once   sync.Once
	failed chan struct{} // closed by fail, after err is set
	err    *errs.Error   // valid once failed is closed

	noSpace  atomic.Pointer[errs.Error] // a background write ran out of space; cleared by the next successful flush or compaction
	backoff  atomic.Int64               // how long the next failed background write sleeps (ns)
	reserved atomic.Int64               // bytes ApplyReserved committed below the reserve

	bgLog, slowLog, stallLog every

	workers gopool.Pool // run do's calls
}

func newHealth(dir, path string, fs vfs.FS, o Options) *health {
	h := &health{log: o.Logger, dir: dir, path: path, fs: fs, failed: make(chan struct{})}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.log = h.log.With("part", "store")
	switch {
	case o.MinFree == 0:
		h.minFree = DefaultMinFree
	case o.MinFree > 0:
		h.minFree = uint64(o.MinFree)
	}
	switch {
	case o.MaxStall == 0:
		h.maxStall = DefaultMaxStall
	case o.MaxStall > 0:
		h.maxStall = o.MaxStall
	}
	return h
}

// failure returns the store's failure, nil while it is healthy.
func (h *health) failure() error {
	select {
	case <-h.failed:
		return h.err
	default:
		return nil
	}
}

// fail marks the store failed with cause and logs it; only the first
// failure counts.
func (h *health) fail(cause error) {
	h.once.Do(func() {
		h.err = &errs.Error{Kind: errs.Storage, Err: cause,
			Msg: "the store failed: a disk write did not complete, so nothing more is written until the process restarts"}
		close(h.failed)
		h.log.Error("storage failed: refusing every write; the process must restart (a supervisor restarts the daemon)",
			"dir", h.dir, "cause", cause.Error())
	})
}

// do runs f, a call into Pebble that writes, on a goroutine of its own
// (a pooled one: a commit goes deep, and a fresh goroutine would grow its
// stack on every call) and returns its result, or the store's failure as
// soon as the store fails while f is still running. Pebble's fatal errors reach here as a Fatalf
// that never returns (see pebbleLogger) or as a panic, which fails the
// store. A goroutine caught in the failure is left behind: the process
// is about to exit, and Pebble's state is unknown.
func (h *health) do(f func() error) error {
	if err := h.failure(); err != nil {
		return err
	}
	done := make(chan error, 1)
	h.workers.Run(func() {
		defer func() {
			if r := recover(); r != nil {
				h.fail(panicError(r))
				done <- h.failure()
			}
		}()
		done <- f()
	})
	select {
	case err := <-done:
		if err != nil && h.failure() != nil {
			return h.failure()
		}
		return err
	case <-h.failed:
		select {
		case err := <-done:
			if err == nil {
				return nil // it finished as the store failed: its answer stands
			}
		default:
		}
		return h.failure()
	}
}

// panicError turns what Pebble panicked with into an error, keeping an
// error's chain (a WAL rotation panics with the file system's error).
func panicError(r any) error {
	if err, ok := r.(error); ok {
		return fmt.Errorf("pebble panicked: %w", err)
	}
	return fmt.Errorf("pebble panicked: %v", r)
}

// IsNoSpace reports whether err says the disk (or the user's quota) is
// full.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// writable returns why a write must not be attempted now, or nil.
func (h *health) writable() error {
	if err := h.failure(); err != nil {
		return err
	}
	if e := h.noSpace.Load(); e != nil {
		return e
	}
	if h.minFree == 0 {
		return nil
	}
	// statfs costs a microsecond or two, against the milliseconds of a
	// synced commit: checked every time, the answer is never stale.
	u, err := h.fs.GetDiskUsage(h.path)
	if err != nil {
		return nil // cannot tell: let Pebble try
	}
	if u.AvailBytes < h.minFree {
		return &errs.Error{Kind: errs.StorageFull, RetryAfter: 10 * time.Second,
			Msg: fmt.Sprintf("the server's disk is full: %s free, below the %s kept in reserve ([storage] min_free); nothing was written, reads work, and writes resume by themselves once space is freed",
				Bytes(int64(u.AvailBytes)), Bytes(int64(h.minFree)))}
	}
	return nil
}

// Bytes formats n bytes for people: 1.2 MiB, 512 KiB, 37 bytes.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// openSlack is what an Open needs besides replaying the write-ahead log:
// a new manifest, an OPTIONS file, an empty log and sstable overhead.
const openSlack = 1 << 20

// roomToOpen refuses to open when the disk cannot hold what Open writes:
// Pebble replays the write-ahead logs into sstables (about their size) and
// writes a new manifest before anything else, and fails half-way on a
// full disk, leaving what it wrote.
func (h *health) roomToOpen() error {
	u, err := h.fs.GetDiskUsage(h.dir)
	if err != nil {
		return nil
	}
	var wal, manifest int64
	names, _ := h.fs.List(h.path)
	for _, n := range names {
		fi, err := h.fs.Stat(h.fs.PathJoin(h.path, n))
		if err != nil {
			continue
		}
		switch {
		case strings.HasSuffix(n, ".log"):
			wal += fi.Size()
		case strings.HasPrefix(n, "MANIFEST-"):
			manifest = max(manifest, fi.Size())
		}
	}
	need := wal + manifest + openSlack
	if int64(u.AvailBytes) >= need {
		return nil
	}
	return &errs.Error{Kind: errs.StorageFull, Msg: fmt.Sprintf(
		"cannot open the store in %s: its disk has %s free and opening needs about %s (to replay %s of write-ahead log); free space on that disk or move the data directory to a larger one, then start again",
		h.dir, Bytes(int64(u.AvailBytes)), Bytes(need), Bytes(wal))}
}

// openError makes a failed Open's error one line, the same kind of line
// roomToOpen gives when the disk is full.
func (h *health) openError(err error) error {
	line := strings.ReplaceAll(err.Error(), "\n", " ")
	if f := h.failure(); f != nil {
		line = strings.ReplaceAll(errors.Unwrap(f).Error(), "\n", " ")
	}
	if IsNoSpace(err) || (h.failure() != nil && IsNoSpace(errors.Unwrap(h.failure()))) {
		free := "no space"
		if u, err := h.fs.GetDiskUsage(h.dir); err == nil {
			free = Bytes(int64(u.AvailBytes))
		}
		return &errs.Error{Kind: errs.StorageFull, Err: err, Msg: fmt.Sprintf(
			"cannot open the store in %s: its disk ran out of space (%s free: %s); free space on that disk or move the data directory to a larger one, then start again",
			h.dir, free, line)}
	}
	if h.failure() != nil {
		return &errs.Error{Kind: errs.Storage, Err: err, Msg: fmt.Sprintf("cannot open the store in %s: %s", h.dir, line)}
	}
	return fmt.Errorf("kv: open %s: %w", h.dir, err)
}

// dirState is what a failed Open compares to decide whether the files it
// created are garbage: the names and sizes in Pebble's directory and the
// manifest Pebble would open next (CURRENT, or the manifest marker of
// newer formats).
type dirState struct {
	files   map[string]bool
	current string
}

func (h *health) snapshot() dirState {
	s := dirState{files: map[string]bool{}}
	names, _ := h.fs.List(h.path)
	sort.Strings(names)
	var markers []string
	for _, n := range names {
		s.files[n] = true
		if strings.HasPrefix(n, "marker.manifest.") {
			markers = append(markers, n)
		}
	}
	if f, err := h.fs.Open(h.fs.PathJoin(h.path, "CURRENT")); err == nil {
		b, _ := io.ReadAll(io.LimitReader(f, 4096))
		f.Close()
		s.current = string(b)
	}
	s.current += "|" + strings.Join(markers, ",")
	return s
}

// removeNew deletes the files a failed Open created, when that is safe:
// while the manifest Pebble opens is the one it opened before, nothing
// the attempt wrote (sstables from replaying the log, a new manifest, an
// OPTIONS file) is referenced, and the old write-ahead logs still hold
// every write. A brand-new store has nothing to lose either way.
func (h *health) removeNew(before dirState) {
	after := h.snapshot()
	fresh := len(before.files) == 0 || before.current == "|"
	if !fresh && after.current != before.current {
		h.log.Warn("open failed after installing a new manifest; leaving its files in place", "dir", h.path)
		return
	}
	var removed []string
	for n := range after.files {
		if before.files[n] {
			continue
		}
		if err := h.fs.Remove(h.fs.PathJoin(h.path, n)); err == nil {
			removed = append(removed, n)
		}
	}
	if len(removed) > 0 {
		sort.Strings(removed)
		h.log.Info("removed the files of the failed open", "dir", h.path, "files", strings.Join(removed, " "))
	}
}

// listener is Pebble's event listener: background errors, stalls and slow
// disks reach the log; ENOSPC in a flush or compaction refuses writes
// until one succeeds.
func (h *health) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: h.backgroundError,
		FlushEnd: func(i pebble.FlushInfo) {
			if i.Err == nil {
				h.recovered()
			}
		},
		CompactionEnd: func(i pebble.CompactionInfo) {
			if i.Err == nil {
				h.recovered()
			}
		},
		WriteStallBegin: func(i pebble.WriteStallBeginInfo) {
			h.stallLog.do(func(n int) {
				h.log.Warn("writes stalled while Pebble catches up", "reason", i.Reason, "stalls", n)
			})
		},
		DiskSlow: h.diskSlow,
	}
}

// backgroundError logs a failed flush or compaction. Pebble retries them
// at once; when the disk is full each retry writes until ENOSPC again, so
// it sleeps here first (Pebble holds its database mutex meanwhile, which
// only delays other background work and writes, refused anyway).
func (h *health) backgroundError(err error) {
	if errors.Is(err, pebble.ErrCancelledCompaction) {
		return
	}
	h.bgLog.do(func(n int) {
		h.log.Error("pebble background error", "err", err.Error(), "errors", n)
	})
	if !IsNoSpace(err) {
		return
	}
	if h.noSpace.Load() == nil {
		h.noSpace.Store(&errs.Error{Kind: errs.StorageFull, Err: err, RetryAfter: 10 * time.Second,
			Msg: "the server's disk is full: writing the memtable to disk failed for lack of space; nothing was written, reads work, and writes resume by themselves once space is freed"})
		h.log.Warn("disk full: refusing writes until a flush succeeds", "dir", h.dir)
	}
	d := time.Duration(h.backoff.Load())
	d = min(max(2*d, 50*time.Millisecond), time.Second)
	h.backoff.Store(int64(d))
	time.Sleep(d)
}

// recovered clears the out-of-space state after a background write
// succeeded.
func (h *health) recovered() {
	h.backoff.Store(0)
	if h.noSpace.Swap(nil) != nil {
		h.log.Info("disk has room again: writes resume", "dir", h.dir)
	}
}

// slowThreshold is when Pebble starts reporting a slow disk operation.
func (h *health) slowThreshold() time.Duration {
	if h.maxStall > 0 && h.maxStall < 10*time.Second {
		return h.maxStall / 2
	}
	return 5 * time.Second
}

// diskSlow is called by Pebble's disk health checker, every couple of
// seconds while an operation hangs. It must not block, so the log and the
// failure happen on their own goroutine.
func (h *health) diskSlow(i pebble.DiskSlowInfo) {
	if h.maxStall > 0 && i.Duration >= h.maxStall {
		go h.fail(fmt.Errorf("disk stalled: %s of %s has not completed for %s (limit %s)", i.OpType, i.Path, i.Duration.Round(time.Second), h.maxStall))
		return
	}
	go h.slowLog.do(func(n int) {
		h.log.Warn("slow disk", "op", i.OpType.String(), "path", i.Path, "duration", i.Duration.Round(time.Millisecond), "reports", n)
	})
}

// pebbleLogger is Pebble's logger: its messages go to the store's log, and
// its fatal errors fail the store.
type pebbleLogger struct{ h *health }

// Infof logs at debug level: Pebble reports routine work with it (each
// open's log replay, for one), which would clutter every CLI command.
func (l pebbleLogger) Infof(format string, args ...any) {
	l.h.log.Debug("pebble: " + strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// Errorf is not called by Pebble v1.1; later versions log errors with it.
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.h.log.Error("pebble: " + strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// Fatalf fails the store and never returns: Pebble's code after a fatal
// error assumes the process is gone (it may hold its mutexes, and its
// state is unknown), so the calling goroutine is parked for good. Writers
// waiting on it are answered by health.do; the process exits soon after.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.h.fail(fatalError{msg: strings.TrimSpace(fmt.Sprintf(format, args...)), err: firstError(args)})
	select {}
}

// fatalError is a Pebble fatal error, keeping the error it named (so
// that, say, ENOSPC is still recognised).
type fatalError struct {
	msg string
	err error
}

func (e fatalError) Error() string { return e.msg }
func (e fatalError) Unwrap() error { return e.err }

func firstError(args []any) error {
	for _, a := range args {
		if err, ok := a.(error); ok {
			return err
		}
	}
	return nil
}

// every runs a log call at most once per interval, counting the calls it
// swallowed.
type every struct {
	mu   sync.Mutex
	last time.Time
	n    int
}

const logInterval = 10 * time.Second

func (e *every) do(f func(n int)) {
	e.mu.Lock()
	e.n++
	now := time.Now()
	if !e.last.IsZero() && now.Sub(e.last) < logInterval {
		e.mu.Unlock()
		return
	}
	e.last = now
	n := e.n
	e.n = 0
	e.mu.Unlock()
	f(n)
}
