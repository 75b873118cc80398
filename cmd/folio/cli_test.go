package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
)

// run runs the CLI in-process (runCLI) and returns stdout, stderr and
// the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	r := runCLI(args...)
	return r.stdout, r.stderr, r.code
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The history verbs end to end in direct mode: what a user types and reads.
func TestCLIHistoryVerbs(t *testing.T) {
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")

	if _, stderr, code := run(t, "--data", data, "log", "x"); code != exitUnavailable || !strings.Contains(stderr, "folio init") {
		t.Fatalf("log before init: code %d, %q; want %d and a hint to run folio init", code, stderr, exitUnavailable)
	}
	if _, _, code := run(t, "--data", data, "init"); code != 0 {
		t.Fatal("init failed")
	}
	md := write(t, tmp, "a.md", "## Walk\n\n我们今天去公园散步。\n\n<x-y>\n\nSecond paragraph.\n")
	out, stderr, code := run(t, "--data", data, "doc", "new", "--title", "Walk", "--from", md, "--format", "json")
	if code != 0 {
		t.Fatalf("doc new: %d %s", code, stderr)
	}
	if !strings.Contains(stderr, "a.md:5") {
		t.Errorf("the HTML block (no block) was not reported with its line: %q", stderr)
	}
	var created struct{ ID, Version string }
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Version != "v1.r0" || created.ID == "" {
		t.Fatalf("doc new json = %q (%v)", out, err)
	}
	id := created.ID

	// Edit the Chinese paragraph and seal; flags after the arguments work.
	show, _, _ := run(t, "--data", data, "show", id, "--format", "json")
	d, err := flowdoc.Parse([]byte(show))
	if err != nil {
		t.Fatalf("show json is not a FlowDocument: %v\n%s", err, show)
	}
	d.Blocks[1].RichText[0].Text = "我们明天去公园跑步。"
	edited := write(t, tmp, "b.json", string(flowdoc.CanonicalJSON(d)))
	out, stderr, code = run(t, "--data", data, "doc", "save", id, "--from", edited, "--checkpoint", "-m", "tomorrow", "--format", "json")
	if code != 0 || !strings.Contains(out, `"version": "v1.r1"`) {
		t.Fatalf("doc save --checkpoint: %d %s %s", code, out, stderr)
	}

	out, _, _ = run(t, "--data", data, "log", id, "--format", "json")
	var log []map[string]any
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log) != 2 {
		t.Fatalf("log json = %s", out)
	}
	for _, k := range []string{"label", "kind", "hash", "time"} {
		if _, ok := log[0][k]; !ok {
			t.Errorf("log entry lacks %q: %v", k, log[0])
		}
	}
	if log[0]["label"] != "v1.r1" || log[0]["message"] != "tomorrow" || log[1]["kind"] != "create" {
		t.Errorf("log = %v", log)
	}

	out, _, _ = run(t, "--data", data, "diff", id, "v1.r0", "v1.r1", "--format", "json")
	var diff struct {
		Changes []flowdoc.BlockChange `json:"changes"`
	}
	if err := json.Unmarshal([]byte(out), &diff); err != nil || len(diff.Changes) != 1 || diff.Changes[0].Kind != flowdoc.Modified {
		t.Fatalf("diff json = %s", out)
	}
	var ins, del []string
	for _, w := range diff.Changes[0].Words {
		switch w.Op {
		case "insert":
			ins = append(ins, w.Text)
		case "delete":
			del = append(del, w.Text)
		}
	}
	if strings.Join(del, "") != "今散" || strings.Join(ins, "") != "明跑" {
		t.Errorf("CJK word diff deleted %q inserted %q, want 今散 / 明跑", del, ins)
	}
	text, _, _ := run(t, "--data", data, "diff", id, "v1.r0", "v1.r1")
	if !strings.Contains(text, "[-今-]{+明+}") {
		t.Errorf("text diff = %q", text)
	}

	// Restore the whole document, then one block.
	out, _, code = run(t, "--data", data, "restore", id, "v1.r0")
	if code != 0 || !strings.Contains(out, "as v2.r0") {
		t.Fatalf("restore: %d %q", code, out)
	}
	v0, _, _ := run(t, "--data", data, "show", id+"@v1.r0", "--format", "json")
	now, _, _ := run(t, "--data", data, "show", id, "--format", "json")
	if v0 != now {
		t.Fatalf("restored head differs from v1.r0:\n%s\n%s", now, v0)
	}
	blk := d.Blocks[1].ID
	if out, _, code = run(t, "--data", data, "restore", id, "v1.r1", "--block", blk); code != 0 || !strings.Contains(out, "as v2.r1") {
		t.Fatalf("restore --block: %d %q", code, out)
	}
	out, _, _ = run(t, "--data", data, "history", id, blk, "--format", "json")
	var hist []map[string]any
	if err := json.Unmarshal([]byte(out), &hist); err != nil || len(hist) != 4 {
		t.Fatalf("history json = %s", out)
	}

	// Errors: unknown label names the latest; invalid documents give their paths.
	_, stderr, code = run(t, "--data", data, "show", id+"@v7.r0")
	if code != exitNotFound || !strings.Contains(stderr, "latest is v2.r1") {
		t.Errorf("unknown label: %d %q", code, stderr)
	}
	bad := write(t, tmp, "bad.json", `{"schemaVersion":1,"blocks":[{"id":"h","type":"heading","attrs":{"level":7},"richText":[{"text":"x"}]}]}`)
	_, stderr, code = run(t, "--data", data, "doc", "save", id, "--from", bad)
	if code != exitInvalid || !strings.Contains(stderr, "blocks[0].attrs.level") {
		t.Errorf("invalid document: %d %q", code, stderr)
	}
	if _, _, code := run(t, "--data", data, "log"); code != exitUsage {
		t.Errorf("log without an id: exit %d, want %d", code, exitUsage)
	}

	out, _, code = run(t, "--data", data, "fsck", "--format", "json")
	var rep repo.FsckReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.OK || code != 0 {
		t.Fatalf("fsck: %d %s", code, out)
	}

	// A store held by another process (here: an open repo) is named as such.
	r, err := repo.Open(data, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, stderr, code = run(t, "--data", data, "log", id)
	if code != exitUnavailable || !strings.Contains(stderr, "locked") {
		t.Errorf("locked store: %d %q", code, stderr)
	}
}

