package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// folio search finds the caller's documents by title and body words, in
// the saved draft and in Chinese, never another owner's, never a deleted
// one: through a daemon exactly as in direct mode.
func TestSearchDirectMatchesDaemon(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	essay := writeFile(t, tmp, "a.md", "# Sourdough\n\nFeed the starter twice a day.\n")
	rye := writeFile(t, tmp, "b.md", "# Sourdough\n\nRye flour makes a sour crumb.\n")
	autumn := writeFile(t, tmp, "c.md", "# 北京的秋天\n\n故宫的红墙和银杏叶。\n")
	other := writeFile(t, tmp, "d.md", "# Starter kit\n\nA starter for everyone.\n")
	dirA, dirB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	runCLI("--data", dirA, "init")
	runCLI("--data", dirA, "user", "add", "admin", "--admin")
	d := startDaemon(t, dirB, "")
	remote := []string{"--server", d.url, "--token", d.token}
	direct := []string{"--data", dirA}
	steps := []struct {
		args []string
		code int
		want string // in the output; "" for none
		not  string // never in the output
	}{
		{[]string{"user", "add", "bo"}, 0, "", ""},
		{[]string{"doc", "new", "--id", "e", "--from", essay}, 0, "e", ""},
		{[]string{"doc", "new", "--id", "c", "--from", autumn}, 0, "c", ""},
		{[]string{"doc", "new", "--id", "o", "--owner", "bo", "--from", other}, 0, "o", ""},
		{[]string{"search", "starter"}, 0, "e  Sourdough", "Starter kit"},
		{[]string{"search", "sourdough", "--format", "json"}, 0, `"id": "e"`, `"id": "o"`},
		{[]string{"doc", "save", "e", "--from", rye}, 0, "", ""},
		{[]string{"search", "rye", "crumb"}, 0, "e  Sourdough", ""},
		{[]string{"search", "starter"}, 0, "e  Sourdough", "Starter kit"}, // the head still has it
		{[]string{"search", "银杏"}, 0, "c  北京的秋天", "Sourdough"},
		{[]string{"search", "秋天"}, 0, "c  北京的秋天", ""},
		{[]string{"search", "nothing-like-this"}, 0, "", "Sourdough"},
		{[]string{"doc", "rm", "c"}, 0, "", ""},
		{[]string{"search", "秋天"}, 0, "", "北京"},
		{[]string{"search"}, exitUsage, "search needs the words to look for", ""},
		{[]string{"search", "x", "--limit", "1000"}, exitInvalid, "limit", ""},
	}
	for _, s := range steps {
		a := runCLI(append(direct, s.args...)...)
		b := runCLI(append(remote, s.args...)...)
		if s.args[0] == "user" {
			continue // tokens differ
		}
		if a != b {
			t.Errorf("folio %s:\ndirect: %+v\nremote: %+v", strings.Join(s.args, " "), a, b)
		}
		out := a.stdout + a.stderr
		if a.code != s.code || !strings.Contains(out, s.want) || s.not != "" && strings.Contains(out, s.not) {
			t.Errorf("folio %s: %+v, want exit %d, %q and not %q", strings.Join(s.args, " "), a, s.code, s.want, s.not)
		}
	}
	// The daemon's index rebuilt from the store answers as before.
	before := runCLI(append(remote, "search", "starter", "--format", "json")...)
	runCLI(append(remote, "index", "rebuild")...)
	if after := runCLI(append(remote, "search", "starter", "--format", "json")...); after != before || !strings.Contains(after.stdout, `"id": "e"`) {
		t.Errorf("search after index rebuild: %+v, before: %+v", after, before)
	}
}
