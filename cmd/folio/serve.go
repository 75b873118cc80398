package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/internal/server"
	"github.com/urfave/cli/v2"
)

// The daemon's content service is the repository.
var _ server.Content = (*repo.Repo)(nil)

// shutdownGrace is the default bound of a graceful shutdown: with the
// second the server allows stuck handlers after it, the process exits
// within 10 s of SIGTERM even when a client holds a request open.
const shutdownGrace = 8 * time.Second

// addrFile is where a running daemon records its URL in the data
// directory; storeError reads it to suggest --server.
const addrFile = "daemon.addr"

// storageFailGrace is how long a daemon whose store failed keeps
// answering 503 storage_failed (and /healthz with the cause) before it
// exits: long enough for requests in flight to be answered and for load
// balancers and clients to see why, short enough for a prompt restart.
const storageFailGrace = 2 * time.Second

// runnerGrace bounds the task runner's stop after the HTTP shutdown:
// handlers are cancelled at once, and a model call stops with its
// context, so this is a backstop that keeps the exit within 10 s.
const runnerGrace = time.Second

// storeFS is the filesystem the daemon's store lives on; nil means the
// operating system's. The daemon tests set it to inject disk faults.
var storeFS kv.FS

// storeOptions are the store options of [storage] (docs/config.md).
func storeOptions(fc *config.Config, log *slog.Logger) kv.Options {
	o := kv.Options{Logger: log, FS: storeFS, MinFree: fc.Storage.MinFree, MaxStall: fc.Storage.MaxStall, CacheSize: fc.Storage.Cache}
	if o.MinFree == 0 {
		o.MinFree = -1 // no reserve
	}
	if o.MaxStall == 0 {
		o.MaxStall = -1 // never
	}
	return o
}

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "serve",
		Usage:     "run the daemon: HTTP API, WebSocket sync, metrics",
		ArgsUsage: " ",
		Description: "Serves the data directory over HTTP until SIGTERM or SIGINT, then shuts down gracefully.\n" +
			"On first run it creates the store; on a store without users it creates the admin user \"admin\" and prints its token once.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7420", EnvVars: []string{"FOLIO_LISTEN"}, Usage: "address to listen on (host:port; port 0 picks a free one)"},
			&cli.StringFlag{Name: "data", Usage: "data directory (default: the global --data, ./folio-data)"},
			&cli.StringFlag{Name: "config", Usage: "config file (TOML; default: the global --config)"},
			&cli.BoolFlag{Name: "init", Hidden: true, Usage: "no longer needed: serve creates the store on first run"},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: shutdownGrace, Usage: "how long requests in flight may take to finish after SIGTERM (at most 8s keeps the exit within 10s)"},
			&cli.DurationFlag{Name: "storage-fail-grace", Value: storageFailGrace, Usage: "after a storage failure, how long the daemon answers 503 storage_failed before it exits non-zero"},
			&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"FOLIO_LOG_FORMAT"}, Usage: "log format: text or json"},
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"FOLIO_LOG_LEVEL"}, Usage: "log level: debug, info, warn, error"},
		},
		Action: cmdServe,
	})
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q is not one of debug, info, warn, error", level)
	}
	o := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	}
	return nil, usagef("--log-format %q is not one of text, json", format)
}

