package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
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

// A pull killed with SIGKILL at random moments leaves a mirror that opens
// and passes fsck; the next pull completes it; after one new checkpoint a
// pull transfers only that checkpoint's objects.
func TestBackupPullKilled(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data, mirror := filepath.Join(tmp, "data"), filepath.Join(tmp, "mirror")
	// A history worth transferring: 40 documents of 15 versions.
	if err := repo.Init(data); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(data, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for d := 0; d < 40; d++ {
		id := fmt.Sprintf("doc%02d", d)
		body := flowdoc.Document{SchemaVersion: 1}
		for b := 0; b < 30; b++ {
			body.Blocks = append(body.Blocks, flowdoc.Block{ID: fmt.Sprintf("p%d", b), Type: flowdoc.Paragraph,
				RichText: []flowdoc.Run{{Text: fmt.Sprintf("document %d paragraph %d, a sentence of some length", d, b)}}})
		}
		if _, err := r.CreateDoc(ctx, repo.CreateParams{ID: id, Owner: "admin", Attrs: flowdoc.Attributes{Title: id}, Body: body}); err != nil {
			t.Fatal(err)
		}
		for v := 1; v < 15; v++ {
			blk := flowdoc.Block{ID: fmt.Sprintf("p%d", v), Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: fmt.Sprintf("revision %d", v)}}}
			dr, _ := r.Draft(ctx, id)
			if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: id, Actor: "admin", BaseSeq: dr.Seq, Seal: "manual",
				Changes: []repo.DraftChange{{Op: repo.ChangeUpsert, Block: &blk}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Close()
	d := startDaemon(t, data, "")

	pullArgs := []string{"--server", d.url, "--token", d.token, "backup", "pull", "--to", mirror, "--format", "json"}
	rnd := rand.New(rand.NewSource(3))
	for k := 0; k < 8; k++ {
		cmd := exec.Command(os.Args[0], pullArgs...)
		cmd.Env = append(os.Environ(), "FOLIO_TEST_MAIN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rnd.Intn(200)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		m, err := repo.Open(mirror, repo.Options{})
		if errors.Is(err, kv.ErrNotInitialized) {
			continue // killed before the mirror was created
		}
		if err != nil {
			t.Fatalf("kill %d: the mirror does not open: %v", k, err)
		}
		rep, err := m.Fsck(ctx, repo.FsckOptions{})
		m.Close()
		if err != nil || !rep.OK {
			t.Fatalf("kill %d: fsck of the mirror: %+v %v", k, rep.Problems, err)
		}
	}
	res := runCLI(pullArgs...)
	if res.code != 0 {
		t.Fatalf("pull after the kills: %+v", res)
	}
	for _, id := range []string{"doc00", "doc17", "doc39"} {
		want := runCLI("--server", d.url, "--token", d.token, "log", id, "--format", "json")
		got := runCLI("--data", mirror, "log", id, "--format", "json")
		if got.stdout != want.stdout || want.code != 0 {
			t.Fatalf("log %s in the mirror differs from the daemon's:\n%s\nwant\n%s", id, got.stdout, want.stdout)
		}
	}
	// One new checkpoint: the next pull carries its objects only (one new
	// block content, the version and its transaction).
	md := write(t, tmp, "new.md", "a wholly new text\n")
	if res := runCLI("--server", d.url, "--token", d.token, "doc", "save", "doc05", "--from", md, "--checkpoint"); res.code != 0 {
		t.Fatalf("save: %+v", res)
	}
	res = runCLI(pullArgs...)
	var p struct {
		Bytes, Objects, New, Moved int
	}
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &p) != nil {
		t.Fatalf("incremental pull: %+v", res)
	}
	if p.New != 3 || p.Objects != 3 || p.Moved != 1 {
		t.Fatalf("incremental pull = %+v, want exactly the 3 objects of the new checkpoint", p)
	}
	t.Logf("incremental pull after one checkpoint: %d bytes, %d objects", p.Bytes, p.Objects)
}
