package pgkv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/jackc/pgx/v5"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/kvtest"
	"github.com/foliodev/folio/internal/kv/pgkv"
	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
)

// opener opens one database of c per store directory, so that reopening
// a directory reopens its store.
func opener(c *pgtest.Cluster) kvtest.Opener {
	var mu sync.Mutex
	dsns := map[string]string{}
	return func(tb testing.TB, dir string) *kv.DB {
		mu.Lock()
		dsn, ok := dsns[dir]
		if !ok {
			dsn = c.NewDatabase(tb)
			dsns[dir] = dsn
		}
		mu.Unlock()
		db, err := pgkv.Open(context.Background(), dir, dsn, pgkv.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		return db
	}
}

func TestConformance(t *testing.T) {
	kvtest.Run(t, opener(pgtest.Start(t)))
}

func open(t testing.TB, dsn string) *kv.DB {
	t.Helper()
	db, err := pgkv.Open(context.Background(), t.TempDir(), dsn, pgkv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestServerCrash: every batch committed with Sync is there, whole,
// after the server is killed without a shutdown and restarted; the
// store's schema is found again, not recreated.
func TestServerCrash(t *testing.T) {
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	db := open(t, dsn)
	const n = 30
	for i := range n {
		b := db.NewBatch()
		for j := range 4 {
			b.Set(fmt.Appendf(nil, "t/crash/%03d/%d", i, j), bytes.Repeat([]byte{byte(i)}, 300))
		}
		if err := b.Commit(kv.Sync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	c.Crash(t)
	db2 := open(t, dsn)
	for i := range n {
		keys, err := kv.Keys(db2, fmt.Appendf(nil, "t/crash/%03d/", i), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 4 {
			t.Fatalf("batch %d after the crash: %d of its 4 keys", i, len(keys))
		}
	}
}

// TestNewerSchemaRefused: a database migrated by a newer folio is not
// written by this one.
func TestNewerSchemaRefused(t *testing.T) {
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	db := open(t, dsn)
	b := db.NewBatch()
	b.Set([]byte("t/x/a"), []byte("1"))
	if err := b.Commit(kv.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO folio_schema (version) VALUES ($1)`, pgkv.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err = pgkv.Open(ctx, t.TempDir(), dsn, pgkv.Options{})
	if !errors.Is(err, errs.Unavailable) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("open of a newer schema: %v, want an Unavailable error naming it", err)
	}
}

// TestBadDSN: a DSN that does not parse is refused without echoing it
// (it may hold a password).
func TestBadDSN(t *testing.T) {
	_, err := pgkv.Open(context.Background(), t.TempDir(), "postgres://folio:s3cret@[::1", pgkv.Options{})
	if !errors.Is(err, errs.Invalid) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("bad DSN: %v, want an Invalid error without the password", err)
	}
}

// BenchmarkCommit commits batches of 8 sets of 200 bytes, one at a time,
// on PostgreSQL and on Pebble, with Sync and without, and reports the
// commit latency's median and p99.
func BenchmarkCommit(b *testing.B) {
	c := pgtest.Start(b)
	engines := map[string]func(b *testing.B) *kv.DB{
		"postgres": func(b *testing.B) *kv.DB { return open(b, c.NewDatabase(b)) },
		"pebble": func(b *testing.B) *kv.DB {
			db, err := kv.Open(b.TempDir(), kv.Options{Create: true})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db
		},
	}
	for _, name := range []string{"postgres", "pebble"} {
		for _, m := range []kv.WriteMode{kv.Sync, kv.NoSync} {
			b.Run(fmt.Sprintf("%s/sync=%v", name, m), func(b *testing.B) {
				db := engines[name](b)
				val := bytes.Repeat([]byte("v"), 200)
				lat := make([]time.Duration, 0, b.N)
				for i := 0; b.Loop(); i++ {
					batch := db.NewBatch()
					for j := range 8 {
						batch.Set(fmt.Appendf(nil, "t/bench/%08d/%d", i, j), val)
					}
					start := time.Now()
					if err := batch.Commit(m); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
					batch.Close()
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}

// TestExclusive: an exclusive engine holds the store; a second exclusive
// open fails with kv.ErrLocked until the first is closed.
func TestExclusive(t *testing.T) {
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	ctx := context.Background()
	e1, err := pgkv.OpenEngine(ctx, dsn, pgkv.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pgkv.OpenEngine(ctx, dsn, pgkv.Options{Exclusive: true}); !errors.Is(err, kv.ErrLocked) {
		t.Fatalf("second exclusive open: %v, want kv.ErrLocked", err)
	}
	e1.Close()
	e2, err := pgkv.OpenEngine(ctx, dsn, pgkv.Options{Exclusive: true})
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	e2.Close()
}

// TestOutage: while the server is down an exclusive engine is failed
// (errs.Storage on writes and in Failure); once the server is back the
// engine serves again without being reopened, and what was committed
// before is there.
func TestOutage(t *testing.T) {
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	e, err := pgkv.OpenEngine(context.Background(), dsn, pgkv.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	db := kv.OpenEngine(t.TempDir(), e)
	defer db.Close()
	if err := db.Set([]byte("t/x/before"), []byte("1"), kv.Sync); err != nil {
		t.Fatal(err)
	}
	c.Kill(t)
	if err := db.Set([]byte("t/x/during"), []byte("1"), kv.Sync); !errors.Is(err, errs.Storage) {
		t.Fatalf("write while the server is down: %v, want errs.Storage", err)
	}
	waitFor(t, func() bool { return db.Failure() != nil })
	if err := db.Writable(); !errors.Is(err, errs.Storage) {
		t.Fatalf("Writable while down: %v", err)
	}
	c.Resume(t)
	waitFor(t, func() bool { return db.Failure() == nil })
	if err := db.Set([]byte("t/x/after"), []byte("1"), kv.Sync); err != nil {
		t.Fatalf("write after the server is back: %v", err)
	}
	for _, k := range []string{"t/x/before", "t/x/after"} {
		if _, err := db.Get([]byte(k)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, err := db.Get([]byte("t/x/during")); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("the write refused during the outage: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