func cmdServe(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	dir := dataDir(c)
	log, err := newLogger(c.App.ErrWriter, c.String("log-format"), c.String("log-level"))
	if err != nil {
		return err
	}
	fc, err := config.Load(inherited(c, "config"), nil)
	if err != nil {
		return errs.Wrap(errs.Invalid, err)
	}
	listen := fc.Server.Listen
	if c.IsSet("listen") || listen == "" {
		listen = c.String("listen")
	}
	if err := checkListen(listen); err != nil {
		return err
	}
	cfg := server.Config{Logger: log, Version: version,
		MaxFrame: fc.Limits.FrameBytes, MessagesPerSecond: float64(fc.Limits.MessagesPerSecond),
		MaxSubscriptions: fc.Limits.Subscriptions, AllowedOrigins: fc.Server.AllowedOrigins,
		MaxConns: capOf(fc.Server.MaxConnections), MaxConnsPerAddr: capOf(fc.Server.MaxConnectionsPerAddress),
		MaxConnsPerToken: capOf(fc.Server.MaxConnectionsPerToken), MaxConnsPerUser: capOf(fc.Server.MaxConnectionsPerUser),
		AdminConns:        capOf(fc.Server.AdminConnections),
		SiteURL:           fc.Site.URL,
		ReadHeaderTimeout: fc.Server.ReadHeaderTimeout, ReadTimeout: fc.Server.ReadTimeout, IdleTimeout: fc.Server.IdleTimeout,
		SiteTitle: fc.Site.Title, SiteAuthor: fc.Site.Author}
	ro := repoOptions(fc)
	ro.KV = storeOptions(fc, log)
	ro = withEngine(ro, fc, log)
	ro.CheckpointIdle, ro.CheckpointMax = fc.Checkpoint.Idle, fc.Checkpoint.Max
	ro.Logger = log.With("part", "repo")
	var lowDisk lowDiskStart
	r, err := openServed(c.Context, dir, ro, log, &lowDisk)
	if errors.Is(err, kv.ErrNotInitialized) {
		// The first run creates the store.
		if err = repo.Init(dir); err == nil {
			// Said before the token and the address, so that whoever
			// waits for those has read this line too.
			fmt.Fprintf(c.App.Writer, "created a new folio store in %s\n", dir)
			r, err = openServed(c.Context, dir, ro, log, &lowDisk)
		}
	}
	if err != nil {
		if errors.Is(err, kv.ErrLocked) && fc.Storage.Engine == config.EnginePostgres {
			return errs.E(errs.Unavailable, "%s: the store is already served by another folio daemon: stop that one first (several daemons on one database are not supported yet)", errs.Message(err))
		}
		if errors.Is(err, kv.ErrLocked) {
			if addr := daemonAddress(dir); addr != "" {
				return errs.E(errs.Unavailable, "data directory %s is already served by the folio daemon at %s: stop that one first (SIGTERM), or serve another directory with --data", dir, addr)
			}
			return errs.E(errs.Unavailable, "data directory %s is locked by another folio process: stop it first, or serve another directory with --data", dir)
		}
		return storeError(dir, err)
	}
	closeRepo := sync.OnceValue(r.Close)
	keepOpen := false // set when a request outlived the shutdown
	defer func() {
		if !keepOpen {
			closeRepo()
		}
	}()
	cfg.Content = r
	cfg.Auth = auth.New(r.DB())
	cfg.Publish = publish.New(r, nil)
	ledger := quota.NewLedger(r.DB(), quota.LedgerOptions{})
	if _, err := usageReport(fc, ledger, 1); err != nil {
		return err
	}
	if adv := fc.LegacyAdvice(); len(adv) > 0 {
		log.Warn("ai settings from the legacy shared [ai] section", "advice", strings.Join(adv, "; "))
	}
	cfg.Usage = func(days int) (*quota.Report, error) { return usageReport(fc, ledger, days) }
	gw, err := assistant.Open(fc, r.DB(), ledger, nil)
	if err != nil {
		return errs.E(errs.Invalid, "model access: %w", err)
	}
	cfg.AICheck = gw.Check
	if cfg.Attrs, cfg.Reading, err = narrowAssistants(fc, gw, ledger, log); err != nil {
		return err
	}
	// The writing assistant: its runner shares the repository's hub, and
	// the service's change hook is installed before anything is served.
	// Personas, with the memory index beside the store (rebuilt here when
	// missing, corrupt or of an old mapping version).
	ps, err := openPersonas(c.Context, r, dir, fc, false, log)
	if err != nil {
		return err
	}
	// The index's applier writes to the store: it stops before the store
	// closes, on the shutdown path and on every early return.
	closePersonas := sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), runnerGrace)
		defer cancel()
		if err := ps.close(ctx); err != nil {
			log.Warn("memory index: close", "err", err)
		}
	})
	defer closePersonas()
	cfg.Personas, cfg.PersonaSources, cfg.MemoryIndex = ps.svc, ps.src, ps.idx
	// The document search index beside the store, brought up to date
	// from the outbox (built when missing); its applier writes to the
	// store, so it stops before the store closes.
	sx, err := openSearch(c.Context, r, cfg.Publish, dir, false, log.With("part", "search"))
	if err != nil {
		return err
	}
	closeSearch := sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), runnerGrace)
		defer cancel()
		if err := sx.Close(ctx); err != nil {
			log.Warn("search index: close", "err", err)
		}
	})
	defer closeSearch()
	cfg.Search = sx
	runner, svc, err := newAssistant(c.Context, r, fc, ledger, gw, ps, log)
	if err != nil {
		return err
	}
	cfg.Assistant = svc
	stopRunner := func(ctx context.Context) error {
		if err := runner.Close(ctx); err != nil {
			log.Warn("task runner: handlers still running at the deadline; the store is left open", "err", err)
			return err
		}
		return nil
	}
	defer func() {
		// An early return before the shutdown path: nothing ran yet.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		runner.Close(ctx)
	}()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return listenError(listen, err)
	}
	// The first admin's token is printed only once, so only a daemon that
	// is about to serve creates it.
	if err := bootstrapAdmin(c, cfg.Auth, &lowDisk); err != nil {
		ln.Close()
		return err
	}
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	// Runs interrupted by an earlier crash go back to queued (each with a
	// recovered_after_restart event) before anything is dispatched.
	if err := runner.Start(c.Context); err != nil {
		ln.Close()
		return errs.E(errs.Internal, "start the task runner: %v", err)
	}
	lowDisk.tasks = runner.RecoveryWaiting()
	lowDisk.report(c.Context, r.DB(), log)
	url := "http://" + ln.Addr().String()
	if err := writeAddr(dir, url); err != nil {
		ln.Close()
		return errs.E(errs.Internal, "record the daemon address in %s: %v", dir, err)
	}
	defer removeAddr(dir, url)

	if fc.Server.DebugListen != "" {
		stopDebug, err := serveDebug(fc.Server.DebugListen, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopDebug()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(c.App.Writer, "folio daemon listening on %s (data %s)\n", url, dir)
	fmt.Fprintf(c.App.Writer, "  HTTP API:  %s/v1   (Authorization: Bearer <token>; docs/api.md)\n", url)
	fmt.Fprintf(c.App.Writer, "  sync:      ws://%s/v1/sync\n", ln.Addr().String())
	fmt.Fprintf(c.App.Writer, "  health:    %s/healthz   metrics: %s/metrics\n", url, url)
	fmt.Fprintf(c.App.Writer, "  CLI:       FOLIO_SERVER=%s FOLIO_TOKEN=<token> folio doc list\n", url)
	log.Info("listening", "url", url, "data", dir, "version", version)

	select {
	case <-c.Context.Done():
	case err := <-errc:
		return errs.E(errs.Internal, "serve %s: %v", url, err)
	case <-r.DB().Failed():
		keepOpen = true // a failed store is never closed: see kv.DB.Close
		return failStop(log, srv, stopRunner, errc, dir, c.Duration("storage-fail-grace"), r.DB().Failure())
	}
	// A second signal kills the process at once.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	grace := c.Duration("shutdown-timeout")
	log.Info("shutting down", "grace", grace)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	serr := srv.Shutdown(ctx)
	<-errc
	// Then the runner, in reverse order of start: running tasks are
	// cancelled and requeued without spending an attempt (interrupted);
	// the next start runs them again.
	rctx, rcancel := context.WithTimeout(context.Background(), runnerGrace)
	defer rcancel()
	rerr := stopRunner(rctx)
	if n := srv.Busy(); n > 0 || rerr != nil {
		// Closing the store under a running request or task would crash
		// it; every synced write is durable already, so leave it to the OS.
		log.Warn("requests or tasks outlived the shutdown deadline; exiting without closing the store", "requests", n)
		keepOpen = true
		return nil
	}
	closePersonas()
	closeSearch()
	if err := closeRepo(); err != nil {
		log.Error("close the store", "err", err)
		return errs.E(errs.Internal, "close the store in %s: %v", dir, err)
	}
	if serr != nil {
		log.Warn("shutdown incomplete", "err", serr, "took", time.Since(start))
	} else {
		log.Info("stopped", "took", time.Since(start))
	}
	return nil
}

// checkListen refuses an address that cannot be listened on as a usage
// error, before anything is opened.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--listen %q: want host:port, e.g. 127.0.0.1:7420 (port 0 picks a free one)", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		if _, err := net.LookupPort("tcp", port); err == nil {
			return nil // a service name
		}
	}
	if err != nil || n < 0 || n > 65535 {
		return usagef("--listen %q: the port must be a number from 0 to 65535", addr)
	}
	return nil
}

