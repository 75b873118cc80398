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
	"slices"
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

// onUsageError makes a flag that does not parse a usage error (exit 2),
// with the flag the user probably meant when one is close.
func onUsageError(c *cli.Context, err error, _ bool) error {
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		flags := c.App.Flags
		if c.Command != nil && c.Command.Name != "" {
			flags = append(slices.Clip(c.Command.Flags), c.App.Flags...)
		}
		if s := suggestFlag(flags, strings.TrimLeft(name, "-")); s != "" {
			return usagef("%s has no flag %s; did you mean %s? (see %s --help)", cmdName(c), name, s, cmdName(c))
		}
	}
	return usagef("%v (see %s --help)", err, cmdName(c))
}

// completeFlag asks for the words that may come next instead of running
// the verb (urfave/cli's shell completion); it must stay last.
const completeFlag = "--generate-bash-completion"

// commandLine is what urfave/cli parses for args: `help VERB` read as
// `VERB --help`, flags moved in front of the arguments.
func commandLine(app *cli.App, args []string) []string {
	complete := len(args) > 0 && args[len(args)-1] == completeFlag
	if complete {
		args = args[:len(args)-1]
	}
	line := interspersed(app, helpVerb(append([]string{"folio"}, args...)))
	if complete {
		line = append(line, completeFlag)
	}
	return line
}

// helpVerb turns `folio help VERB…` into `folio VERB… --help`, as git
// reads `git help VERB`; `folio help` alone is `folio --help`.
func helpVerb(args []string) []string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args
		}
		if strings.HasPrefix(a, "-") {
			if !strings.Contains(a, "=") && a != "--help" && a != "-h" && a != "--version" && a != "-v" {
				i++ // a global flag's value
			}
			continue
		}
		if a != "help" {
			return args
		}
		out := append(slices.Clip(args[:i]), args[i+1:]...)
		return append(out, "--help")
	}
	return args
}

// suggestCommand is the name among cmds closest to a mistyped one, ""
// when none is close (a typo, a swap, a missing or extra letter).
func suggestCommand(cmds []*cli.Command, typed string) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return closest(names, typed)
}

// suggestFlag is the flag among flags closest to a mistyped name, with
// its dashes.
func suggestFlag(flags []cli.Flag, typed string) string {
	var names []string
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) > 1 {
				names = append(names, n)
			}
		}
	}
	if s := closest(names, typed); s != "" {
		return "--" + s
	}
	return ""
}

// closest is the name at the smallest edit distance from typed, when
// that distance is small for its length (at most 1 for up to 4
// letters, 2 beyond) or typed is its prefix; "" otherwise.
func closest(names []string, typed string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		d := editDistance(n, typed)
		if len(typed) >= 2 && strings.HasPrefix(n, typed) && len(n)-len(typed) <= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	limit := 2
	if len([]rune(typed)) <= 4 {
		limit = 1
	}
	if bestD > limit {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
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
	var unknown, parent, hint string
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown, parent = name, cmdName(c)
		cmds := c.App.Commands
		if c.Command != nil && len(c.Command.Subcommands) > 0 {
			cmds = c.Command.Subcommands
		}
		if s := suggestCommand(cmds, name); s != "" {
			hint = fmt.Sprintf("did you mean `%s %s`? ", parent, s)
		}
	}
	err := app.RunContext(ctx, commandLine(app, args))
	if err == nil && unknown != "" {
		err = usagef("%s has no command %q; %s`%s --help` lists them", parent, unknown, hint, parent)
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
	msg := err.Error()
	if h := listHint(err); h != "" {
		msg += "; " + h
	}
	fmt.Fprintln(stderr, "folio:", termText(msg))
	return exitCode(err)
}

// listHint is the CLI's pointer to what exists, for an error that says what
// is missing: the command that lists it. The services and the daemon
// never name commands (their errors reach HTTP and WebSocket clients
// too); the fields of *repo.NotFoundError are the same in direct mode and
// through --server.
func listHint(err error) string {
	var nv *repo.NotVersionError
	if errors.As(err, &nv) {
		return fmt.Sprintf("`folio checkpoint %s` does", nv.Doc)
	}
	var nf *repo.NotFoundError
	if !errors.As(err, &nf) {
		return ""
	}
	switch nf.What {
	case "document":
		return "`folio doc list` shows the documents"
	case "version":
		return fmt.Sprintf("`folio log %s` lists the versions", nf.Doc)
	case "block":
		if nf.Label != "" {
			return fmt.Sprintf("`folio blocks %s@%s` lists its block ids", nf.Doc, nf.Label)
		}
		return fmt.Sprintf("`folio blocks %s` lists the block ids", nf.Doc)
	}
	return ""
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
	r, err := openStore(c.Context, dir, withEngine(withLimits(o, fc), fc, nil))
	if err != nil {
		return nil, storeError(dir, err)
	}
	return r, nil
}

// withEngine sets the store's engine and its settings from [storage]
// (docs/config.md) when o names none, with log for the engine's
// messages (nil: none).
func withEngine(o repo.Options, fc *config.Config, log *slog.Logger) repo.Options {
	if o.KV.Engine != "" {
		return o
	}
	o.KV.Engine = fc.Storage.Engine
	if o.KV.Engine == config.EnginePebble {
		return o
	}
	o.KV.DSN = string(fc.Storage.DSN)
	o.KV.MaxConns = fc.Storage.MaxConns
	o.KV.StatementTimeout = fc.Storage.StatementTimeout
	if o.KV.StatementTimeout == 0 {
		o.KV.StatementTimeout = -1 // none
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o.KV.Logger = log
	return o
}

// configuredStore opens the store of dir with the engine of the
// configuration (--config, FOLIO_STORAGE_*) and options o.
func configuredStore(c *cli.Context, dir string, o repo.Options) (*repo.Repo, error) {
	fc, err := config.Load(inherited(c, "config"), nil)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err)
	}
	r, err := openStore(c.Context, dir, withEngine(o, fc, nil))
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
	case errors.Is(err, kv.ErrLocked) && errs.KindOf(err) == errs.Unavailable && strings.Contains(err.Error(), "postgres "):
		// The store in a database, held by a daemon that may serve
		// another data directory.
		if addr := daemonAddress(dir); addr != "" {
			return errs.E(errs.Unavailable, "the store is held by a running folio daemon at %s: use --server %s (with --token / FOLIO_TOKEN)", addr, addr)
		}
		return errs.E(errs.Unavailable, "%s: the store is held by another folio process (a daemon: use --server URL and --token)", errs.Message(err))
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