// history prints a block's revisions newest first, in text and in JSON
// alike, with RFC 3339 times as log and doc list do.
func TestHistoryOrderAndTimes(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	if _, _, code := run(t, "--data", data, "init"); code != 0 {
		t.Fatal("init failed")
	}
	body := func(text string) string {
		return write(t, tmp, "b.json", `{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":"`+text+`"}]}]}`)
	}
	if _, stderr, code := run(t, "--data", data, "doc", "new", "--id", "d1", "--title", "T", "--from", body("one")); code != 0 {
		t.Fatal(stderr)
	}
	for _, text := range []string{"two", "three"} {
		if _, stderr, code := run(t, "--data", data, "doc", "save", "d1", "--from", body(text), "--checkpoint"); code != 0 {
			t.Fatal(stderr)
		}
	}
	out, _, _ := run(t, "--data", data, "history", "d1", "p1", "--format", "json")
	var revs []struct{ Label, Change, Time string }
	if err := json.Unmarshal([]byte(out), &revs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var labels []string
	for _, r := range revs {
		labels = append(labels, r.Label)
		if _, err := time.Parse(time.RFC3339, r.Time); err != nil || !strings.HasSuffix(r.Time, "Z") {
			t.Errorf("time %q is not RFC 3339 UTC", r.Time)
		}
	}
	if strings.Join(labels, " ") != "v1.r2 v1.r1 v1.r0" || revs[2].Change != "added" || revs[0].Change != "modified" {
		t.Fatalf("history json = %+v, want newest first", revs)
	}
	text, _, _ := run(t, "--data", data, "history", "d1", "p1")
	var textLabels []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		textLabels = append(textLabels, strings.Fields(l)[0])
	}
	if strings.Join(textLabels, " ") != strings.Join(labels, " ") {
		t.Fatalf("text order %v differs from json order %v", textLabels, labels)
	}
	out, _, _ = run(t, "--data", data, "doc", "list", "--format", "json")
	var docs []struct{ Created string }
	if err := json.Unmarshal([]byte(out), &docs); err != nil || len(docs) != 1 {
		t.Fatalf("doc list json: %v %s", err, out)
	}
	if _, err := time.Parse(time.RFC3339, docs[0].Created); err != nil || !strings.HasSuffix(docs[0].Created, "Z") {
		t.Fatalf("doc list created %q is not RFC 3339 UTC", docs[0].Created)
	}
}