// listenError explains why the daemon could not listen on addr.
func listenError(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return errs.E(errs.Unavailable, "listen on %s: the address is in use (another folio daemon, or another program): stop it, or choose another --listen", addr)
	case errors.Is(err, syscall.EACCES):
		return errs.E(errs.Forbidden, "listen on %s: permission denied (ports below 1024 need privileges): choose another --listen, e.g. 127.0.0.1:7420", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return usagef("listen on %s: this machine has no such address: choose one of its addresses, e.g. 127.0.0.1:7420", addr)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return usagef("listen on %s: unknown host %q: give an IP address or a resolvable name", addr, dnsErr.Name)
	}
	return errs.E(errs.Unavailable, "listen on %s: %v", addr, err)
}

// capOf turns a configured connection cap (0: none) into server.Config's
// (negative: none; 0 would be the default).
func capOf(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// failStop ends the daemon after its store failed: every request is
// answered 503 storage_failed (those in flight too: their writes fail at
// once), /healthz says why, sync sessions close with 4006, and after
// grace the process exits non-zero so that a supervisor restarts it.
// Everything acknowledged before is on disk.
func failStop(log *slog.Logger, srv *server.Server, stopRunner func(context.Context) error, errc <-chan error, dir string, grace time.Duration, failure error) error {
	cause := errors.Unwrap(failure)
	if cause == nil {
		cause = failure
	}
	log.Error("the store failed: answering 503 storage_failed, then exiting", "grace", grace, "cause", cause.Error())
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.FailStop(ctx); err != nil {
		log.Warn("sync sessions cut at the end of the grace period", "err", err)
	}
	<-ctx.Done() // keep answering 503 (and /healthz) until the grace ends
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	srv.Shutdown(sctx)
	<-errc
	stopRunner(sctx) // its writes fail at once; what it acknowledged is on disk
	log.Error("stopped after the storage failure; start the daemon again once the disk is fixed", "took", time.Since(start).Round(time.Millisecond))
	return errs.E(errs.Storage, "storage failed in %s: %v; the daemon stopped (every acknowledged write is on disk); fix the disk and start it again", dir, cause)
}

// bootstrapAdmin creates the first admin on a store without users and
// prints its token once; only its hash is stored. The write is small and
// made once, so it dips into the disk's reserve when it must
// (auth.Store.AddFirstAdmin).
func bootstrapAdmin(c *cli.Context, as *auth.Store, low *lowDiskStart) error {
	n, err := as.Count(c.Context)
	if err != nil {
		return errs.E(errs.Internal, "read users: %v", err)
	}
	if n > 0 {
		return nil
	}
	_, it, err := as.AddFirstAdmin(c.Context, "admin")
	if err == nil {
		low.admin = true
	}
	if err != nil {
		return fmt.Errorf("create the first admin user: %w", err)
	}
	w := c.App.Writer
	fmt.Fprintln(w, "created the first user: admin (an admin). Its token is shown only now; store it:")
	fmt.Fprintf(w, "  FOLIO_TOKEN=%s\n", it.Secret)
	fmt.Fprintln(w, "  (add authors with `folio user add NAME`; revoke with `folio token revoke "+it.Prefix()+"`)")
	return nil
}

// writeAddr records url in dir/daemon.addr durably (temp file, sync,
// rename, sync the directory).
func writeAddr(dir, url string) error {
	return kv.WriteFileSync(filepath.Join(dir, addrFile), []byte(url+"\n"))
}

// removeAddr removes dir/daemon.addr when it still names url.
func removeAddr(dir, url string) {
	p := filepath.Join(dir, addrFile)
	b, err := os.ReadFile(p)
	if err != nil || strings.TrimSpace(string(b)) != url {
		return
	}
	_ = os.Remove(p)
}
