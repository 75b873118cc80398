package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// What a git user types: -n1, `help VERB`, and typos that get a
// suggestion instead of a bare "no such command".
func TestGitHabits(t *testing.T) {
	isolateEnv(t)
	data := filepath.Join(t.TempDir(), "data")
	runCLI("--data", data, "init")
	runCLI("--data", data, "doc", "new", "--id", "d", "--title", "T")
	runCLI("--data", data, "attrs", "set", "d", "--summary", "s")
	runCLI("--data", data, "checkpoint", "d")
	for _, args := range [][]string{{"log", "-n1", "d"}, {"log", "d", "-n1"}, {"log", "-n", "1", "d"}, {"log", "--limit=1", "d"}} {
		r := runCLI(append([]string{"--data", data}, args...)...)
		if r.code != 0 || strings.Count(r.stdout, "\n") != 1 || !strings.HasPrefix(r.stdout, "v1.r1") {
			t.Errorf("folio %s: %+v, want the head alone", strings.Join(args, " "), r)
		}
	}
	h := runCLI("help", "log")
	if h.code != 0 || !strings.Contains(h.stdout, "folio log - list a document's versions") || h.stdout != runCLI("log", "--help").stdout {
		t.Errorf("folio help log: %+v", h)
	}
	if h := runCLI("help", "doc", "save"); h.code != 0 || !strings.Contains(h.stdout, "folio doc save") {
		t.Errorf("folio help doc save: %+v", h)
	}
	for _, c := range []struct{ args, want string }{
		{"lgo d", "did you mean `folio log`?"},
		{"stauts", "did you mean `folio status`?"},
		{"doc lsit", "did you mean `folio doc list`?"},
		{"help lgo", "did you mean `folio log`?"},
		{"log d --formt json", "did you mean --format?"},
		{"checkpiont d", "did you mean `folio checkpoint`?"},
	} {
		r := runCLI(append([]string{"--data", data}, strings.Fields(c.args)...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("folio %s: %+v, want exit %d and %q", c.args, r, exitUsage, c.want)
		}
	}
	if r := runCLI("xyzzy"); r.code != exitUsage || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("folio xyzzy suggests something far away: %+v", r)
	}
}

// Every verb that prints a result takes --format json; the verbs left out
// write data (a pack, an asset, a git stream), run the daemon or speak a
// protocol on standard output (mcp).
func TestEveryPrintingVerbHasJSON(t *testing.T) {
	streams := map[string]bool{"folio asset get": true, "folio pack export": true, "folio export git": true,
		"folio serve": true, "folio completion": true, "folio mcp": true}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := prefix + " " + c.Name
			if c.Name == "help" {
				continue // urfave/cli's own
			}
			if c.Action != nil && !streams[name] {
				has := false
				for _, f := range c.Flags {
					has = has || f.Names()[0] == "format"
				}
				if !has {
					t.Errorf("%s has no --format json", name)
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("folio", newApp().Commands)

	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	runCLI("--data", data, "init")
	runCLI("--data", data, "doc", "new", "--id", "d", "--title", "T")
	pk := filepath.Join(tmp, "p.pack")
	if r := runCLI("--data", data, "pack", "export", "-o", pk); r.code != 0 {
		t.Fatal(r)
	}
	var heads []struct{ Name, ID string }
	if r := runCLI("--data", data, "pack", "heads", "--format", "json"); json.Unmarshal([]byte(r.stdout), &heads) != nil ||
		len(heads) != 1 || heads[0].Name != "docs/d/head" || len(heads[0].ID) != 64 {
		t.Errorf("pack heads --format json: %+v", r)
	}
	var v struct {
		Valid    bool
		Objects  int
		Versions int
		Heads    []struct{ Name string }
	}
	if r := runCLI("pack", "verify", pk, "--format", "json"); json.Unmarshal([]byte(r.stdout), &v) != nil || !v.Valid || v.Versions != 1 ||
		len(v.Heads) != 1 {
		t.Errorf("pack verify --format json: %+v", r)
	}
	var im struct {
		Result struct{ Refs []struct{ Action string } }
	}
	if r := runCLI("--data", filepath.Join(tmp, "other"), "init"); r.code != 0 {
		t.Fatal(r)
	}
	if r := runCLI("--data", filepath.Join(tmp, "other"), "pack", "import", pk, "--format", "json"); json.Unmarshal([]byte(r.stdout), &im) != nil ||
		len(im.Result.Refs) != 1 || im.Result.Refs[0].Action != "created" {
		t.Errorf("pack import --format json: %+v", r)
	}
}

// `folio completion bash` completes verbs, subcommands and flags from the
// binary itself.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script := writeFile(t, t.TempDir(), "folio.bash", runCLI("completion", "bash").stdout)
	complete := func(words ...string) string {
		t.Helper()
		line := "source " + shellQuote(script) + "; COMP_WORDS=(" + shellQuote(os.Args[0])
		for _, w := range words {
			line += " " + shellQuote(w)
		}
		line += "); COMP_CWORD=" + string(rune('0'+len(words))) + `; _folio_complete; echo "${COMPREPLY[*]}"`
		cmd := exec.Command("bash", "-c", line)
		cmd.Env = append(os.Environ(), "FOLIO_TEST_MAIN=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := complete("chec"); got != "checkpoint" {
		t.Errorf("folio chec<TAB> = %q", got)
	}
	if got := complete("doc", "s"); got != "save" {
		t.Errorf("folio doc s<TAB> = %q", got)
	}
	if got := complete("log", "--fo"); got != "--format" {
		t.Errorf("folio log --fo<TAB> = %q", got)
	}
	for _, sh := range []string{"zsh", "fish"} {
		if r := runCLI("completion", sh); r.code != 0 || !strings.Contains(r.stdout, "folio") {
			t.Errorf("completion %s: %+v", sh, r)
		}
	}
	if r := runCLI("completion", "tcsh"); r.code != exitUsage {
		t.Errorf("completion tcsh: %+v", r)
	}
}
