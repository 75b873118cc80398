package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/urfave/cli/v2"
)

// Exit codes are derived from the error's kind (package errs, one table
// for HTTP, WebSocket and the CLI); docs/api.md and docs/cli.md list them.
const (
	exitError       = errs.ExitError
	exitUsage       = errs.ExitUsage
	exitNotFound    = errs.ExitNotFound
	exitConflict    = errs.ExitConflict
	exitInvalid     = errs.ExitInvalid
	exitUnavailable = errs.ExitUnavailable
	exitProblems    = errs.ExitProblems
	exitDenied      = errs.ExitDenied
	exitLimited     = errs.ExitLimited
)

// exitCode is the exit code of err: 0 for nil, else its kind's.
func exitCode(err error) int {
	if err == nil {
		return errs.ExitOK
	}
	return errs.KindOf(err).ExitCode()
}

// usagef is a usage error: bad flags or arguments (exit 2).
func usagef(format string, args ...any) error { return errs.E(errs.Usage, format, args...) }

var (
	// dataFlag and serverFlag read their environment variables in
	// dataDir and serverURL, so that a --data given on the command line
	// wins over FOLIO_SERVER from the environment.
	dataFlag   = &cli.StringFlag{Name: "data", Usage: "data `DIR`, opened directly (default ./folio-data; env FOLIO_DATA)"}
	serverFlag = &cli.StringFlag{Name: "server", Usage: "`URL` of a running folio daemon, instead of --data (env FOLIO_SERVER; an explicit --data wins over it)"}
	tokenFlag  = &cli.StringFlag{Name: "token", Usage: "API token for --server", EnvVars: []string{"FOLIO_TOKEN"}}
	configFlag = &cli.StringFlag{Name: "config", Usage: "config file (TOML)", EnvVars: []string{"FOLIO_CONFIG"}}
)

// dataDir is the data directory: --data (global, or a verb's own), else
// FOLIO_DATA, else ./folio-data.
func dataDir(c *cli.Context) string {
	if v := inherited(c, "data"); v != "" {
		return v
	}
	if v := os.Getenv("FOLIO_DATA"); v != "" {
		return v
	}
	return "./folio-data"
}

// serverURL is the daemon a verb talks to, "" for direct mode: --server
// from the command line, else FOLIO_SERVER unless --data was given on the
// command line.
func serverURL(c *cli.Context) string {
	if v := inherited(c, "server"); v != "" {
		return v
	}
	if inherited(c, "data") != "" {
		return ""
	}
	return os.Getenv("FOLIO_SERVER")
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

func formatFlag(def string, allowed ...string) *cli.StringFlag {
	return &cli.StringFlag{Name: "format", Value: def, Usage: "output format: " + strings.Join(allowed, ", ")}
}

func newApp() *cli.App {
	app := &cli.App{
		Name:                 "folio",
		Usage:                "a versioned content repository for block-structured documents",
		Version:              version,
		Flags:                []cli.Flag{dataFlag, serverFlag, tokenFlag, configFlag},
		EnableBashCompletion: true,
		HideHelpCommand:      true,
		ExitErrHandler:       func(*cli.Context, error) {}, // run prints and exits
		OnUsageError:         onUsageError,
		Commands:             coreCommands(),
	}
	app.Commands = append(app.Commands, extraCommands...)
	for _, c := range app.Commands {
		usageErrors(c)
	}
	return app
}

// onUsageError makes a flag that does not parse a usage error (exit 2).
func onUsageError(c *cli.Context, err error, _ bool) error {
	return usagef("%v (see %s --help)", err, cmdName(c))
}

// cmdName is the command c runs as typed: "folio doc new".
func cmdName(c *cli.Context) string {
	var names []string
	for _, cc := range c.Lineage() {
		if cc.Command != nil && cc.Command.Name != "" && cc.Command.Name != c.App.Name && cc.Command.Name != "help" {
			names = append([]string{cc.Command.Name}, names...)
		}
	}
	return strings.Join(append([]string{"folio"}, names...), " ")
}

// usageErrors makes every way to call cmd wrongly a usage error: flags
// that do not parse, and required flags that are missing (checked by the
// action, since urfave/cli reports those as plain errors).
func usageErrors(cmd *cli.Command) {
	cmd.OnUsageError = onUsageError
	var required []string
	for _, f := range cmd.Flags {
		if sf, ok := f.(*cli.StringFlag); ok && sf.Required {
			sf.Required = false
			required = append(required, sf.Name)
		}
	}
	if action := cmd.Action; len(required) > 0 && action != nil {
		cmd.Action = func(c *cli.Context) error {
			for _, name := range required {
				if !c.IsSet(name) {
					return usagef("%s needs --%s (see %s --help)", cmdName(c), name, cmdName(c))
				}
			}
			return action(c)
		}
	}
	for _, sub := range cmd.Subcommands {
		usageErrors(sub)
	}
}

// extraCommands are registered by the files that define them (init funcs).
var extraCommands []*cli.Command

// execute runs the CLI with args (without the program name), printing to
// stdout and stderr, and returns the exit code. An error is one line on
// stderr, "folio: …".
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp()
	app.Writer, app.ErrWriter = stdout, stderr
	var unknown, parent string
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown, parent = name, cmdName(c)
	}
	err := app.RunContext(ctx, interspersed(app, append([]string{"folio"}, args...)))
	if err == nil && unknown != "" {
		err = usagef("%s has no command %q; `%s --help` lists them", parent, unknown, parent)
	}
	if err == nil {
		return 0
	}
	var ec cli.ExitCoder
	if errs.KindOf(err) == errs.Internal && errors.As(err, &ec) {
		err = usagef("%v (see folio --help)", err)
	}
	if errors.Is(err, context.Canceled) && errs.KindOf(err) == errs.Canceled {
		err = errs.E(errs.Canceled, "interrupted")
	}
	fmt.Fprintln(stderr, "folio:", termText(err.Error()))
	return exitCode(err)
}

