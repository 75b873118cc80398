package pgkv

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the tables this code reads and writes.
const SchemaVersion = 1

// Options tune Open.
type Options struct {
	// MaxConns bounds the pool; 0 means DefaultMaxConns.
	MaxConns int32
	// StatementTimeout bounds every statement the engine runs, a lock
	// wait included (the server's statement_timeout); 0 means
	// DefaultStatementTimeout, negative none.
	StatementTimeout time.Duration
	// Exclusive makes the engine the store's only user, as Pebble's lock
	// makes a process the only user of a data directory: Open takes a
	// session advisory lock on a connection of its own, fails with
	// kv.ErrLocked while another process holds it, and watches the
	// database through that connection (see Failure).
	Exclusive bool
	// Logger receives the losses and returns of the database; nil:
	// slog.Default().
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxConns         = 8
	DefaultStatementTimeout = 30 * time.Second
)

// Probe is how often an exclusive engine checks its database, and how
// often it tries to reconnect while the database is unreachable.
var Probe = time.Second

// Engine is the PostgreSQL kv.Engine.
type Engine struct {
	pool  *pgxpool.Pool
	cfg   *pgxpool.Config
	where string
	log   *slog.Logger

	// fail is the current failure of an exclusive engine (an errs.Storage
	// error), nil while the database answers and the store lock is held.
	fail atomic.Pointer[errs.Error]
	// lock is the connection holding the store lock; owned by watch
	// once Open returns.
	lock   *pgx.Conn
	wake   chan struct{} // a failed statement asks watch to probe now
	stop   chan struct{}
	closed sync.WaitGroup
}

var _ kv.Engine = (*Engine)(nil)

// Open connects to the database dsn names (a libpq connection string or
// URL), creates or checks the schema and returns the store; dir is the
// data directory that holds the files kept beside the store (indexes).
//
// Errors: errs.Invalid for a DSN that does not parse (the message never
// quotes it); errs.Unavailable for a database that cannot be reached or
// whose schema is newer than this code's; kv.ErrLocked when Exclusive
// and another process holds the store.
func Open(ctx context.Context, dir, dsn string, o Options) (*kv.DB, error) {
	e, err := OpenEngine(ctx, dsn, o)
	if err != nil {
		return nil, err
	}
	return kv.OpenEngine(dir, e), nil
}

// OpenEngine is Open without the kv.DB around the engine.
func OpenEngine(ctx context.Context, dsn string, o Options) (*Engine, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included: say only what is wrong.
		return nil, errs.E(errs.Invalid, "pgkv: the storage DSN does not parse (a libpq connection string or postgres:// URL is expected)")
	}
	cfg.MaxConns = o.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	st := o.StatementTimeout
	if st == 0 {
		st = DefaultStatementTimeout
	}
	if st > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(st.Milliseconds())
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	e := &Engine{cfg: cfg, where: where(cfg), log: o.Logger, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	if e.log == nil {
		e.log = slog.Default()
	}
	e.log = e.log.With("part", "store")
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, errs.E(errs.Unavailable, "pgkv: connect to %s: %w", e.where, err)
	}
	e.pool = pool
	if o.Exclusive {
		conn, err := e.takeLock(ctx)
		if err != nil {
			pool.Close()
			return nil, err
		}
		e.lock = conn
	}
	if err := e.migrate(ctx); err != nil {
		e.closeLock()
		pool.Close()
		var pe *pgconn.PgError
		if errs.KindOf(err) == errs.Unavailable || errors.As(err, &pe) && pe.Code == "3D000" || !errors.As(err, &pe) {
			return nil, errs.E(errs.Unavailable, "pgkv: open %s: %w", e.where, err)
		}
		return nil, err
	}
	if o.Exclusive {
		e.closed.Add(1)
		go e.watch()
	}
	return e, nil
}

