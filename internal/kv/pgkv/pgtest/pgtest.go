package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running private cluster.
type Cluster struct {
	dir   string // socket directory and parent of the data directory
	port  int
	bin   string
	cred  *syscall.Credential // nil: the current user
	fsync bool
	n     atomic.Int64
}

// BinDir returns the newest /usr/lib/postgresql/<version>/bin holding
// initdb, or "" when there is none.
func BinDir() string {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		return ""
	}
	slices.SortFunc(m, func(a, b string) int { return version(a) - version(b) })
	return filepath.Dir(m[len(m)-1])
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// Start starts a cluster for tb and stops and removes it when tb ends.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	if BinDir() == "" {
		msg := "PostgreSQL NOT FOUND (no /usr/lib/postgresql/*/bin/initdb): the PostgreSQL engine is NOT TESTED; apt-get install postgresql"
		if required() {
			tb.Fatal(msg + " (CI=true or FOLIO_REQUIRE_POSTGRES is set: this must not be skipped)")
		}
		tb.Skip(msg)
	}
	c, stop, err := start(true)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := stop(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

func required() bool { return os.Getenv("CI") == "true" || os.Getenv("FOLIO_REQUIRE_POSTGRES") != "" }

// start initializes and starts a cluster in a new temporary directory;
// stop stops it and removes the directory. With fsync off the server
// does not flush its WAL (for suites that never crash the server).
func start(fsync bool) (c *Cluster, stop func() error, err error) {
	dir, err := os.MkdirTemp("", "folio-pg-")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	cred, err := asUser(dir)
	if err != nil {
		return nil, nil, err
	}
	c = &Cluster{dir: dir, port: port, bin: BinDir(), cred: cred, fsync: fsync}
	if err := c.run("initdb", "-D", c.data(), "-U", "folio", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, nil, err
	}
	if err := c.start(); err != nil {
		return nil, nil, err
	}
	return c, func() error {
		defer os.RemoveAll(dir)
		return c.run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", c.data())
	}, nil
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) start() error {
	fsync := "on"
	if !c.fsync {
		fsync = "off"
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses='' -c fsync=%s -c synchronous_commit=on -c max_connections=400", c.port, c.dir, fsync)
	return c.run("pg_ctl", "start", "-w", "-t", "60", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts)
}

// run runs one of the server's programs as the cluster's owner.
func (c *Cluster) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	cmd.Dir = c.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: %s %q: %v\n%s", name, args, err, out)
	}
	return nil
}

// Crash stops the server as a power cut would look to it (pg_ctl stop
// -m immediate: no checkpoint, no clean shutdown; the next start replays
// the WAL) and starts it again.
func (c *Cluster) Crash(tb testing.TB) {
	tb.Helper()
	if err := c.run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", c.data()); err != nil {
		tb.Fatal(err)
	}
	if err := c.start(); err != nil {
		tb.Fatal(err)
	}
}

// asUser makes dir usable by the cluster's owner and returns the
// credential to run the server as: nobody when we are root, nil (the
// current user) otherwise.
func asUser(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and there is no user nobody to run PostgreSQL as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort returns a TCP port number nothing listens on now; the server
// uses it only to name its socket, so a later taker cannot collide.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// DSN is the connection string of database db in the cluster.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=folio dbname=%s sslmode=disable", c.dir, c.port, db)
}

// NewDatabase creates an empty database and returns its DSN.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	dsn, err := c.newDatabase()
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

func (c *Cluster) newDatabase() (string, error) {
	name := fmt.Sprintf("folio_%d", c.n.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return c.DSN(name), nil
}

// Kill stops the server as Crash does and leaves it stopped; Resume
// starts it again.
func (c *Cluster) Kill(tb testing.TB) {
	tb.Helper()
	if err := c.run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", c.data()); err != nil {
		tb.Fatal(err)
	}
}

// Resume starts a server stopped by Kill.
func (c *Cluster) Resume(tb testing.TB) {
	tb.Helper()
	if err := c.start(); err != nil {
		tb.Fatal(err)
	}
}
