package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/foliodev/folio/internal/bounded"
	"github.com/foliodev/folio/internal/errs"
	"github.com/vmihailenco/msgpack/v5"
)

var (
	// ErrLocked is returned by Open when another process holds the data directory.
	ErrLocked error = errs.E(errs.Unavailable, "kv: data directory is locked by another process")
	// ErrNotInitialized is returned by Open when the directory holds no Folio store.
	ErrNotInitialized error = errs.E(errs.Unavailable, "kv: no folio store in this directory")
	// ErrNotFound is returned by Get when a key does not exist.
	ErrNotFound = errors.New("kv: not found")
)

// Key prefixes. See the package documentation for the layout.
const (
	PrefixObject = "o/"
	PrefixRef    = "r/"
	PrefixReflog = "l/"
	PrefixEvent  = "e/"
	PrefixTable  = "t/"
	PrefixOutbox = "x/"
)

// storeDir is the Pebble directory inside a data directory; marker is the
// file that says the data directory was initialized.
const (
	storeDir = "store"
	marker   = "FOLIO"
)

// The engines Options.Engine selects.
const (
	// EnginePebble is Pebble on the data directory's disk: the default,
	// and the reference every other engine is measured against.
	EnginePebble = "pebble"
	// EngineMemory is Pebble on an in-memory filesystem (Options.FS, or a
	// new one when that is nil): the same engine, code paths and
	// semantics, without a disk. Nothing survives the process; a store
	// reopened on the same Options.FS finds what was written before
	// (synced or not: a memory filesystem loses nothing on Close). The
	// data directory still names the store in messages and holds the
	// files kept beside the store (indexes), but no marker is written
	// and Create is implied. For tests.
	EngineMemory = "memory"
	// EnginePostgres is a PostgreSQL database (Options.DSN) shared by the
	// processes that open it (package pgkv, which registers it; a program
	// that offers it imports pgkv). The data directory holds only the
	// files kept beside the store (indexes, the daemon's address).
	EnginePostgres = "postgres"
)

// EngineOpener opens a registered engine for Open: dir is the data
// directory, o the options (DSN, MaxConns, StatementTimeout).
type EngineOpener func(dir string, o Options) (Engine, error)

var (
	enginesMu sync.Mutex
	engines   = map[string]EngineOpener{}
)

// RegisterEngine makes the engine name available to Open. It is called
// from the init function of the package that implements the engine.
func RegisterEngine(name string, open EngineOpener) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	engines[name] = open
}

func registered(name string) EngineOpener {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	return engines[name]
}

// NewMemFS returns an empty in-memory filesystem for EngineMemory, to be
// shared by the opens of one store.
func NewMemFS() FS { return vfs.NewMem() }

// Options tune Open.
type Options struct {
	// Engine is EnginePebble ("" means it), EngineMemory or a registered
	// engine (EnginePostgres).
	Engine string
	// DSN names the database of EnginePostgres (a libpq connection string
	// or postgres:// URL; it may hold a password: never log it).
	DSN string
	// MaxConns bounds an engine's connection pool; 0: its default.
	MaxConns int
	// StatementTimeout bounds one statement of an engine (a lock wait
	// included); 0: the engine's default, negative: none.
	StatementTimeout time.Duration
	// Create makes the store when the directory has none (folio init).
	Create bool
	// ReadOnly opens without taking the write path (still takes the lock).
	ReadOnly bool
	// CacheSize is Pebble's block cache in bytes; 0 means 64 MiB (the
	// daemon sets [storage] cache).
	CacheSize int64

	// Logger receives Pebble's messages, its background errors, write
	// stalls, slow disk operations and the store's failure; nil:
	// slog.Default().
	Logger *slog.Logger
	// MinFree is the free space, in bytes, kept on the store's disk: a
	// write that finds less fails with an errs.StorageFull error before
	// it reaches Pebble, whose write-ahead log cannot survive running out
	// of space. 0 means DefaultMinFree; a negative value keeps no reserve.
	MinFree int64
	// MaxStall is how long one disk operation may take before the store
	// is failed (a hung disk); 0 means DefaultMaxStall, negative never.
	MaxStall time.Duration
	// FS is the filesystem the store lives on; nil means the operating
	// system's. Tests wrap it to inject faults (package faultfs).
	FS FS
	// Levels sets the sstable format of each level, L0 first; a shorter
	// list repeats its last entry for the levels below it, and nil means
	// DefaultLevels. Benchmarks vary it. The format only decides how new
	// tables are written: every table records its own compression per
	// block, so a store written with other formats opens and reads as it
	// is, and compactions rewrite it in the current ones.
	Levels []LevelFormat
}