func init() {
	kv.RegisterEngine(kv.EnginePostgres, func(dir string, o kv.Options) (kv.Engine, error) {
		if o.DSN == "" {
			return nil, errs.E(errs.Invalid, "pgkv: [storage] engine = \"postgres\" needs a dsn (or FOLIO_STORAGE_DSN)")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return OpenEngine(ctx, o.DSN, Options{MaxConns: int32(o.MaxConns), StatementTimeout: o.StatementTimeout,
			Exclusive: true, Logger: o.Logger})
	})
}

// storeLock is the session advisory lock of an exclusive engine ("folio store").
const storeLock = int64(0x666f6c696f73746f)

// takeLock connects on a connection of its own and takes the store lock.
func (e *Engine) takeLock(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, e.cfg.ConnConfig)
	if err != nil {
		return nil, errs.E(errs.Unavailable, "pgkv: connect to %s: %w", e.where, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, storeLock).Scan(&ok); err != nil {
		conn.Close(ctx)
		return nil, errs.E(errs.Unavailable, "pgkv: lock the store on %s: %w", e.where, err)
	}
	if !ok {
		conn.Close(ctx)
		return nil, fmt.Errorf("%w (%s: another folio process holds it)", kv.ErrLocked, e.where)
	}
	return conn, nil
}

func (e *Engine) closeLock() {
	if e.lock != nil {
		e.lock.Close(context.Background())
		e.lock = nil
	}
}

// watch probes the database through the lock connection every Probe
// (or at once when a statement failed for want of a connection). When
// the probe fails the store is failed: writes and reads answer
// errs.Storage. Then it reconnects every Probe; once it holds the store
// lock again, it drops the pool's connections (all broken) and clears the
// failure.
func (e *Engine) watch() {
	defer e.closed.Done()
	t := time.NewTicker(Probe)
	defer t.Stop()
	defer e.closeLock()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		case <-e.wake:
		}
		if e.lock != nil {
			ctx, cancel := context.WithTimeout(context.Background(), max(Probe, 2*time.Second))
			err := e.lock.Ping(ctx)
			cancel()
			if err == nil {
				continue
			}
			e.closeLock()
			f := errs.E(errs.Storage, "the database %s is unreachable: reads and writes are refused until it is back (no acknowledged write is lost): %w", e.where, err)
			e.fail.Store(f)
			e.log.Error("the database is unreachable: refusing reads and writes until it is back", "database", e.where, "err", err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(Probe, 2*time.Second))
		conn, err := e.takeLock(ctx)
		cancel()
		if err != nil {
			if errors.Is(err, kv.ErrLocked) {
				f := errs.E(errs.Storage, "the store on %s was taken by another folio process while the database was unreachable: this daemon no longer writes; stop one of them", e.where)
				if old := e.fail.Load(); old == nil || old.Error() != f.Error() {
					e.log.Error("the store lock is held by another process", "database", e.where)
				}
				e.fail.Store(f)
			}
			continue
		}
		e.lock = conn
		e.pool.Reset()
		e.fail.Store(nil)
		e.log.Warn("the database is back: serving reads and writes again", "database", e.where)
	}
}

// Failure implements kv.EngineHealth: an exclusive engine's errs.Storage
// error while its database is unreachable or its store lock lost, nil
// otherwise (and always nil for an engine that is not exclusive).
func (e *Engine) Failure() error {
	if f := e.fail.Load(); f != nil {
		return f
	}
	return nil
}

// Name implements kv.EngineHealth.
func (e *Engine) Name() string { return kv.EnginePostgres }

