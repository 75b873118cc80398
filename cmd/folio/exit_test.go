package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes: what a user types wrongly exits with the code docs/cli.md
// gives, in one line that says what to do; never a raw JSON body.
func TestExitCodes(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	if r := runCLI("--data", data, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	if r := runCLI("--data", data, "doc", "new", "--id", "d1", "--title", "One"); r.code != 0 {
		t.Fatalf("doc new: %+v", r)
	}
	file := writeFile(t, tmp, "plain-file", "not a directory")
	bad := writeFile(t, tmp, "bad.json", `{"schemaVersion":1,"blocks":[{"id":"p1","type":"bogus"}]}`)

	tests := []struct {
		args []string
		code int
		want string // in the error line
	}{
		// Bad flags, arguments and verbs are usage errors.
		{[]string{"log", "d1", "-n", "abc"}, exitUsage, `invalid value "abc" for flag -n`},
		{[]string{"doc", "new"}, exitUsage, "folio doc new needs --title"},
		{[]string{"doc", "save", "d1"}, exitUsage, "folio doc save needs --from"},
		{[]string{"frobnicate"}, exitUsage, `folio has no command "frobnicate"; ` + "`folio --help`"},
		{[]string{"doc", "frob"}, exitUsage, `folio doc has no command "frob"; ` + "`folio doc --help`"},
		{[]string{"token", "add", "admin", "--kind", "readonly"}, exitUsage, `--kind "readonly": use full, backup, agent`},
		{[]string{"log"}, exitUsage, "folio log takes 1 argument"},
		{[]string{"log", "d1", "--format", "yaml"}, exitUsage, `--format "yaml"`},
		{[]string{"gc", "--prune", "soon"}, exitUsage, "--prune"},
		// What the store says.
		{[]string{"log", "nosuch"}, exitNotFound, "`folio doc list` shows the documents"},
		{[]string{"show", "d1@v9.r9"}, exitNotFound, "(latest is v1.r0); `folio log d1` lists the versions"},
		{[]string{"history", "d1", "p9"}, exitNotFound, "`folio blocks d1` lists the block ids"},
		{[]string{"restore", "d1", "v1.r0", "--block", "p9"}, exitNotFound, "`folio blocks d1@v1.r0` lists its block ids"},
		{[]string{"doc", "new", "--id", "d1", "--title", "Again"}, exitConflict, "document d1 already exists"},
		{[]string{"doc", "save", "d1", "--from", bad}, exitInvalid, "invalid document: blocks[0].type"},
		{[]string{"doc", "new", "--id", "no spaces", "--title", "x"}, exitInvalid, "document id"},
	}
	for _, tt := range tests {
		r := runCLI(append([]string{"--data", data}, tt.args...)...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != tt.code || !strings.Contains(line, tt.want) || strings.Contains(line, "\n") || strings.Contains(line, "{") {
			t.Errorf("folio %s: exit %d, stderr %q; want exit %d and one line with %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.code, tt.want)
		}
	}

	// A data directory that cannot be used: one line naming the path and
	// the fix, exit 6.
	for _, dir := range []string{file, filepath.Join(file, "below")} {
		r := runCLI("--data", dir, "doc", "list")
		if r.code != exitUnavailable || !strings.Contains(r.stderr, dir) || !strings.Contains(r.stderr, "give --data (or FOLIO_DATA) a directory") ||
			strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("--data %s: %+v", dir, r)
		}
		if r := runCLI("--data", dir, "init"); r.code != exitUnavailable || !strings.Contains(r.stderr, "not a directory") {
			t.Errorf("init --data %s: %+v", dir, r)
		}
	}
	// Permissions cannot be taken away from root, so the mapping is
	// checked on the error itself.
	perm := storeError("/srv/folio", fmt.Errorf("kv: open /srv/folio: %w", fs.ErrPermission))
	if exitCode(perm) != exitUnavailable || !strings.Contains(perm.Error(), "data directory /srv/folio is not writable (permission denied): fix its permissions") {
		t.Errorf("permission denied: %v (exit %d)", perm, exitCode(perm))
	}
	if r := runCLI("--data", filepath.Join(tmp, "none"), "log", "d1"); r.code != exitUnavailable || !strings.Contains(r.stderr, "folio init --data") {
		t.Errorf("missing store: %+v", r)
	}
}

// TestServerSelection: an explicit --data wins over FOLIO_SERVER from the
// environment; verbs that write into a directory refuse a daemon with the
// exact alternative; a base URL ending in /v1 gets a hint.
func TestServerSelection(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data, mirror := filepath.Join(tmp, "data"), filepath.Join(tmp, "mirror")
	if r := runCLI("--data", data, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	if r := runCLI("--data", data, "doc", "new", "--id", "d1", "--title", "One"); r.code != 0 {
		t.Fatalf("doc new: %+v", r)
	}
	t.Setenv("FOLIO_SERVER", "http://127.0.0.1:1") // nothing listens there
	t.Setenv("FOLIO_TOKEN", "folio_x")
	if r := runCLI("--data", data, "log", "d1"); r.code != 0 || !strings.Contains(r.stdout, "v1.r0") {
		t.Errorf("--data with FOLIO_SERVER set: %+v", r)
	}
	if r := runCLI("log", "d1"); r.code != exitUnavailable || !strings.Contains(r.stderr, "cannot reach the folio daemon at http://127.0.0.1:1") {
		t.Errorf("FOLIO_SERVER alone: %+v", r)
	}
	if r := runCLI("--data", mirror, "backup", "restore", "--from", data); r.code != 0 {
		t.Errorf("backup restore --data with FOLIO_SERVER set: %+v", r)
	}
	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"backup", "restore", "--from", mirror}, "stop the daemon and restore into its directory with --data DIR, or restore into another directory with --data NEWDIR"},
		{[]string{"reindex", "d1"}, "stop the daemon and run `folio --data DIR reindex d1`"},
		{[]string{"pack", "import", "x.fpack"}, "stop the daemon and run it with --data DIR"},
		{[]string{"init"}, "give --data DIR to create one here"},
	}
	for _, tt := range refusals {
		r := runCLI(tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("folio %s through a daemon: %+v, want %q", strings.Join(tt.args, " "), r, tt.want)
		}
	}
	t.Setenv("FOLIO_SERVER", "http://127.0.0.1:7420/v1")
	if r := runCLI("doc", "list"); r.code != exitUsage || !strings.Contains(r.stderr, "ends in /v1: give the daemon's base URL, e.g. http://127.0.0.1:7420") {
		t.Errorf("FOLIO_SERVER ending in /v1: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(tmp, "folio-data")); !os.IsNotExist(err) {
		t.Errorf("a refused verb created ./folio-data: %v", err)
	}
}

// TestNotFoundHintsBothModes: the CLI, not the daemon, points at the
// command that lists what exists, and it says the same whether the store
// is opened directly or reached through --server; the HTTP answer itself
// names no command.
func TestNotFoundHintsBothModes(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	runCLI("--data", dirA, "init")
	runCLI("--data", dirA, "user", "add", "admin", "--admin")
	d := startDaemon(t, dirB, "")
	remote := []string{"--server", d.url, "--token", d.token}
	direct := []string{"--data", dirA}
	for _, mode := range [][]string{direct, remote} {
		if r := runCLI(append(mode, "doc", "new", "--id", "d1", "--title", "One")...); r.code != 0 {
			t.Fatalf("doc new: %+v", r)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "nosuch"}, "folio: document \"nosuch\" not found; `folio doc list` shows the documents\n"},
		{[]string{"show", "d1@v9.r9"}, "folio: version \"d1@v9.r9\" not found (latest is v1.r0); `folio log d1` lists the versions\n"},
		{[]string{"history", "d1", "p9"}, "folio: block \"p9\" not found in any version of d1; `folio blocks d1` lists the block ids\n"},
		{[]string{"restore", "d1", "draft"}, "folio: d1@draft is the draft, not a version: a checkpoint seals it into one; `folio checkpoint d1` does\n"},
	} {
		for _, mode := range [][]string{direct, remote} {
			r := runCLI(append(mode, tt.args...)...)
			if want := map[bool]int{true: exitInvalid, false: exitNotFound}[tt.args[0] == "restore"]; r.code != want || r.stderr != tt.want {
				t.Errorf("folio %s (%s): exit %d, stderr %q; want %q", strings.Join(tt.args, " "), mode[0], r.code, r.stderr, tt.want)
			}
		}
	}
	// The daemon's own answer says what is missing, in the API's terms.
	req, _ := http.NewRequest("GET", d.url+"/v1/docs/d1/versions/v9.r9", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), `"latest":"v1.r0"`) || strings.Contains(string(body), "folio log") {
		t.Errorf("GET a missing version: %d %s", resp.StatusCode, body)
	}
}
