package kvtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/foliodev/folio/internal/kv"
)

// Opener opens the store kept under dir, creating it when there is none:
// opening the same dir again (after Close) opens the same store.
type Opener func(tb testing.TB, dir string) *kv.DB

// Run runs the conformance suite against the engine open opens.
func Run(t *testing.T, open Opener) {
	fresh := func(t *testing.T) (*kv.DB, string) {
		dir := t.TempDir()
		db := open(t, dir)
		t.Cleanup(func() { db.Close() })
		return db, dir
	}
	t.Run("GetSetDelete", func(t *testing.T) { db, _ := fresh(t); testGetSetDelete(t, db) })
	t.Run("AtomicBatch", func(t *testing.T) { db, _ := fresh(t); testAtomicBatch(t, db) })
	t.Run("ScanOrder", func(t *testing.T) { db, _ := fresh(t); testScanOrder(t, db) })
	t.Run("ReadYourWrites", func(t *testing.T) { db, _ := fresh(t); testReadYourWrites(t, db) })
	t.Run("DeleteRange", func(t *testing.T) { db, _ := fresh(t); testDeleteRange(t, db) })
	t.Run("CompareAndSwap", func(t *testing.T) { db, _ := fresh(t); testCompareAndSwap(t, db) })
	t.Run("Snapshot", func(t *testing.T) { db, _ := fresh(t); testSnapshot(t, db) })
	t.Run("DurableOnSync", func(t *testing.T) {
		dir := t.TempDir()
		testDurable(t, func() *kv.DB { return open(t, dir) })
	})
}

func mustSet(t testing.TB, db *kv.DB, k, v string) {
	t.Helper()
	if err := db.Set([]byte(k), []byte(v), kv.NoSync); err != nil {
		t.Fatal(err)
	}
}

func testGetSetDelete(t *testing.T, db *kv.DB) {
	if _, err := db.Get([]byte("t/x/a")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
	}
	mustSet(t, db, "t/x/a", "1")
	v, err := db.Get([]byte("t/x/a"))
	if err != nil || string(v) != "1" {
		t.Fatalf("Get after Set = %q, %v", v, err)
	}
	v[0] = 'X' // a copy: changing it changes nothing stored
	if v, _ := kv.Get(db, []byte("t/x/a")); string(v) != "1" {
		t.Fatalf("Get returned the engine's memory: stored value now %q", v)
	}
	if ok, err := kv.Has(db, []byte("t/x/a")); !ok || err != nil {
		t.Fatalf("Has = %v, %v", ok, err)
	}
	mustSet(t, db, "t/x/empty", "")
	if v, err := db.Get([]byte("t/x/empty")); err != nil || len(v) != 0 {
		t.Fatalf("an empty value reads as %q, %v", v, err)
	}
	if err := db.Delete([]byte("t/x/a"), kv.NoSync); err != nil {
		t.Fatal(err)
	}
	if ok, _ := kv.Has(db, []byte("t/x/a")); ok {
		t.Fatal("a deleted key is still there")
	}
	b := db.NewBatch()
	defer b.Close()
	if _, err := b.Get([]byte("t/x/empty")); !errors.Is(err, kv.ErrNotIndexed) {
		t.Fatalf("read of a write-only batch: %v, want ErrNotIndexed", err)
	}
}

