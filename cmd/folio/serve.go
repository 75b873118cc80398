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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/server"
	"github.com/urfave/cli/v2"
)

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

// storeFS is the filesystem the daemon's store lives on; nil means the
// operating system's. The daemon tests set it to inject disk faults.
var storeFS vfs.FS

// storeOptions are the store options of [storage] (docs/config.md).
func storeOptions(fc *config.Config, log *slog.Logger) kv.Options {
	o := kv.Options{Logger: log, FS: storeFS, MinFree: fc.Storage.MinFree, MaxStall: fc.Storage.MaxStall}
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
			"On a store without users it creates the admin user \"admin\" and prints its token once.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:7420", EnvVars: []string{"FOLIO_LISTEN"}, Usage: "address to listen on (host:port; port 0 picks a free one)"},
			&cli.StringFlag{Name: "data", Usage: "data directory (default: the global --data, ./folio-data)"},
			&cli.StringFlag{Name: "config", Usage: "config file (TOML; default: the global --config)"},
			&cli.BoolFlag{Name: "init", Usage: "create the store when the data directory has none"},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: shutdownGrace, Usage: "how long requests in flight may take to finish after SIGTERM (at most 8s keeps the exit within 10s)"},
			&cli.DurationFlag{Name: "storage-fail-grace", Value: storageFailGrace, Usage: "after a storage failure, how long the daemon answers 503 storage_failed before it exits non-zero"},
			&cli.StringFlag{Name: "log-format", Value: "text", EnvVars: []string{"FOLIO_LOG_FORMAT"}, Usage: "log format: text or json"},
			&cli.StringFlag{Name: "log-level", Value: "info", EnvVars: []string{"FOLIO_LOG_LEVEL"}, Usage: "log level: debug, info, warn, error"},
		},
		Action: cmdServe,
	})
}

// inherited returns flag name set on the command itself, or else its
// value in the enclosing (global) context.
func inherited(c *cli.Context, name string) string {
	for _, cc := range c.Lineage() {
		if v := cc.String(name); v != "" {
			return v
		}
	}
	return ""
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, exitf(exitUsage, "--log-level %q is not one of debug, info, warn, error", level)
	}
	o := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	}
	return nil, exitf(exitUsage, "--log-format %q is not one of text, json", format)
}

func cmdServe(c *cli.Context) error {
	if _, err := args(c, 0); err != nil {
		return err
	}
	dir := inherited(c, "data")
	log, err := newLogger(c.App.ErrWriter, c.String("log-format"), c.String("log-level"))
	if err != nil {
		return err
	}
	fc, err := config.Load(inherited(c, "config"), nil)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	listen := fc.Server.Listen
	if c.IsSet("listen") || listen == "" {
		listen = c.String("listen")
	}
	cfg := server.Config{Logger: log, Version: version,
		CheckpointIdle: fc.Checkpoint.Idle, CheckpointMax: fc.Checkpoint.Max,
		MaxFrame: fc.Limits.FrameBytes, MessagesPerSecond: float64(fc.Limits.MessagesPerSecond),
		MaxSubscriptions: fc.Limits.Subscriptions, AllowedOrigins: fc.Server.AllowedOrigins}
	ro := repo.Options{Limits: flowdoc.Limits{MaxBlocks: fc.Limits.DocMaxBlocks, MaxBytes: int(fc.Limits.DocMaxBytes)},
		KV: storeOptions(fc, log)}
	if c.Bool("init") {
		if err := repo.Init(dir); err != nil {
			return storeError(dir, err)
		}
	}
	r, err := repo.Open(dir, ro)
	if err != nil {
		if errors.Is(err, kv.ErrNotInitialized) {
			return exitf(exitUnavailable, "no folio store in %s: run `folio init --data %s` first, or start with `folio serve --init`", dir, dir)
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
	cfg.Repo = r
	cfg.Auth = auth.New(r.DB())
	sources := map[quota.Category]string{}
	for _, cat := range quota.Categories {
		rc, err := fc.AICategory(string(cat))
		if err != nil {
			return exitf(exitUsage, "%v", err)
		}
		sources[cat] = string(rc.Source)
	}
	ledger := quota.NewLedger(r.DB(), quota.LedgerOptions{Logger: log})
	cfg.Usage = quota.UsageHandler(ledger, sources)
	if cfg.Attrs, cfg.Reading, err = narrowAssistants(fc, r, ledger, log); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return exitf(exitUnavailable, "listen on %s: %v (another daemon running? choose another --listen)", listen, err)
	}
	// The first admin's token is printed only once, so only a daemon that
	// is about to serve creates it.
	if err := bootstrapAdmin(c, cfg.Auth); err != nil {
		ln.Close()
		return err
	}
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	url := "http://" + ln.Addr().String()
	if err := writeAddr(dir, url); err != nil {
		ln.Close()
		return exitf(exitError, "record the daemon address in %s: %v", dir, err)
	}
	defer removeAddr(dir, url)

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
		return exitf(exitError, "serve %s: %v", url, err)
	case <-r.DB().Failed():
		keepOpen = true // a failed store is never closed: see kv.DB.Close
		return failStop(log, srv, errc, dir, c.Duration("storage-fail-grace"), r.DB().Failure())
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
	if n := srv.Busy(); n > 0 {
		// Closing the store under a running request would crash it; every
		// synced write is durable already, so leave it to the OS.
		log.Warn("requests outlived the shutdown deadline; exiting without closing the store", "requests", n)
		keepOpen = true
		return nil
	}
	if err := closeRepo(); err != nil {
		log.Error("close the store", "err", err)
		return exitf(exitError, "close the store in %s: %v", dir, err)
	}
	if serr != nil {
		log.Warn("shutdown incomplete", "err", serr, "took", time.Since(start))
	} else {
		log.Info("stopped", "took", time.Since(start))
	}
	return nil
}

// failStop ends the daemon after its store failed: every request is
// answered 503 storage_failed (those in flight too: their writes fail at
// once), /healthz says why, sync sessions close with 4006, and after
// grace the process exits non-zero so that a supervisor restarts it.
// Everything acknowledged before is on disk.
func failStop(log *slog.Logger, srv *server.Server, errc <-chan error, dir string, grace time.Duration, failure error) error {
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
	log.Error("stopped after the storage failure; start the daemon again once the disk is fixed", "took", time.Since(start).Round(time.Millisecond))
	return exitf(exitUnavailable, "storage failed in %s: %v; the daemon stopped (every acknowledged write is on disk); fix the disk and start it again", dir, cause)
}

// bootstrapAdmin creates the first admin on a store without users and
// prints its token once; only its hash is stored.
func bootstrapAdmin(c *cli.Context, as *auth.Store) error {
	n, err := as.Count(c.Context)
	if err != nil {
		return exitf(exitError, "read users: %v", err)
	}
	if n > 0 {
		return nil
	}
	_, it, err := as.AddUser(c.Context, "admin", true)
	if err != nil {
		code := exitError
		if k := errs.KindOf(err); k == errs.StorageFull || k == errs.Storage {
			code = exitUnavailable // a disk below [storage] min_free, say
		}
		return exitf(code, "create the first admin user: %v", err)
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
