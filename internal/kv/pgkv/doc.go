// Package pgkv is Folio's PostgreSQL storage engine: the keyspace of
// package kv in one ordered table of a PostgreSQL database, so that
// several daemons can share one store (DESIGN.md §3).
//
// The keys and values live in folio_kv (k bytea primary key, v bytea): a
// bytea compares byte-wise, shorter prefix first, which is Pebble's order,
// so scans both ways and range deletes are index range scans. The engine
// creates its schema on Open and records its version in folio_schema;
// a database whose version is newer than the code's is refused.
//
// One Folio batch is one SQL transaction. A write-only batch is sent at
// Commit in one round trip (a pipeline inside BEGIN ... COMMIT). An
// indexed batch, or one that takes locks, is a READ COMMITTED
// transaction begun at its first read or Lock: its reads see the latest
// committed state plus its own writes, and Batch.Lock takes
// transaction-scoped advisory locks (pg_advisory_xact_lock, in sorted
// order so two batches cannot deadlock), which is what a check-then-write
// needs: the check reads after the lock is held, so it sees every commit
// of the previous holder. READ COMMITTED under those locks rather than
// SERIALIZABLE: Folio's read-modify-writes already name what they
// serialize on, and a serialization failure would need a retry loop at
// every caller. Snapshots are REPEATABLE READ, READ ONLY transactions,
// the snapshot taken when the snapshot is made; a DB-level iterator holds
// one for its life, as a Pebble iterator reads one state.
//
// Durability: a batch committed with kv.Sync commits with
// synchronous_commit on (the server's WAL flushed before COMMIT
// returns); kv.NoSync sets synchronous_commit off for that transaction
// only, which may lose the last commits on a server crash but never
// tears one.
//
// The pool is bounded (Options.MaxConns): a snapshot, an open iterator
// or an indexed batch holds one connection until it is closed. Every
// statement is bounded by the server's statement_timeout
// (Options.StatementTimeout); one that hits it is errs.Unavailable.
//
// Ownership and health: the engine kv.Open makes (registered as
// kv.EnginePostgres) is Exclusive, the database's counterpart of
// Pebble's directory lock: it holds a session advisory lock on a
// connection of its own, so a second process opening the store gets
// kv.ErrLocked, and it probes the database through that connection
// every Probe. A statement that fails for want of the server (no
// connection, a connection lost, the server shutting down) is an
// errs.Storage error and makes the probe run at once; a failed probe
// fails the engine (Failure, kv.EngineHealth): every read and write
// answers errs.Storage. Unlike a failed disk the database may come back:
// the engine reconnects every Probe, and once it holds the lock again it
// drops the pool's dead connections and serves again. A commit that
// failed is never acknowledged, though it may have committed (the answer
// to COMMIT was lost): callers treat it as they treat a write caught in
// a disk failure.
//
// Package pgtest starts a private cluster for tests.
package pgkv
