package pgkv

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the version of the tables this code reads and writes.
const SchemaVersion = 1

// Options tune Open.
type Options struct {
	// MaxConns bounds the pool; 0 means DefaultMaxConns.
	MaxConns int32
}

// DefaultMaxConns is the pool's bound when Options.MaxConns is 0.
const DefaultMaxConns = 8

// Engine is the PostgreSQL kv.Engine.
type Engine struct {
	pool *pgxpool.Pool
}

var _ kv.Engine = (*Engine)(nil)

// Open connects to the database dsn names (a libpq connection string or
// URL), creates or checks the schema and returns the store; dir is the
// data directory that holds the files kept beside the store (indexes).
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
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, errs.E(errs.Unavailable, "pgkv: connect to %s: %w", where(cfg), err)
	}
	e := &Engine{pool: pool}
	if err := e.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return e, nil
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

// Close closes the pool.
func (e *Engine) Close() error {
	e.pool.Close()
	return nil
}

// Apply implements kv.Engine: the writes in one transaction, sent in one
// round trip.
func (e *Engine) Apply(ws []kv.Write, sync bool) error {
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
		return fmt.Errorf("pgkv: apply: %w", err)
	}
	defer conn.Release()
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		// The transaction did not commit; make sure the connection is not
		// left inside it.
		conn.Exec(ctx, `ROLLBACK`)
		return fmt.Errorf("pgkv: apply: %w", err)
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

func get(q querier, key []byte) ([]byte, error) {
	var v []byte
	err := q.QueryRow(context.Background(), `SELECT v FROM folio_kv WHERE k = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, kv.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("pgkv: get: %w", err)
	}
	return nonNil(v), nil
}

func scan(q querier, lo, hi []byte, reverse bool, limit int) ([]kv.Pair, error) {
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
		return nil, fmt.Errorf("pgkv: scan: %w", err)
	}
	defer rows.Close()
	var out []kv.Pair
	for rows.Next() {
		var p kv.Pair
		if err := rows.Scan(&p.Key, &p.Value); err != nil {
			return nil, fmt.Errorf("pgkv: scan: %w", err)
		}
		p.Value = nonNil(p.Value)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgkv: scan: %w", err)
	}
	return out, nil
}

// Get implements kv.Engine: one statement, outside any transaction.
func (e *Engine) Get(key []byte) ([]byte, error) { return get(e.pool, key) }

// Snapshot implements kv.Engine: a REPEATABLE READ, READ ONLY
// transaction whose snapshot is taken now (by its first statement).
func (e *Engine) Snapshot() (kv.EngineReader, error) {
	ctx := context.Background()
	tx, err := e.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("pgkv: snapshot: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
		tx.Rollback(ctx)
		return nil, fmt.Errorf("pgkv: snapshot: %w", err)
	}
	return &txn{tx: tx}, nil
}

// Begin implements kv.Engine: a READ COMMITTED transaction.
func (e *Engine) Begin() (kv.EngineTxn, error) {
	tx, err := e.pool.BeginTx(context.Background(), pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("pgkv: begin: %w", err)
	}
	return &txn{tx: tx}, nil
}

// txn is a snapshot or a batch's transaction.
type txn struct {
	tx   pgx.Tx
	done bool
}

func (t *txn) Get(key []byte) ([]byte, error) { return get(t.tx, key) }

func (t *txn) Range(lo, hi []byte, reverse bool, limit int) ([]kv.Pair, error) {
	return scan(t.tx, lo, hi, reverse, limit)
}

func (t *txn) Write(w kv.Write) error {
	var b pgx.Batch
	queueWrite(&b, w)
	if err := t.tx.SendBatch(context.Background(), &b).Close(); err != nil {
		return fmt.Errorf("pgkv: write: %w", err)
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
			return fmt.Errorf("pgkv: lock: %w", err)
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
			return fmt.Errorf("pgkv: commit: %w", err)
		}
	}
	if err := t.tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgkv: commit: %w", err)
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
