// Package kv is Folio's storage seam: the engine (Pebble), the keyspace
// and the canonical msgpack codec.
//
// One Pebble database per data directory holds everything. Keys start with
// a one-letter prefix that says which part of Folio owns them:
//
//	o/<32-byte object id>              immutable objects (package objstore)
//	r/<ref name>                       refs: named pointers (package refs)
//	l/<ref name>\x00<8-byte seq>       reflog entries (package refs)
//	e/<stream>\x00<8-byte seq>         persisted event streams
//	t/<table>/<key>                    tables of mutable records
//	x/<8-byte seq>                     outbox for the indexes beside the store
//
// The storage seam. Nothing outside this package names the engine: the
// rest of Folio reads and writes through kv types, and this package holds
// the engine behind them (Options.Engine: EnginePebble on disk, the
// default; EngineMemory, the same Pebble on an in-memory filesystem, for
// tests). An engine outside this package plugs in as an Engine through
// OpenEngine (package pgkv: PostgreSQL); on such a store the health gate,
// the collector's write pass and the outbox sequence are still
// in-process only.
//
//	DB        the open store; a Reader of the latest committed state
//	Batch     writes committed atomically: Set, Delete, DeleteRange, then
//	          Commit(Sync|NoSync) or DB.Apply / DB.ApplyReserved; made by
//	          NewBatch (write-only) or NewIndexedBatch (also a Reader that
//	          reads its own writes over the committed state); Lock(names...)
//	          holds named locks until the batch commits or closes
//	Snapshot  one frozen state, a Reader, closed by its user
//	Reader    Get (a copy, or ErrNotFound) and NewIter
//	Iter      byte-order iteration both ways within [LowerBound, UpperBound)
//
// The engine contract, which package kvtest checks on every engine: a
// batch is all or nothing to every reader; a synced commit that returned
// nil survives a crash, and no batch is torn by one; scans are in
// bytes.Compare order; a DeleteRange applies in order with the batch's
// other writes; Batch.Lock serializes check-then-write sequences, so a
// compare-and-swap has one winner per expected value. It is what a second
// engine must keep: on PostgreSQL a batch is one transaction, an indexed
// batch a transaction that reads its own writes, Batch.Lock a
// transaction-scoped advisory lock (held across processes), and the event
// hub's notifications stay wake-ups only (readers read the store).
//
// Invariants: a multi-key change is one batch; a change that must
// survive a crash is committed with Sync before it is acknowledged (the
// tests kill a writer with SIGKILL and find every acknowledged batch).
// Every write goes through DB.Apply (Batch.Commit calls it, as do Set,
// Delete, DeleteRange, Flush and Compact): the engine's own batch is not
// reachable from outside, so no write bypasses the health gate below. Only one process
// opens a data directory at a time (Pebble's file lock); Open reports
// ErrLocked when another process holds it and ErrNotInitialized when the
// directory has no store (`folio init` makes one).
//
// Disk failures. The store fails stop: when Pebble reports a fatal error (a
// failed write or sync of its write-ahead log, a failed log rotation or
// MANIFEST write, a panic in a write) or a disk operation hangs longer than
// Options.MaxStall, the store is marked failed, the cause is logged, Failed
// is closed, and every write answers an errs.Storage error
// ("storage_failed") at once — including writes already waiting inside
// Pebble, which after such an error would otherwise wait forever. A write
// is acknowledged only when Pebble returned success for its synced batch,
// so nothing unsynced is acknowledged; a write answered storage_failed may
// or may not be on disk after the restart. The process must exit
// (`folio serve` does, after answering what is in flight) and restart;
// Close after a failure leaves Pebble alone.
//
// Full disks. Pebble cannot survive running out of space in its
// write-ahead log, so writes are refused with an errs.StorageFull error
// ("storage_full", retryable) while the disk has less than
// Options.MinFree available (default 256 MiB; statfs on each write), before
// Pebble sees them. Running out of space in a flush or compaction is
// survivable (Pebble retries; the data stays in the log): the error is
// logged, writes answer storage_full until a flush or compaction succeeds
// again, and reads keep working throughout. Writes resume by themselves
// once space is freed. ApplyReserved is the one way below the reserve: a
// small batch (at most MaxReservedWrite, ReservedBudget per open store in
// all, never leaving less than ReservedFloor free) for the one-time writes
// a daemon must make to start on such a disk. Open refuses, in one line naming the directory, the
// free space and what to do, when the disk cannot hold the write-ahead log
// it must replay, and removes the files of an open that failed half-way
// (as long as that open did not install a new manifest). Pebble's
// background errors, write stalls and slow disk operations reach the log
// (Options.Logger), rate-limited.
//
// Storage: every level's sstable format (compression, block size) is set
// in one place, Options.Levels (DefaultLevels: Snappy on 32 KiB blocks;
// RestingLevels the measured zstd-at-the-bottom alternative). CompactAll
// rewrites the whole keyspace (for maintenance and for measuring size the
// way `git gc` does); DiskUsage reports the live files' bytes. The byte
// layout of every prefix is in docs/objects.md.
//
// The canonical codec (Marshal) encodes structs in field declaration order,
// maps with sorted keys and integers in their most compact form, so equal
// values always give equal bytes; object ids are hashes of these bytes.
// Unmarshal is bounded (package bounded): whatever Pebble returns may be
// damaged, so every declared length is checked against the bytes that
// remain before anything is allocated, and records are never decoded into
// interface values.
package kv
