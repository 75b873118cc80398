package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Restoring from a mirror brings back every document with its whole
// history, or just the documents named.
func TestBackupRestore(t *testing.T) {
	tmp := t.TempDir()
	mirror, target, one := filepath.Join(tmp, "mirror"), filepath.Join(tmp, "target"), filepath.Join(tmp, "one")
	run(t, "--data", mirror, "init")
	var ids []string
	for i, text := range []string{"first document", "second document"} {
		md := write(t, tmp, "d.md", text+"\n")
		id, _, code := run(t, "--data", mirror, "doc", "new", "--title", text, "--from", md)
		if code != 0 {
			t.Fatal("doc new failed")
		}
		id = strings.TrimSpace(id)
		ids = append(ids, id)
		md2 := write(t, tmp, "e.md", text+", edited "+strings.Repeat("again ", i+1)+"\n")
		if _, stderr, code := run(t, "--data", mirror, "doc", "save", id, "--from", md2, "--checkpoint"); code != 0 {
			t.Fatal(stderr)
		}
	}
	out, stderr, code := run(t, "--data", target, "backup", "restore", "--from", mirror)
	if code != 0 || !strings.Contains(out, "restored 2 documents") {
		t.Fatalf("restore: %d %q %q", code, out, stderr)
	}
	for _, id := range ids {
		want, _, _ := run(t, "--data", mirror, "log", id, "--format", "json")
		got, _, _ := run(t, "--data", target, "log", id, "--format", "json")
		if got != want || want == "" {
			t.Fatalf("log of %s after restore:\n%s\nwant\n%s", id, got, want)
		}
		ws, _, _ := run(t, "--data", mirror, "show", id+"@v1.r0", "--format", "json")
		gs, _, _ := run(t, "--data", target, "show", id+"@v1.r0", "--format", "json")
		if gs != ws {
			t.Fatalf("show %s@v1.r0 after restore differs", id)
		}
	}
	if out, _, code := run(t, "--data", target, "fsck"); code != 0 {
		t.Fatalf("fsck after restore: %s", out)
	}
	// Again: nothing changes.
	out, _, code = run(t, "--data", target, "backup", "restore", "--from", mirror)
	if code != 0 || !strings.Contains(out, "2 unchanged") {
		t.Fatalf("second restore: %d %q", code, out)
	}
	// One document only.
	if out, stderr, code := run(t, "--data", one, "backup", "restore", "--from", mirror, "--doc", ids[1]); code != 0 {
		t.Fatalf("restore --doc: %d %s %s", code, out, stderr)
	}
	list, _, _ := run(t, "--data", one, "doc", "list", "--format", "json")
	if !strings.Contains(list, ids[1]) || strings.Contains(list, ids[0]) {
		t.Fatalf("restore --doc %s gave %s", ids[1], list)
	}
	if _, stderr, code := run(t, "--data", one, "backup", "restore", "--from", mirror, "--doc", "nope"); code != exitNotFound {
		t.Fatalf("restore of an unknown document: %d %q", code, stderr)
	}
}