// status, checkpoint and the version names head, head~N and draft, as a
// git user reaches for them.
func TestStatusCheckpointAndVersionNames(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	if r := runCLI("--data", data, "init"); r.code != 0 {
		t.Fatal(r)
	}
	v1 := write(t, tmp, "v1.md", "# Notes\n\nOne.\n\nTwo.\n\nThree.\n")
	if r := runCLI("--data", data, "doc", "new", "--id", "n", "--from", v1); r.code != 0 {
		t.Fatal(r)
	}
	if r := runCLI("--data", data, "status", "n"); r.code != 0 || !strings.Contains(r.stdout, "nothing to seal: the draft is v1.r0") {
		t.Errorf("status of a sealed draft: %+v", r)
	}
	// Edit one paragraph, delete one, add one: status counts each.
	v2 := write(t, tmp, "v2.md", "# Notes\n\nOne, edited.\n\nThree.\n\nFour.\n")
	if r := runCLI("--data", data, "doc", "save", "n", "--from", v2); r.code != 0 {
		t.Fatal(r)
	}
	r := runCLI("--data", data, "status", "n", "--format", "json")
	var st docStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("status json: %+v (%v)", r, err)
	}
	if !st.Unsealed || st.Added != 1 || st.Modified != 1 || st.Deleted != 1 || st.SavedBy != "admin" || st.LastChange == "" || st.Head != "v1.r0" {
		t.Errorf("status = %+v, want 1 added, 1 modified, 1 deleted, saved by admin on v1.r0", st)
	}
	if _, err := time.Parse(time.RFC3339, st.UnsealedSince); err != nil || !strings.HasSuffix(st.UnsealedSince, "Z") {
		t.Errorf("unsealedSince %q is not RFC 3339 UTC", st.UnsealedSince)
	}
	all := runCLI("--data", data, "status")
	if all.code != 0 || !strings.Contains(all.stdout, "+1 ~1 -1") || !strings.Contains(all.stdout, "1 draft unsealed") {
		t.Errorf("status of the store: %+v", all)
	}
	// The draft reads as ID@draft, and diff without labels is head -> draft.
	if r := runCLI("--data", data, "show", "n@draft", "--format", "text"); !strings.Contains(r.stdout, "Four.") || strings.Contains(r.stdout, "Two.") {
		t.Errorf("show n@draft: %+v", r)
	}
	d1, d2 := runCLI("--data", data, "diff", "n"), runCLI("--data", data, "diff", "n", "HEAD", "draft")
	if d1 != d2 || !strings.Contains(d1.stdout, "{+, edited+}") {
		t.Errorf("diff n = %+v; diff n HEAD draft = %+v", d1, d2)
	}
	// checkpoint seals it; a message with nothing to seal is an error
	// (exit 4) and leaves the log as it was, with or without doc save.
	if r := runCLI("--data", data, "checkpoint", "n", "-m", "edited"); r.code != 0 || r.stdout != "sealed n as v1.r1\n" {
		t.Errorf("checkpoint: %+v", r)
	}
	for _, args := range [][]string{{"checkpoint", "n", "-m", "again"}, {"doc", "save", "n", "--from", v2, "--checkpoint", "-m", "again"}} {
		r := runCLI(append([]string{"--data", data}, args...)...)
		if r.code != exitConflict || !strings.Contains(r.stderr, "nothing to seal") || !strings.Contains(r.stderr, "message was not recorded") {
			t.Errorf("%v with nothing to seal: %+v, want exit %d", args, r, exitConflict)
		}
	}
	if r := runCLI("--data", data, "checkpoint", "n"); r.code != 0 || !strings.Contains(r.stdout, "nothing to seal") {
		t.Errorf("checkpoint without a message and nothing to seal: %+v", r)
	}
	log := runCLI("--data", data, "log", "n")
	if strings.Count(log.stdout, "\n") != 2 || strings.Contains(log.stdout, "again") {
		t.Errorf("log after refused messages: %q", log.stdout)
	}
	// head~N counts back along the log; every verb that takes a label takes it.
	a, b := runCLI("--data", data, "show", "n@head~1", "--format", "json"), runCLI("--data", data, "show", "n@v1.r0", "--format", "json")
	if a.code != 0 || a != b {
		t.Errorf("show n@head~1 = %+v, want v1.r0's %+v", a, b)
	}
	if r := runCLI("--data", data, "diff", "n", "head~1", "head"); r.code != 0 || !strings.Contains(r.stdout, "+ added") {
		t.Errorf("diff head~1 head: %+v", r)
	}
	if r := runCLI("--data", data, "restore", "n", "HEAD~1"); r.code != 0 || r.stdout != "restored HEAD~1 as v2.r0\n" {
		t.Errorf("restore HEAD~1: %+v", r)
	}
	if r := runCLI("--data", data, "show", "n@head~3"); r.code != exitNotFound || !strings.Contains(r.stderr, "head~2 is the oldest") {
		t.Errorf("head~3 of 3 versions: %+v", r)
	}
	if r := runCLI("--data", data, "restore", "n", "draft"); r.code != exitInvalid || !strings.Contains(r.stderr, "folio checkpoint n") {
		t.Errorf("restore draft: %+v", r)
	}
}
