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

// The daemon's search index lives beside the store and catches up at
// start with what changed while it was not applying: changes made by
// direct-mode commands while the daemon was stopped, and a change
// acknowledged just before the daemon was killed (SIGKILL).
func TestSearchCatchesUpAcrossRestarts(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "data")
	light := writeFile(t, tmp, "a.md", "# Lighthouse\n\nThe lamp turns all night.\n")
	harbour := writeFile(t, tmp, "b.md", "# Lighthouse\n\nBoats sleep in the harbour.\n")
	gulls := writeFile(t, tmp, "c.md", "# Gulls\n\nGulls quarrel over the pier.\n")
	tide := writeFile(t, tmp, "d.md", "# Gulls\n\nThe tide comes in at noon.\n")
	d := startDaemon(t, dir, "")
	remote := []string{"--server", d.url, "--token", d.token}
	expect := func(args []string, q, want, not string) {
		t.Helper()
		r := runCLI(append(args, "search", q)...)
		if r.code != 0 || !strings.Contains(r.stdout, want) || not != "" && strings.Contains(r.stdout, not) {
			t.Errorf("search %s: %+v, want %q and not %q", q, r, want, not)
		}
	}
	for _, a := range [][]string{{"doc", "new", "--id", "l", "--from", light}, {"doc", "new", "--id", "g", "--from", gulls}} {
		if r := runCLI(append(remote, a...)...); r.code != 0 {
			t.Fatalf("%v: %+v", a, r)
		}
	}
	expect(remote, "lamp", "l  Lighthouse", "")
	d.stop(t)

	// Direct mode while the daemon is down: a save and a delete.
	direct := []string{"--data", dir}
	for _, a := range [][]string{{"doc", "save", "l", "--from", harbour, "--checkpoint"}, {"doc", "rm", "g"}} {
		if r := runCLI(append(direct, a...)...); r.code != 0 {
			t.Fatalf("%v: %+v", a, r)
		}
	}
	d = startDaemon(t, dir, d.token)
	remote = []string{"--server", d.url, "--token", d.token}
	expect(remote, "harbour", "l  Lighthouse", "")
	expect(remote, "lamp", "", "Lighthouse") // gone from draft and head
	expect(remote, "gulls", "", "Gulls")     // deleted

	// Acknowledged, then killed: the restarted daemon finds it.
	if r := runCLI(append(remote, "doc", "undelete", "g")...); r.code != 0 {
		t.Fatalf("undelete: %+v", r)
	}
	if r := runCLI(append(remote, "doc", "save", "g", "--from", tide)...); r.code != 0 {
		t.Fatalf("save: %+v", r)
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done
	d = startDaemon(t, dir, d.token)
	remote = []string{"--server", d.url, "--token", d.token}
	expect(remote, "tide noon", "g  Gulls", "")
	expect(remote, "quarrel", "g  Gulls", "") // the head still has it
}