// LevelFormat is how the sstables of one level are written.
type LevelFormat struct {
	Compression Compression
	BlockSize   int // data block size, bytes
}

// Compression is the codec of an sstable's blocks.
type Compression int

// The compressions. DefaultCompression means SnappyCompression.
const (
	DefaultCompression Compression = iota
	NoCompression
	SnappyCompression
	ZstdCompression
)

func (c Compression) pebble() pebble.Compression {
	switch c {
	case NoCompression:
		return pebble.NoCompression
	case ZstdCompression:
		return pebble.ZstdCompression
	}
	return pebble.SnappyCompression
}

// String is the compression's name as Pebble records it in a table's
// properties ("Snappy", "ZSTD", "NoCompression").
func (c Compression) String() string { return c.pebble().String() }

// FS is the filesystem interface the store is written through (Pebble's
// vfs.FS): package faultfs wraps it to inject disk faults.
type FS = vfs.FS

// Defaults of Options.
const (
	// FastBlockSize and RestingBlockSize are the data block sizes of
	// DefaultLevels and of RestingLevels' bottom level.
	FastBlockSize    = 32 << 10
	RestingBlockSize = 512 << 10
	// DefaultMinFree leaves room for what Pebble writes on its own after
	// writes are refused: a memtable flush (32 MiB), a write-ahead log's
	// preallocation (35 MiB) and the output of compactions in flight.
	DefaultMinFree = 256 << 20
	// DefaultMaxStall is how long a write or sync may hang before the
	// store fails stop (CockroachDB uses the same bound).
	DefaultMaxStall = 20 * time.Second
)

// DefaultLevels is the sstable format of every level: Snappy on 32 KiB
// blocks. Object payloads are already compressed by our own codec where
// it pays, and zstd costs a daemon dearly: it runs on every compaction
// and block cache miss, and Pebble builds a zstd encoder or decoder per
// block when built without cgo. BenchmarkTableOptions (internal/repo), saves with
// checkpoints, replays and draft reads on a small cache, CPU per save and
// store size (shared machine):
//
//	              cgo       no cgo    store
//	zstd 64 KiB   1.65 ms   2.80 ms   2.14 MiB (before)
//	zstd 16 KiB      -      2.71 ms   2.72 MiB
//	snappy 32 KiB 1.26 ms   1.41 ms   2.55 MiB (chosen)
//	snappy 16 KiB 1.20 ms   1.32 ms   2.88 MiB
//	snappy 4 KiB     -      1.31 ms   3.27 MiB
//	none 16 KiB   1.11 ms   1.09 ms   4.54 MiB
//
// Snappy keeps most of zstd's saving in space at about the CPU of no
// compression; 32 KiB blocks are smaller than 16 KiB ones for the same
// CPU.
var DefaultLevels = []LevelFormat{{SnappyCompression, FastBlockSize}}