// notice prints a message that is not an error (a token shown once, a
// note about what was done) on stderr, so that stdout stays the result.
func notice(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, "note: "+format+"\n", args...)
}

// actor is who the CLI acts as in direct mode.
func actor() string {
	if u := os.Getenv("FOLIO_USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "local"
}

// openRepo opens the data directory for a direct-mode command.
func openRepo(c *cli.Context) (*repo.Repo, error) {
	return openRepoWith(c, repo.Options{})
}

// openRepoWith opens the data directory with o, whose request and
// document limits, when o leaves them zero, are the configuration's: the
// daemon and direct mode enforce the same ones, so a request gets the same
// answer whichever way it comes in.
func openRepoWith(c *cli.Context, o repo.Options) (*repo.Repo, error) {
	dir := dataDir(c)
	fc, err := config.Load(inherited(c, "config"), nil)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err)
	}
	r, err := openStore(c.Context, dir, withLimits(o, fc))
	if err != nil {
		return nil, storeError(dir, err)
	}
	return r, nil
}

// repoOptions are the content service's limits from the configuration.
func repoOptions(fc *config.Config) repo.Options {
	return withLimits(repo.Options{}, fc)
}

// withLimits fills the limits o leaves zero from the configuration.
func withLimits(o repo.Options, fc *config.Config) repo.Options {
	if o.Limits == (flowdoc.Limits{}) {
		o.Limits = flowdoc.Limits{MaxBlocks: fc.Limits.DocMaxBlocks, MaxBytes: int(fc.Limits.DocMaxBytes)}
	}
	if o.MaxChanges == 0 {
		o.MaxChanges = fc.Limits.SaveMaxChanges
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = fc.Limits.RequestMaxRuns
	}
	if o.MaxAsset == 0 {
		o.MaxAsset = fc.Limits.AssetSize
	}
	return o
}

// openStore opens the store in dir. The first time a store written before
// users had ids is opened, its document owners (user names) become user
// ids (repo.Repo.MigrateOwners); afterwards that costs one read.
func openStore(ctx context.Context, dir string, o repo.Options) (*repo.Repo, error) {
	r, err := repo.Open(dir, o)
	if err != nil {
		return nil, err
	}
	if _, err := r.MigrateOwners(ctx, auth.New(r.DB())); err != nil {
		r.Close()
		return nil, err
	}
	// Direct-mode writes keep suggestions true to the article as the
	// daemon's do: a save that changes a block a pending suggestion
	// watches conflicts it at once.
	if err := assistant.WatchSuggestions(ctx, r, slog.New(slog.DiscardHandler)); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// userID returns the id of the user named name in r's store; "" when no
// user has that name.
func userID(ctx context.Context, r *repo.Repo, name string) (string, error) {
	u, err := auth.New(r.DB()).GetUser(ctx, name)
	if errors.Is(err, auth.ErrNotFound) {
		return "", nil
	}
	return u.ID, err
}

// storeError explains in one line why data directory dir could not be
// opened or created, and what to do.
func storeError(dir string, err error) error {
	switch {
	case errors.Is(err, kv.ErrNotInitialized):
		return errs.E(errs.Unavailable, "no folio store in %s: run `folio init --data %s` first (or set --data / FOLIO_DATA)", dir, dir)
	case errors.Is(err, kv.ErrLocked):
		if addr := daemonAddress(dir); addr != "" {
			return errs.E(errs.Unavailable, "data directory %s is held by a running folio daemon at %s: use --server %s (with --token / FOLIO_TOKEN)", dir, addr, addr)
		}
		return errs.E(errs.Unavailable, "data directory %s is locked by another folio process; stop it or use --server URL", dir)
	case errs.KindOf(err) == errs.StorageFull, errs.KindOf(err) == errs.Storage:
		return err // one line naming the directory, the free space and what to do
	}
	if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
		return unusable("data directory %s is a file, not a directory: give --data (or FOLIO_DATA) a directory", dir)
	}
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return unusable("data directory %s: a part of the path is a file, not a directory: give --data (or FOLIO_DATA) a directory", dir)
	case errors.Is(err, fs.ErrPermission):
		return unusable("data directory %s is not writable (permission denied): fix its permissions, or give --data (or FOLIO_DATA) a directory you may write to", dir)
	case errors.Is(err, syscall.EROFS):
		return unusable("data directory %s is on a read-only file system: give --data (or FOLIO_DATA) a writable directory", dir)
	}
	if errs.KindOf(err) != errs.Internal {
		return err
	}
	return fmt.Errorf("open the data directory %s: %w", dir, err)
}

// unusable is a data directory that cannot be used as it is: retrying
// does not help, changing the path or its permissions does.
func unusable(format string, args ...any) error {
	e := errs.E(errs.Unavailable, format, args...)
	e.NoRetry = true
	return e
}

// daemonAddress reads the address a running daemon recorded in dir.
func daemonAddress(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, addrFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
