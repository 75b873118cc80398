package pgtest

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	_ "github.com/foliodev/folio/internal/kv/pgkv" // registers kv.EnginePostgres
)

// EngineVar is the environment variable that moves the store of the
// suites that honour it (internal/repo, internal/repo/publish,
// assistant, persona) from their default engine to another:
// FOLIO_TEST_ENGINE=postgres runs them on PostgreSQL.
const EngineVar = "FOLIO_TEST_ENGINE"

// OnPostgres reports whether FOLIO_TEST_ENGINE asks for PostgreSQL.
func OnPostgres() bool { return os.Getenv(EngineVar) == kv.EnginePostgres }

var shared struct {
	mu    sync.Mutex
	main  bool // Main runs the tests
	fsync bool // the cluster flushes its WAL (benchmarks)
	c     *Cluster
	stop  func() error
	err   error             // the cluster's start failed
	dsns  map[string]string // data directory -> its database
}

// Main runs a package's tests (call it from TestMain). With
// FOLIO_TEST_ENGINE=postgres the first Store starts one cluster that the
// package's stores share, each in a database of its own, and Main stops
// it after the tests (a test binary run as a child process that opens
// no such store starts none). The cluster runs with fsync off for tests
// (they test Folio on the engine, not the server's durability, which the
// engine's own tests check with fsync on) and on for benchmarks.
func Main(m *testing.M) int {
	if !OnPostgres() {
		return m.Run()
	}
	if BinDir() == "" {
		fmt.Fprintln(os.Stderr, "pgtest: FOLIO_TEST_ENGINE=postgres but PostgreSQL is NOT FOUND (no /usr/lib/postgresql/*/bin/initdb)")
		return 1
	}
	flag.Parse()
	shared.mu.Lock()
	shared.main, shared.dsns = true, map[string]string{}
	// Benchmarks measure what a deployment gets: a server that flushes
	// its WAL.
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		shared.fsync = true
	}
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stop != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Store returns o for a test store in data directory dir: o itself
// unless FOLIO_TEST_ENGINE=postgres, and then o on PostgreSQL in the
// database of dir (made on first use, so that reopening dir reopens its
// store). The package's TestMain must call Main.
func Store(tb testing.TB, dir string, o kv.Options) kv.Options {
	tb.Helper()
	if !OnPostgres() {
		return o
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.main {
		tb.Fatal("pgtest: FOLIO_TEST_ENGINE=postgres, but the package's TestMain does not call pgtest.Main")
	}
	if shared.c == nil && shared.err == nil {
		shared.c, shared.stop, shared.err = start(shared.fsync)
	}
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	dsn, ok := shared.dsns[dir]
	if !ok {
		var err error
		if dsn, err = shared.c.newDatabase(); err != nil {
			tb.Fatal(err)
		}
		shared.dsns[dir] = dsn
	}
	return kv.Options{Engine: kv.EnginePostgres, DSN: dsn, MaxConns: 4, Logger: o.Logger}
}