// testAtomicBatch: writers commit batches that set every key of a group
// to the same value while readers read the group from snapshots; a
// reader must never see two values (a torn batch).
func testAtomicBatch(t *testing.T, db *kv.DB) {
	const keys, rounds, writers, readers = 16, 200, 3, 3
	key := func(i int) []byte { return []byte(fmt.Sprintf("t/atomic/%02d", i)) }
	var stop atomic.Bool
	var ww, rw sync.WaitGroup
	errc := make(chan error, writers+readers)
	for w := range writers {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for r := range rounds {
				b := db.NewBatch()
				val := []byte(fmt.Sprintf("w%d-r%d", w, r))
				for i := range keys {
					b.Set(key(i), val)
				}
				err := b.Commit(kv.NoSync)
				b.Close()
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	var reads, full atomic.Int64
	for range readers {
		rw.Add(1)
		go func() {
			defer rw.Done()
			for !stop.Load() {
				if err := readGroup(db, keys, key, &full); err != nil {
					errc <- err
					return
				}
				reads.Add(1)
			}
		}()
	}
	ww.Wait()
	stop.Store(true)
	rw.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if reads.Load() == 0 || full.Load() == 0 {
		t.Errorf("%d reads, %d of them of a committed group: the race did not happen", reads.Load(), full.Load())
	}
}

func readGroup(db *kv.DB, keys int, key func(int) []byte, full *atomic.Int64) error {
	s := db.NewSnapshot()
	defer s.Close()
	var first []byte
	for i := range keys {
		v, err := s.Get(key(i))
		if errors.Is(err, kv.ErrNotFound) {
			v = nil
		} else if err != nil {
			return err
		}
		if i == 0 {
			first = v
		} else if !bytes.Equal(v, first) {
			return fmt.Errorf("torn batch: key 0 is %q, key %d is %q", first, i, v)
		}
	}
	if first != nil {
		full.Add(1)
	}
	return nil
}

// testScanOrder: keys with awkward bytes (0x00, 0xff, prefixes of each
// other) scan in bytes.Compare order forwards and backwards, within the
// bounds, and seeks land where byte order says.
func testScanOrder(t *testing.T, db *kv.DB) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]bool{}
	b := db.NewBatch()
	for _, k := range []string{"t/s/", "t/s/\x00", "t/s/\x00\x00", "t/s/\xff", "t/s/\xff\xff", "t/s/a", "t/s/a\x00", "t/s/ab", "t/s/b"} {
		want[k] = true
		b.Set([]byte(k), []byte(k))
	}
	for range 300 {
		k := make([]byte, 3+rng.IntN(6))
		for i := range k {
			k[i] = byte(rng.IntN(256))
		}
		key := "t/s/" + string(k)
		want[key] = true
		b.Set([]byte(key), []byte(key))
	}
	// outside the bounds
	b.Set([]byte("t/r"), nil)
	b.Set([]byte("t/t"), nil)
	if err := b.Commit(kv.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	sorted := make([]string, 0, len(want))
	for k := range want {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) })
	lo := []byte("t/s/")
	it, err := db.NewIter(&kv.IterOptions{LowerBound: lo, UpperBound: kv.PrefixEnd(lo)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var fwd, back []string
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), it.Value()) {
			t.Fatalf("key %q has value %q", it.Key(), it.Value())
		}
		fwd = append(fwd, string(it.Key()))
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append(back, string(it.Key()))
	}
	if !slices.Equal(fwd, sorted) {
		t.Fatalf("forward scan: %d keys, want %d in byte order", len(fwd), len(sorted))
	}
	slices.Reverse(back)
	if !slices.Equal(back, sorted) {
		t.Fatalf("backward scan is not the forward one reversed")
	}
	mid := sorted[len(sorted)/2]
	if !it.SeekGE([]byte(mid)) || string(it.Key()) != mid {
		t.Fatalf("SeekGE(%q) landed on %q", mid, it.Key())
	}
	if !it.SeekLT([]byte(mid)) || string(it.Key()) != sorted[len(sorted)/2-1] {
		t.Fatalf("SeekLT(%q) landed on %q", mid, it.Key())
	}
	if it.SeekGE([]byte("t/t")) {
		t.Fatalf("SeekGE past the upper bound found %q", it.Key())
	}
	keys, err := kv.Keys(db, lo, 5)
	if err != nil || len(keys) != 5 || string(keys[0]) != sorted[0] || string(keys[4]) != sorted[4] {
		t.Fatalf("Keys with a limit = %q, %v", keys, err)
	}
}