// RestingLevels keeps Snappy on 32 KiB blocks where data is written and
// rewritten (L0-L5) and puts zstd on 512 KiB blocks where it rests (L6,
// the bottom level, which holds most of a grown store and all of a fully
// compacted one). It is measured, not the default:
//
// Object keys are hashes, so the records of one document are spread over
// the keyspace, and much of what repeats between them (content hashes in
// versions, transactions, the block index, the version log, the reflog
// and the events) lies in different key ranges: a codec sees it only
// within one block. zstd on big blocks finds it, Snappy on small ones
// cannot. The 1,000-checkpoint history of bench/git_vs_folio.sh, fully
// compacted (one L6 table; git gc: 708 KB):
//
//	snappy 32 KiB   852 KB (default)  zstd 256 KiB   677 KB
//	zstd 64 KiB     745 KB            zstd 512 KiB   625 KB (0.89x)
//	zstd 128 KiB    721 KB            zstd 1 MiB     567 KB
//
// But a store smaller than LBaseMaxBytes has no level between L0 and L6:
// every flush is compacted straight into L6, and the reads of recent data
// (drafts, event replays) miss the cache there and decompress whole
// blocks. In BenchmarkTableOptions (50 documents, a 4 MiB cache) that
// costs 30-55% more CPU per save than DefaultLevels, run side by side on
// a shared machine, and 128 or 256 KiB blocks at L6 cost about as much.
var RestingLevels = []LevelFormat{
	{SnappyCompression, FastBlockSize},  // L0
	{SnappyCompression, FastBlockSize},  // L1
	{SnappyCompression, FastBlockSize},  // L2
	{SnappyCompression, FastBlockSize},  // L3
	{SnappyCompression, FastBlockSize},  // L4
	{SnappyCompression, FastBlockSize},  // L5
	{ZstdCompression, RestingBlockSize}, // L6
}

// levelFormat is the format of level i under levels (nil: DefaultLevels).
func levelFormat(levels []LevelFormat, i int) LevelFormat {
	if len(levels) == 0 {
		levels = DefaultLevels
	}
	f := levels[min(i, len(levels)-1)]
	if f.Compression == DefaultCompression {
		f.Compression = SnappyCompression
	}
	if f.BlockSize <= 0 {
		f.BlockSize = FastBlockSize
	}
	return f
}

// DB is an open Folio store. It is safe for concurrent use.
//
// Writes go through Apply, Set, Delete, Flush, Compact and CompactAll:
// they refuse at once when the store has failed (errs.Storage) or the
// disk is below the reserve (errs.StorageFull), and a write caught in a
// failure is answered as soon as the store is marked failed instead of
// waiting on Pebble forever. Batches are kv.Batch values, whose only way
// to the engine is DB.Apply (Batch.Commit calls it), so no write can
// bypass the gate. Reads (Get, NewIter, NewSnapshot, an indexed batch)
// never wait on the gate.
type DB struct {
	p      *pebble.DB
	dir    string
	gc     collector
	h      *health
	closer io.Closer // stops the disk health checker
	outbox outboxSeq
	locks  lockTable
	e      Engine // set by OpenEngine; p and h are nil then
	mem    bool   // EngineMemory
}

// WriteMode says whether Apply waits for the write-ahead log to be synced.
type WriteMode bool

// The write modes. A change that must survive a crash is applied with
// Sync before it is acknowledged.
const (
	Sync   WriteMode = true
	NoSync WriteMode = false
)

func (m WriteMode) options() *pebble.WriteOptions {
	if m {
		return pebble.Sync
	}
	return pebble.NoSync
}