// failed classifies err, from a statement of operation op: a failure to
// reach the database (no connection, a connection lost, the server
// shutting down or refusing connections) is an errs.Storage error and
// makes watch probe at once; a statement timeout is errs.Unavailable;
// anything else is returned wrapped as it is.
func (e *Engine) failed(op string, err error) error {
	if f := e.Failure(); f != nil {
		return f
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "57014": // query_canceled: statement_timeout
			return errs.E(errs.Unavailable, "pgkv: %s: the database did not answer within the statement timeout: %w", op, err)
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"), pe.Code == "53300":
		default:
			return fmt.Errorf("pgkv: %s: %w", op, err)
		}
	} else if errors.Is(err, context.Canceled) {
		return fmt.Errorf("pgkv: %s: %w", op, err)
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return errs.E(errs.Storage, "pgkv: %s on %s: %w", op, e.where, err)
}

// guard refuses a write while the engine is failed: without the store
// lock another process may own the store.
func (e *Engine) guard() error {
	if f := e.fail.Load(); f != nil {
		return f
	}
	return nil
}

// where names the server of cfg without its password.
func where(cfg *pgxpool.Config) string {
	return fmt.Sprintf("postgres %s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
}

// migrate creates the schema or checks its version, under an advisory
// lock so that daemons starting together do not race.
func (e *Engine) migrate(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS folio_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT max(version) FROM folio_schema HAVING count(*) > 0`).Scan(&v)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			v = 0
		case err != nil:
			return err
		}
		if v > SchemaVersion {
			return errs.E(errs.Unavailable, "pgkv: the database holds schema version %d, newer than this folio's %d: run the newer folio", v, SchemaVersion)
		}
		if v == SchemaVersion {
			return nil
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE folio_kv (k bytea PRIMARY KEY, v bytea NOT NULL)`); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO folio_schema (version) VALUES ($1)`, SchemaVersion)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgkv: schema: %w", err)
	}
	return nil
}

// migrateLock is the advisory lock key of migrate ("folio schema").
const migrateLock = int64(0x666f6c696f736368)

// Close stops the watch, releases the store lock and closes the pool.
func (e *Engine) Close() error {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	e.closed.Wait()
	e.closeLock()
	e.pool.Close()
	return nil
}

// Apply implements kv.Engine: the writes in one transaction, sent in one
// round trip.
func (e *Engine) Apply(ws []kv.Write, sync bool) error {
	if err := e.guard(); err != nil {
		return err
	}
	ctx := context.Background()
	var b pgx.Batch
	b.Queue(`BEGIN`)
	if !sync {
		b.Queue(`SET LOCAL synchronous_commit = off`)
	}
	for _, w := range ws {
		queueWrite(&b, w)
	}
	b.Queue(`COMMIT`)
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return e.failed("apply", err)
	}
	defer conn.Release()
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		// The transaction did not commit; make sure the connection is not
		// left inside it.
		conn.Exec(ctx, `ROLLBACK`)
		return e.failed("apply", err)
	}
	return nil
}

const (
	sqlSet    = `INSERT INTO folio_kv (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v`
	sqlDelete = `DELETE FROM folio_kv WHERE k = $1`
	sqlRange  = `DELETE FROM folio_kv WHERE k >= $1 AND k < $2`
)

func queueWrite(b *pgx.Batch, w kv.Write) {
	switch w.Op {
	case kv.OpSet:
		b.Queue(sqlSet, w.Key, nonNil(w.Value))
	case kv.OpDelete:
		b.Queue(sqlDelete, w.Key)
	case kv.OpDeleteRange:
		if w.Value == nil {
			b.Queue(`DELETE FROM folio_kv WHERE k >= $1`, w.Key)
		} else {
			b.Queue(sqlRange, w.Key, w.Value)
		}
	}
}

// nonNil: pgx sends a nil []byte as NULL; an empty value is a value.
func nonNil(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

// querier is what reads run on: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (e *Engine) get(q querier, key []byte) ([]byte, error) {
	var v []byte
	err := q.QueryRow(context.Background(), `SELECT v FROM folio_kv WHERE k = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, kv.ErrNotFound
	}
	if err != nil {
		return nil, e.failed("get", err)
	}
	return nonNil(v), nil
}