// testReadYourWrites: an indexed batch sees its own sets and deletes over
// the committed state, others do not until it commits.
func testReadYourWrites(t *testing.T, db *kv.DB) {
	mustSet(t, db, "t/ryw/a", "old")
	mustSet(t, db, "t/ryw/b", "old")
	b := db.NewIndexedBatch()
	defer b.Close()
	b.Set([]byte("t/ryw/a"), []byte("new"))
	b.Delete([]byte("t/ryw/b"))
	b.Set([]byte("t/ryw/c"), []byte("new"))
	if v, err := b.Get([]byte("t/ryw/a")); err != nil || string(v) != "new" {
		t.Fatalf("batch reads its set as %q, %v", v, err)
	}
	if _, err := b.Get([]byte("t/ryw/b")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("batch reads its delete as %v", err)
	}
	keys, err := kv.Keys(b, []byte("t/ryw/"), 0)
	if err != nil || len(keys) != 2 || string(keys[0]) != "t/ryw/a" || string(keys[1]) != "t/ryw/c" {
		t.Fatalf("batch scan = %q, %v", keys, err)
	}
	if v, _ := db.Get([]byte("t/ryw/a")); string(v) != "old" {
		t.Fatalf("an uncommitted batch is visible: %q", v)
	}
	if err := b.Commit(kv.Sync); err != nil {
		t.Fatal(err)
	}
	if v, _ := db.Get([]byte("t/ryw/a")); string(v) != "new" {
		t.Fatalf("after commit: %q", v)
	}
	if ok, _ := kv.Has(db, []byte("t/ryw/b")); ok {
		t.Fatal("the batch's delete did not commit")
	}
}

// testDeleteRange: [start, end) exactly, in order with the batch's other
// writes.
func testDeleteRange(t *testing.T, db *kv.DB) {
	for _, k := range []string{"t/dr/a", "t/dr/b", "t/dr/b\x00", "t/dr/c", "t/dr/d"} {
		mustSet(t, db, k, "v")
	}
	b := db.NewBatch()
	b.Set([]byte("t/dr/bb"), []byte("set before the range delete"))
	b.DeleteRange([]byte("t/dr/b"), []byte("t/dr/d"))
	b.Set([]byte("t/dr/c"), []byte("set after the range delete"))
	if err := b.Commit(kv.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	keys, err := kv.Keys(db, []byte("t/dr/"), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(keys))
	for i, k := range keys {
		got[i] = string(k)
	}
	if want := []string{"t/dr/a", "t/dr/c", "t/dr/d"}; !slices.Equal(got, want) {
		t.Fatalf("after DeleteRange [b, d): %q, want %q", got, want)
	}
	if v, _ := db.Get([]byte("t/dr/c")); string(v) != "set after the range delete" {
		t.Fatalf("t/dr/c = %q", v)
	}
	if err := db.DeleteRange([]byte("t/dr/"), kv.PrefixEnd([]byte("t/dr/")), kv.Sync); err != nil {
		t.Fatal(err)
	}
	if keys, _ := kv.Keys(db, []byte("t/dr/"), 0); len(keys) != 0 {
		t.Fatalf("DB.DeleteRange left %q", keys)
	}
}

// testCompareAndSwap: in each round every goroutine reads the counter,
// waits until all have read it (so they all hold the same base), then
// tries to move it from that base to the next value with the check and
// the write under Batch.Lock: exactly one wins each round, and the
// counter ends at the number of rounds.
func testCompareAndSwap(t *testing.T, db *kv.DB) {
	const workers, rounds = 8, 50
	key := []byte("t/cas/counter")
	mustSet(t, db, string(key), "0")
	for r := range rounds {
		var read, done sync.WaitGroup
		read.Add(workers)
		done.Add(workers)
		var wins atomic.Int64
		errc := make(chan error, workers)
		for range workers {
			go func() {
				defer done.Done()
				base, err := db.Get(key)
				read.Done()
				if err != nil {
					errc <- err
					return
				}
				read.Wait()
				ok, err := cas(db, key, base, []byte(fmt.Sprint(atoi(base)+1)))
				if err != nil {
					errc <- err
				}
				if ok {
					wins.Add(1)
				}
			}()
		}
		done.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d of %d swaps from the same base won, want exactly 1", r, wins.Load(), workers)
		}
	}
	if v, _ := db.Get(key); atoi(v) != rounds {
		t.Fatalf("counter %s after %d rounds", v, rounds)
	}
}