// Open opens the store in data directory dir.
//
// A store that cannot be opened for lack of space fails with one line
// naming the directory, the free space and what to do (errs.StorageFull),
// and leaves no new files behind: Open checks the free space against what
// replaying the write-ahead log needs before Pebble writes anything, and
// removes what a failed attempt created as long as the attempt did not
// install a new manifest.
func Open(dir string, o Options) (*DB, error) {
	switch o.Engine {
	case "", EnginePebble:
	case EngineMemory:
		if o.FS == nil {
			o.FS = vfs.NewMem()
		}
		return open(dir, storeDir, o)
	default:
		open := registered(o.Engine)
		if open == nil {
			return nil, errs.E(errs.Invalid, "kv: unknown storage engine %q (the engines are %q, %q and %q)", o.Engine, EnginePebble, EnginePostgres, EngineMemory)
		}
		// The data directory holds the files kept beside the store.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("kv: create %s: %w", dir, err)
		}
		e, err := open(dir, o)
		if err != nil {
			return nil, err
		}
		return OpenEngine(dir, e), nil
	}
	if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("kv: open %s: %w", dir, err)
		}
		if !o.Create {
			return nil, fmt.Errorf("%w %s", ErrNotInitialized, dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("kv: create %s: %w", dir, err)
		}
	}
	db, err := open(dir, filepath.Join(dir, storeDir), o)
	if err != nil {
		return nil, err
	}
	if o.Create {
		if err := writeMarker(dir); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// open opens the Pebble store at path on o.FS; dir is the data directory
// it belongs to.
func open(dir, path string, o Options) (*DB, error) {
	fsys := o.FS
	if fsys == nil {
		fsys = vfs.Default
	}
	mem := o.Engine == EngineMemory
	h := newHealth(dir, path, fsys, o)
	if !o.ReadOnly {
		if err := h.roomToOpen(); err != nil {
			return nil, err
		}
	}
	cache := o.CacheSize
	if cache <= 0 {
		cache = 64 << 20
	}
	c := pebble.NewCache(cache)
	defer c.Unref()
	hfs, closer := vfs.WithDiskHealthChecks(fsys, h.slowThreshold(), h.diskSlow)
	opts := &pebble.Options{
		FS:                          hfs,
		Cache:                       c,
		MemTableSize:                32 << 20,
		MaxConcurrentCompactions:    func() int { return 2 },
		L0CompactionThreshold:       4,
		L0StopWritesThreshold:       24,
		LBaseMaxBytes:               64 << 20,
		Levels:                      make([]pebble.LevelOptions, 7),
		ErrorIfNotExists:            !o.Create && !mem,
		ReadOnly:                    o.ReadOnly,
		Logger:                      pebbleLogger{h},
		EventListener:               h.listener(),
		DisableAutomaticCompactions: false,
	}
	for i := range opts.Levels {
		l := &opts.Levels[i]
		f := levelFormat(o.Levels, i)
		l.BlockSize = f.BlockSize
		l.IndexBlockSize = 256 << 10
		l.FilterPolicy = bloom.FilterPolicy(10)
		l.Compression = f.Compression.pebble()
		if i > 0 {
			l.TargetFileSize = 8 << 20
		}
	}
	before := h.snapshot()
	var db *pebble.DB
	err := h.do(func() error {
		var err error
		db, err = pebble.Open(path, opts)
		return err
	})
	if err != nil {
		closer.Close()
		if isLockErr(err) {
			return nil, fmt.Errorf("%w (%s)", ErrLocked, dir)
		}
		if !o.Create && strings.Contains(err.Error(), "does not exist") {
			return nil, fmt.Errorf("%w %s", ErrNotInitialized, dir)
		}
		if !o.ReadOnly {
			h.removeNew(before)
		}
		return nil, h.openError(err)
	}
	return &DB{p: db, dir: dir, h: h, closer: closer, mem: mem}, nil
}

func isLockErr(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) ||
		strings.Contains(err.Error(), "resource temporarily unavailable") ||
		strings.Contains(err.Error(), "lock held")
}

// writeMarker records that dir holds a Folio store, durably.
func writeMarker(dir string) error {
	p := filepath.Join(dir, marker)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := WriteFileSync(p, []byte("folio store format 1\n")); err != nil {
		return fmt.Errorf("kv: write marker: %w", err)
	}
	return nil
}

// WriteFileSync replaces the file at path with data durably: a temporary
// file, synced, renamed over path, then the directory synced. A crash
// leaves either the old file or the new one, never a torn one.
func WriteFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory so that a rename inside it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Dir is the data directory.
func (db *DB) Dir() string { return db.dir }

// Get implements Reader: the latest committed value at key.
func (db *DB) Get(key []byte) ([]byte, error) {
	if db.e != nil {
		return db.e.Get(key)
	}
	return get(db.p, key)
}

// NewIter implements Reader over the latest committed state (on an
// Engine, a snapshot held until the iterator is closed).
func (db *DB) NewIter(o *IterOptions) (*Iter, error) {
	if db.e != nil {
		s, err := db.e.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("kv: scan: %w", err)
		}
		return newEngineIter(s, true, o), nil
	}
	return newIter(db.p, o)
}

func (db *DB) pebble() pebble.Reader {
	if db.e != nil {
		return nil
	}
	return db.p
}

// Get returns a copy of the value at key in r, or ErrNotFound.
func Get(r Reader, key []byte) ([]byte, error) { return r.Get(key) }

