package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/urfave/cli/v2"
)

// Exit codes; docs/cli.md lists them.
const (
	exitError       = 1 // anything else
	exitUsage       = 2 // bad flags or arguments
	exitNotFound    = 3 // unknown document, version label or block
	exitConflict    = 4 // stale baseline
	exitInvalid     = 5 // invalid document or argument
	exitUnavailable = 6 // data directory missing or locked, daemon unreachable
	exitProblems    = 7 // fsck found problems
)

// exitErr carries an exit code with a message already meant for people.
type exitErr struct {
	code int
	msg  string
}

func (e *exitErr) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitErr{code: code, msg: fmt.Sprintf(format, args...)}
}

func exitCode(err error) int {
	var ee *exitErr
	if errors.As(err, &ee) {
		return ee.code
	}
	return errs.KindOf(err).ExitCode() // exitError for anything unclassified
}

var (
	dataFlag = &cli.StringFlag{Name: "data", Usage: "data directory", EnvVars: []string{"FOLIO_DATA"}, Value: "./folio-data"}
	// serverFlag and tokenFlag select a running daemon instead of the data directory.
	serverFlag = &cli.StringFlag{Name: "server", Usage: "URL of a running folio daemon (instead of --data)", EnvVars: []string{"FOLIO_SERVER"}}
	tokenFlag  = &cli.StringFlag{Name: "token", Usage: "API token for --server", EnvVars: []string{"FOLIO_TOKEN"}}
	configFlag = &cli.StringFlag{Name: "config", Usage: "config file (TOML)", EnvVars: []string{"FOLIO_CONFIG"}}
)

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
		ExitErrHandler:       func(*cli.Context, error) {}, // main prints and exits
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return exitf(exitUsage, "%v (see folio %s --help)", err, c.Command.FullName())
		},
		Commands: coreCommands(),
	}
	app.Commands = append(app.Commands, extraCommands...)
	return app
}

// extraCommands are registered by the files that define them (init funcs).
var extraCommands []*cli.Command

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
	dir := c.String("data")
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		return nil, storeError(dir, err)
	}
	return r, nil
}

// storeError explains why a data directory could not be opened.
func storeError(dir string, err error) error {
	switch {
	case errors.Is(err, kv.ErrNotInitialized):
		return exitf(exitUnavailable, "no folio store in %s: run `folio init --data %s` first (or set --data / FOLIO_DATA)", dir, dir)
	case errors.Is(err, kv.ErrLocked):
		if addr := daemonAddress(dir); addr != "" {
			return exitf(exitUnavailable, "data directory %s is held by a running folio daemon at %s: use --server %s (with --token / FOLIO_TOKEN)", dir, addr, addr)
		}
		return exitf(exitUnavailable, "data directory %s is locked by another folio process; stop it or use --server URL", dir)
	case errs.KindOf(err) == errs.StorageFull, errs.KindOf(err) == errs.Storage:
		return exitf(exitUnavailable, "%v", err) // one line naming the directory, the free space and what to do
	}
	return exitf(exitError, "open %s: %v", dir, err)
}

// daemonAddress reads the address a running daemon recorded in dir.
func daemonAddress(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, addrFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// userError turns errors from the repository into one-line messages with
// the right exit code.
func userError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitErr
	if errors.As(err, &ee) {
		return err
	}
	var ve *flowdoc.ValidationError
	if errors.As(err, &ve) {
		ps := make([]string, len(ve.Problems))
		for i, p := range ve.Problems {
			ps[i] = p.String()
		}
		return exitf(exitInvalid, "invalid document: %s; fix it and retry", strings.Join(ps, "; "))
	}
	var nf *repo.NotFoundError
	if errors.As(err, &nf) {
		hint := ""
		switch nf.What {
		case "document":
			hint = "; `folio doc list` shows the documents"
		case "version", "block":
			hint = "; `folio log ID` shows the versions"
		}
		return exitf(exitNotFound, "%s%s", nf.Error(), hint)
	}
	var ce *repo.ConflictError
	if errors.As(err, &ce) {
		return exitf(exitConflict, "%s; reload and retry", ce.Error())
	}
	if errors.Is(err, repo.ErrInvalid) {
		return exitf(exitInvalid, "%s", strings.TrimPrefix(err.Error(), "repo: invalid: "))
	}
	if errors.Is(err, context.Canceled) {
		return exitf(exitError, "interrupted")
	}
	if k := errs.KindOf(err); k == errs.Storage || k == errs.StorageFull {
		return exitf(exitUnavailable, "%v", err)
	}
	return err
}