func cas(db *kv.DB, key, old, new []byte) (bool, error) {
	b := db.NewIndexedBatch()
	defer b.Close()
	if err := b.Lock(string(key)); err != nil {
		return false, err
	}
	cur, err := b.Get(key)
	if err != nil {
		return false, err
	}
	if !bytes.Equal(cur, old) {
		return false, nil
	}
	if err := b.Set(key, new); err != nil {
		return false, err
	}
	return true, b.Commit(kv.NoSync)
}

func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}

// testSnapshot: a snapshot keeps the state it was taken in.
func testSnapshot(t *testing.T, db *kv.DB) {
	mustSet(t, db, "t/snap/a", "1")
	s := db.NewSnapshot()
	defer s.Close()
	mustSet(t, db, "t/snap/a", "2")
	mustSet(t, db, "t/snap/b", "2")
	if v, _ := s.Get([]byte("t/snap/a")); string(v) != "1" {
		t.Fatalf("snapshot reads %q", v)
	}
	if keys, _ := kv.Keys(s, []byte("t/snap/"), 0); len(keys) != 1 {
		t.Fatalf("snapshot scan sees %q", keys)
	}
}

// testDurable: what was written with Sync is there after Close and Open.
func testDurable(t *testing.T, open func() *kv.DB) {
	db := open()
	for i := range 50 {
		b := db.NewBatch()
		b.Set([]byte(fmt.Sprintf("t/dur/%03d", i)), bytes.Repeat([]byte{byte(i)}, 100))
		b.Set([]byte("t/dur/last"), []byte(fmt.Sprint(i)))
		if err := b.Commit(kv.Sync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	if v, err := db.Get([]byte("t/dur/last")); err != nil || string(v) != "49" {
		t.Fatalf("after reopening, last = %q, %v", v, err)
	}
	if keys, _ := kv.Keys(db, []byte("t/dur/0"), 0); len(keys) != 50 {
		t.Fatalf("after reopening, %d of 50 batches", len(keys))
	}
}

// Crash checks that a crash loses no synced batch and tears none: open
// opens a store on fs (a strict in-memory filesystem that keeps only what
// was synced). Synced and unsynced batches are written, the machine
// "crashes" (every unsynced byte is dropped), and the store reopens with
// every synced batch whole and every other batch whole or absent.
func Crash(t *testing.T, open func(tb testing.TB, fs kv.FS) *kv.DB) {
	fs := vfs.NewStrictMem()
	// The in-memory engine keeps its files in "store"; make that directory
	// durable first, as creating the data directory is on a real disk.
	if err := fs.MkdirAll("store", 0o755); err != nil {
		t.Fatal(err)
	}
	if d, err := fs.OpenDir(""); err != nil {
		t.Fatal(err)
	} else if err := d.Sync(); err != nil {
		t.Fatal(err)
	} else {
		d.Close()
	}
	db := open(t, fs)
	const synced, unsynced = 40, 40
	write := func(i int, m kv.WriteMode) {
		b := db.NewBatch()
		defer b.Close()
		for j := range 4 {
			b.Set([]byte(fmt.Sprintf("t/crash/%03d/%d", i, j)), bytes.Repeat([]byte{byte(i)}, 200))
		}
		if err := b.Commit(m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range synced {
		write(i, kv.Sync)
	}
	for i := synced; i < synced+unsynced; i++ {
		write(i, kv.NoSync)
	}
	fs.SetIgnoreSyncs(true) // the crash: nothing from here on reaches the disk
	db.Close()
	fs.ResetToSyncedState()
	fs.SetIgnoreSyncs(false)
	db = open(t, fs)
	defer db.Close()
	for i := range synced + unsynced {
		keys, err := kv.Keys(db, []byte(fmt.Sprintf("t/crash/%03d/", i)), 0)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(keys) == 4:
		case len(keys) == 0 && i >= synced:
		default:
			t.Errorf("batch %d after the crash: %d of its 4 keys (synced: %v)", i, len(keys), i < synced)
		}
	}
}