// GetRecord decodes the msgpack record at key in r into v; ok is false
// when there is none. A record that does not decode is corrupt.
func GetRecord(r Reader, key []byte, v any) (ok bool, err error) {
	data, err := Get(r, key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := Unmarshal(data, v); err != nil {
		return false, errs.E(errs.Corrupt, "decode record %q: %w", key, err)
	}
	return true, nil
}

// SetRecord encodes v as msgpack into b at key.
func SetRecord(b *Batch, key []byte, v any) error {
	data, err := Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return b.Set(key, data)
}

// Keys returns copies of the keys under prefix in r, in order, at most
// limit of them (0: all).
func Keys(r Reader, prefix []byte, limit int) ([][]byte, error) {
	it, err := r.NewIter(&IterOptions{LowerBound: prefix, UpperBound: PrefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out [][]byte
	for it.First(); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
		out = append(out, bytes.Clone(it.Key()))
	}
	return out, it.Error()
}

// Has reports whether key exists in r.
func Has(r Reader, key []byte) (bool, error) {
	p := r.pebble()
	if p == nil {
		_, err := r.Get(key)
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	_, c, err := p.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.Close()
	return true, nil
}

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// Uint64 appends v big-endian, so numeric order is byte order.
func Uint64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// ParseUint64 reads a big-endian uint64 from the last 8 bytes of k.
func ParseUint64(k []byte) uint64 {
	if len(k) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k[len(k)-8:])
}

// TableKey builds t/<table>/<parts joined by 0x00>.
func TableKey(table string, parts ...string) []byte {
	k := make([]byte, 0, 2+len(table)+1+16*len(parts))
	k = append(k, PrefixTable...)
	k = append(k, table...)
	k = append(k, '/')
	for i, p := range parts {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, p...)
	}
	return k
}

// Marshal encodes v canonically (see package doc).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.SetSortMapKeys(true)
	enc.UseCompactInts(true)
	enc.UseCompactFloats(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes msgpack data, exactly one value, into v (a non-nil
// pointer to a type without interfaces). Everything Folio reads back from
// Pebble or receives as objects may have been damaged or crafted, so the
// decode is bounded (package bounded): every declared length is checked
// against the bytes that remain before anything is allocated, and the
// memory the decode allocates is bounded by len(data).
func Unmarshal(data []byte, v any) error {
	return bounded.Unmarshal(data, v)
}

// CompactAll flushes the memtable and compacts the whole keyspace, so that
// shadowed and deleted values are dropped and the files on disk hold each
// live key once (what `git gc` does for a git repository). It is slow on a
// big store and meant for maintenance, measurements and tests.
func (db *DB) CompactAll() error {
	if err := db.Flush(); err != nil {
		return fmt.Errorf("kv: flush: %w", err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("kv: compact: %w", err)
	}
	var first, last []byte
	if it.First() {
		first = bytes.Clone(it.Key())
		it.Last()
		last = bytes.Clone(it.Key())
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("kv: compact: %w", err)
	}
	if first == nil {
		return nil
	}
	if err := db.Compact(first, append(last, 0), true); err != nil {
		return fmt.Errorf("kv: compact: %w", err)
	}
	return nil
}

// DiskSpaceUsage is the engine's own estimate of the bytes the store
// takes on disk, all files included (Pebble's Metrics.DiskSpaceUsage).
func (db *DB) DiskSpaceUsage() uint64 {
	if db.e != nil {
		return 0 // the database server's, not Folio's
	}
	return db.p.Metrics().DiskSpaceUsage()
}

// TableBytes is the size of the store's sstables, every level's.
func (db *DB) TableBytes() int64 {
	if db.e != nil {
		return 0
	}
	var n int64
	for _, l := range db.p.Metrics().Levels {
		n += l.Size
	}
	return n
}

// DiskUsage reports the bytes of the store's live files: sstables, the
// current write-ahead log and the manifest. Pebble also keeps up to three
// used write-ahead logs for reuse while it runs (bounded by the memtable
// size); the next Open deletes them.
func (db *DB) DiskUsage() int64 {
	if db.e != nil {
		return 0
	}
	m := db.p.Metrics()
	n := int64(m.WAL.PhysicalSize)
	for _, l := range m.Levels {
		n += l.Size
	}
	return n + int64(m.Table.ZombieSize) + int64(m.Table.ObsoleteSize)
}
