package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// doc rm hides a document from lists, reads and the public site, keeps
// its history, and doc undelete brings it back: through a daemon exactly
// as in direct mode.
func TestDocRmAndUndelete(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	body := writeFile(t, tmp, "a.md", "# Essay\n\nA paragraph worth keeping.\n")
	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	runCLI("--data", dirA, "init")
	runCLI("--data", dirA, "user", "add", "admin", "--admin")
	d := startDaemon(t, dirB, "")
	remote := []string{"--server", d.url, "--token", d.token}
	direct := []string{"--data", dirA}
	stamp := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|\b[0-9a-f]{12}\b|"owner": "[^"]*"`)
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"doc", "new", "--id", "e", "--from", body}, 0, "e"},
		{[]string{"doc", "new", "--id", "f", "--title", "Other"}, 0, "f"},
		{[]string{"publish", "e"}, 0, `published e@v1.r0 as "e"`},
		{[]string{"doc", "rm", "e"}, 0, `its publication "e" is withdrawn`},
		{[]string{"doc", "rm", "e"}, exitNotFound, `document "e" not found`},
		{[]string{"doc", "list"}, 0, "f"},
		{[]string{"log", "e"}, exitNotFound, `document "e" not found`},
		{[]string{"show", "e"}, exitNotFound, `document "e" not found`},
		{[]string{"doc", "new", "--id", "e", "--title", "Taken"}, exitConflict, "already exists"},
		{[]string{"doc", "list", "--deleted"}, 0, "e   v1.r0"},
		{[]string{"doc", "list", "--deleted", "--format", "json"}, 0, `"deletedBy": "admin"`},
		{[]string{"fsck"}, 0, "0 problems"},
		{[]string{"doc", "undelete", "e"}, 0, "restored e (Essay) at v1.r0, deleted"},
		{[]string{"doc", "undelete", "e"}, exitConflict, "is not deleted"},
		{[]string{"log", "e"}, 0, "v1.r0"},
		{[]string{"doc", "rm", "nosuch"}, exitNotFound, `document "nosuch" not found`},
	}
	for i, s := range steps {
		a := runCLI(append(direct, s.args...)...)
		b := runCLI(append(remote, s.args...)...)
		a.stdout, b.stdout = stamp.ReplaceAllString(a.stdout, "T"), stamp.ReplaceAllString(b.stdout, "T")
		if a != b {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(s.args, " "), a, b)
		}
		if a.code != s.code || !strings.Contains(a.stdout+a.stderr, s.want) {
			t.Errorf("folio %s: %+v, want exit %d and %q", strings.Join(s.args, " "), a, s.code, s.want)
		}
		if s.args[0] == "doc" && s.args[1] == "list" && len(s.args) == 2 && strings.Contains(a.stdout, "Essay") {
			t.Errorf("doc list shows the deleted document: %s", a.stdout)
		}
		// The public site had the article before the delete, not after.
		if s.args[0] == "publish" || i == 3 {
			resp, err := http.Get(d.url + "/v1/public/articles/e")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := http.StatusOK
			if i == 3 {
				want = http.StatusNotFound
			}
			if resp.StatusCode != want {
				t.Errorf("after folio %s the public article answers %d, want %d", strings.Join(s.args, " "), resp.StatusCode, want)
			}
		}
	}
	// An author may delete their own document, not restore it.
	r := runCLI(append(remote, "user", "add", "ann")...)
	tok := regexp.MustCompile(`(?m)^(folio_\w+_\w+)$`).FindStringSubmatch(r.stdout)
	if tok == nil {
		t.Fatalf("user add: %+v", r)
	}
	ann := []string{"--server", d.url, "--token", tok[1]}
	runCLI(append(ann, "doc", "new", "--title", "Mine")...)
	mine := runCLI(append(ann, "doc", "list", "--format", "json")...)
	id := regexp.MustCompile(`"id": "([^"]+)"`).FindStringSubmatch(mine.stdout)
	if id == nil {
		t.Fatalf("doc list: %+v", mine)
	}
	if r := runCLI(append(ann, "doc", "rm", "f")...); r.code != exitNotFound {
		t.Errorf("an author deletes another's document: %+v", r)
	}
	if r := runCLI(append(ann, "doc", "rm", id[1])...); r.code != 0 {
		t.Errorf("an author deletes their own document: %+v", r)
	}
	if r := runCLI(append(ann, "doc", "undelete", id[1])...); r.code != exitDenied {
		t.Errorf("an author restores a deleted document: %+v, want exit %d", r, exitDenied)
	}
	if r := runCLI(append(remote, "doc", "undelete", id[1])...); r.code != 0 {
		t.Errorf("an admin restores it: %+v", r)
	}
	// gc purges what was deleted longer ago than --prune (0: everything
	// deleted); the id is free again.
	for _, mode := range [][]string{direct, remote} {
		runCLI(append(mode, "doc", "rm", "f")...)
		if r := runCLI(append(mode, "gc", "--prune", "0")...); r.code != 0 || !strings.Contains(r.stdout, "purged 1 document deleted") {
			t.Errorf("gc --prune 0 after doc rm: %+v", r)
		}
		if r := runCLI(append(mode, "doc", "undelete", "f")...); r.code != exitNotFound {
			t.Errorf("undelete after the purge: %+v", r)
		}
		if r := runCLI(append(mode, "doc", "new", "--id", "f", "--title", "New")...); r.code != 0 {
			t.Errorf("the purged id is free again: %+v", r)
		}
	}
}
