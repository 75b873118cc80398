package main

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/urfave/cli/v2"
)

// exportGitTo runs `git fast-import` in the repository dir on the export
// stream, so that `git init DIR && folio export git --to DIR && git -C DIR
// log` shows the history: the commits go to the branch DIR's HEAD names
// (master or main, whatever git init chose) unless --branch says
// otherwise, and a work tree whose branch was unborn is checked out.
func exportGitTo(c *cli.Context, dir string) error {
	if _, err := exec.LookPath("git"); err != nil {
		return errs.E(errs.Unavailable, "folio export git --to needs git on PATH: %v; or write the stream (folio export git -o FILE) and load it where git is", err)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(c.Context, "git", append([]string{"-C", dir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	bare, err := git("rev-parse", "--is-bare-repository")
	if err != nil {
		return errs.E(errs.Invalid, "%s is not a git repository (%v): run `git init %s` first", dir, err, dir)
	}
	head, _ := git("symbolic-ref", "-q", "HEAD")
	branch := head
	if c.IsSet("branch") || branch == "" {
		if branch, err = pack.GitBranch(c.String("branch")); err != nil {
			return usagef("--branch: %v", err)
		}
	}
	_, verr := git("rev-parse", "--verify", "-q", branch)
	existed := verr == nil
	if existed {
		return errs.E(errs.Conflict, "%s in %s has commits already: export into a new repository (`git init DIR`), or give another --branch", branch, dir)
	}

	b, err := openPackBackend(c)
	if err != nil {
		return err
	}
	defer b.Close()
	imp := exec.CommandContext(c.Context, "git", "-C", dir, "fast-import", "--quiet")
	var stderr bytes.Buffer
	imp.Stderr = &stderr
	in, err := imp.StdinPipe()
	if err != nil {
		return err
	}
	if err := imp.Start(); err != nil {
		return errs.E(errs.Unavailable, "start git fast-import in %s: %v", dir, err)
	}
	m := newMeter(c, "export git")
	st, err := b.ExportGit(c.Context, pack.GitOptions{Docs: c.StringSlice("doc"), Branch: branch},
		&countingWriter{w: in, m: m, what: "bytes written"})
	in.Close()
	werr := imp.Wait()
	m.Done()
	if err != nil {
		return packError("export git", err)
	}
	if werr != nil {
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			return errs.E(errs.Internal, "git fast-import in %s failed: %s", dir, strings.TrimSpace(stderr.String()))
		}
		return werr
	}
	if bare == "false" && branch == head {
		// The branch was unborn: give the work tree and index its files,
		// as a clone would, so that `git status` is clean.
		if _, err := git("reset", "--hard", "-q"); err != nil {
			return errs.E(errs.Internal, "check out %s in %s: %v", branch, dir, err)
		}
	}
	fmt.Fprintf(c.App.ErrWriter, "exported %s as %s into %s on %s\n", plural(st.Docs, "document"), plural(st.Commits, "commit"), dir, branch)
	return nil
}
