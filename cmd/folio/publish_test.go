package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runStdin is runCLI with standard input.
func runStdin(stdin string, args ...string) cliResult {
	var out, errb bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter, app.Reader = &out, &errb, strings.NewReader(stdin)
	err := app.RunContext(context.Background(), interspersed(app, append([]string{"folio"}, args...)))
	code := 0
	if err != nil {
		fmt.Fprintln(&errb, "folio:", err)
		code = exitCode(err)
	}
	return cliResult{out.String(), errb.String(), code}
}

// The publishing verbs print the same, with the same exit codes, in
// direct mode and through a daemon.
func TestPublishVerbsRemoteMatchesDirect(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	body := writeFile(t, tmp, "a.md", "# Storage\n\nPebble is a storage engine. It keeps sorted tables.\n\nA log makes writes durable.\n")
	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	if r := runCLI("--data", dirA, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	// Both stores have the admin the CLI acts as (FOLIO_USER=admin).
	if r := runCLI("--data", dirA, "user", "add", "admin", "--admin"); r.code != 0 {
		t.Fatalf("user add: %+v", r)
	}
	d := startDaemon(t, dirB, "")
	remote := []string{"--server", d.url, "--token", d.token}
	direct := []string{"--data", dirA}

	steps := []struct {
		stdin string
		args  []string
		code  int
	}{
		{"", []string{"doc", "new", "--id", "essay", "--title", "Storage engines", "--from", body}, 0},
		{"", []string{"attrs", "suggest", "essay", "--format", "json"}, 0},
		{"", []string{"attrs", "set", "essay", "--slug", "storage", "--category", "Databases", "--tags", "pebble, storage"}, 0},
		{"", []string{"publish", "essay"}, exitInvalid}, // category_unknown
		{"", []string{"category", "add", "Databases"}, 0},
		{"", []string{"category", "add", "databases"}, exitConflict},
		{"", []string{"category", "describe", "DATABASES", "storage engines and indexes", "--format", "json"}, 0},
		{"", []string{"tag", "describe", "nosuch", "x"}, exitNotFound},
		{"", []string{"publish", "essay", "--visibility", "password"}, exitInvalid}, // password_required
		{"s3cret-pw\n", []string{"publish", "essay", "--visibility", "password", "--password-stdin"}, 0},
		{"", []string{"publish", "essay", "--format", "json"}, 0},
		{"", []string{"visibility", "essay", "public"}, 0},
		{"", []string{"log", "essay"}, 0},
		{"", []string{"log", "essay", "--format", "json"}, 0},
		{"", []string{"tag", "list"}, 0},
		{"", []string{"category", "rm", "Databases"}, exitConflict},
		{"", []string{"doc", "new", "--id", "other", "--title", "Other"}, 0},
		{"", []string{"attrs", "set", "other", "--slug", "storage"}, 0},
		{"", []string{"publish", "other"}, exitConflict}, // slug_taken
		{"", []string{"unpublish", "essay"}, 0},
		{"", []string{"unpublish", "essay"}, exitNotFound},
		{"", []string{"publish", "other", "-m", "now free"}, 0},
		{"", []string{"publish", "nosuch"}, exitNotFound},
		{"", []string{"attrs", "suggest", "essay", "--apply"}, 0},
	}
	volatile := []string{`"(published|updated|created|time)": [0-9]+`, `"(version|hash)": "[0-9a-f]+"`, `\b[0-9a-f]{12}\b`, `[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+Z`}
	for _, s := range steps {
		a := runStdin(s.stdin, append(direct, s.args...)...)
		b := runStdin(s.stdin, append(remote, s.args...)...)
		if a.code != s.code {
			t.Errorf("folio %s: exit %d, want %d: %+v", strings.Join(s.args, " "), a.code, s.code, a)
		}
		if scrub(a.stdout, volatile) != scrub(b.stdout, volatile) || a.code != b.code || scrub(a.stderr, volatile) != scrub(b.stderr, volatile) {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(s.args, " "), a, b)
		}
	}
	// The log marks the published version (checked on the direct copy).
	r := runCLI(append(direct, "log", "other")...)
	if !strings.Contains(r.stdout, "checkpoint(publish) [published]") {
		t.Errorf("log does not mark the published version:\n%s", r.stdout)
	}
	var vs []map[string]any
	r = runCLI(append(direct, "log", "other", "--format", "json")...)
	if err := json.Unmarshal([]byte(r.stdout), &vs); err != nil || vs[0]["published"] != true {
		t.Errorf("log json: %v %s", err, r.stdout)
	}
	// The password never appears in what was printed or stored in clear.
	if strings.Contains(runCLI(append(direct, "log", "essay", "--format", "json")...).stdout, "s3cret-pw") {
		t.Error("the password was printed")
	}
	d.stop(t)
}

func scrub(s string, res []string) string {
	for _, re := range res {
		s = mustRE(re).ReplaceAllString(s, "")
	}
	return s
}

func mustRE(s string) *regexp.Regexp { return regexp.MustCompile(s) }
