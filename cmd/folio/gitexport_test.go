package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `git init DIR` (whose branch may be master) then `folio export git --to
// DIR` gives a repository whose `git log` is the history and whose work
// tree is checked out, directly and through a daemon.
func TestExportGitTo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	runCLI("--data", data, "init")
	body := writeFile(t, tmp, "a.md", "# Essay\n\nOne.\n")
	runCLI("--data", data, "doc", "new", "--id", "e", "--from", body)
	runCLI("--data", data, "doc", "save", "e", "--from", writeFile(t, tmp, "b.md", "# Essay\n\nOne, then two.\n"), "--checkpoint", "-m", "more")
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	show := runCLI("--data", data, "show", "e", "--format", "json")
	check := func(name string, mode []string) {
		dir := filepath.Join(tmp, name)
		if out, err := exec.Command("git", "init", "-q", "-b", "master", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		r := runCLI(append(mode, "export", "git", "--to", dir)...)
		if r.code != 0 || !strings.Contains(r.stderr, "as 2 commits into "+dir+" on refs/heads/master") {
			t.Fatalf("%s: export git --to: %+v", name, r)
		}
		log := git(dir, "log", "--format=%s")
		if strings.Count(log, "\n") != 2 || !strings.Contains(log, "Essay v1.r1") {
			t.Errorf("%s: git log = %q", name, log)
		}
		if st := git(dir, "status", "--porcelain"); st != "" {
			t.Errorf("%s: the work tree is not checked out: %q", name, st)
		}
		if got := git(dir, "show", "HEAD:docs/e.json"); got != show.stdout {
			t.Errorf("%s: docs/e.json = %q, want show's %q", name, got, show.stdout)
		}
		if r := runCLI(append(mode, "export", "git", "--to", dir)...); r.code != exitConflict || !strings.Contains(r.stderr, "has commits already") {
			t.Errorf("%s: a second export into the same branch: %+v", name, r)
		}
	}
	check("direct", []string{"--data", data})
	if r := runCLI("--data", data, "export", "git", "--to", filepath.Join(tmp, "nogit")); r.code != exitInvalid || !strings.Contains(r.stderr, "git init") {
		t.Errorf("--to a directory that is no repository: %+v", r)
	}
	d := startDaemon(t, data, "")
	check("remote", []string{"--server", d.url, "--token", d.token})
}