func (e *Engine) scan(q querier, lo, hi []byte, reverse bool, limit int) ([]kv.Pair, error) {
	var where []string
	var args []any
	if lo != nil {
		args = append(args, lo)
		where = append(where, fmt.Sprintf("k >= $%d", len(args)))
	}
	if hi != nil {
		args = append(args, hi)
		where = append(where, fmt.Sprintf("k < $%d", len(args)))
	}
	sql := `SELECT k, v FROM folio_kv`
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, " AND ")
	}
	if reverse {
		sql += ` ORDER BY k DESC`
	} else {
		sql += ` ORDER BY k`
	}
	args = append(args, limit)
	sql += fmt.Sprintf(" LIMIT $%d", len(args))
	rows, err := q.Query(context.Background(), sql, args...)
	if err != nil {
		return nil, e.failed("scan", err)
	}
	defer rows.Close()
	var out []kv.Pair
	for rows.Next() {
		var p kv.Pair
		if err := rows.Scan(&p.Key, &p.Value); err != nil {
			return nil, e.failed("scan", err)
		}
		p.Value = nonNil(p.Value)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, e.failed("scan", err)
	}
	return out, nil
}

// Get implements kv.Engine: one statement, outside any transaction.
func (e *Engine) Get(key []byte) ([]byte, error) { return e.get(e.pool, key) }

// Snapshot implements kv.Engine: a REPEATABLE READ, READ ONLY
// transaction whose snapshot is taken now (by its first statement).
func (e *Engine) Snapshot() (kv.EngineReader, error) {
	ctx := context.Background()
	tx, err := e.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, e.failed("snapshot", err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
		tx.Rollback(ctx)
		return nil, e.failed("snapshot", err)
	}
	return &txn{e: e, tx: tx}, nil
}

// Begin implements kv.Engine: a READ COMMITTED transaction.
func (e *Engine) Begin() (kv.EngineTxn, error) {
	if err := e.guard(); err != nil {
		return nil, err
	}
	tx, err := e.pool.BeginTx(context.Background(), pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, e.failed("begin", err)
	}
	return &txn{e: e, tx: tx}, nil
}

// txn is a snapshot or a batch's transaction.
type txn struct {
	e    *Engine
	tx   pgx.Tx
	done bool
}

func (t *txn) Get(key []byte) ([]byte, error) { return t.e.get(t.tx, key) }

func (t *txn) Range(lo, hi []byte, reverse bool, limit int) ([]kv.Pair, error) {
	return t.e.scan(t.tx, lo, hi, reverse, limit)
}

func (t *txn) Write(w kv.Write) error {
	var b pgx.Batch
	queueWrite(&b, w)
	if err := t.tx.SendBatch(context.Background(), &b).Close(); err != nil {
		return t.e.failed("write", err)
	}
	return nil
}

// Lock takes the advisory locks of names, hashed to 64 bits, in sorted
// order.
func (t *txn) Lock(names []string) error {
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		h := fnv.New64a()
		h.Write([]byte(n))
		ids = append(ids, int64(h.Sum64()))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		if _, err := t.tx.Exec(context.Background(), `SELECT pg_advisory_xact_lock($1)`, id); err != nil {
			return t.e.failed("lock", err)
		}
	}
	return nil
}

func (t *txn) Commit(sync bool) error {
	ctx := context.Background()
	t.done = true
	if !sync {
		if _, err := t.tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			t.tx.Rollback(ctx)
			return t.e.failed("commit", err)
		}
	}
	if err := t.e.guard(); err != nil {
		t.tx.Rollback(ctx)
		return err
	}
	if err := t.tx.Commit(ctx); err != nil {
		return t.e.failed("commit", err)
	}
	return nil
}

func (t *txn) Close() error {
	if t.done {
		return nil
	}
	t.done = true
	if err := t.tx.Rollback(context.Background()); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return fmt.Errorf("pgkv: rollback: %w", err)
	}
	return nil
}
