package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore/pack"
	"github.com/foliodev/folio/objstore/pack/packtest"
	"github.com/urfave/cli/v2"
)

// runPack runs the folio CLI with args and returns its output.
func runPack(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	hasData, hasPack := false, false
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			hasData = hasData || n == "data"
		}
	}
	for _, c := range app.Commands {
		hasPack = hasPack || c.Name == "pack"
	}
	if !hasData {
		app.Flags = append(app.Flags, &cli.StringFlag{Name: "data"})
	}
	if !hasPack {
		app.Commands = append(app.Commands, packCommands()...)
	}
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := app.RunContext(context.Background(), append([]string{"folio"}, args...))
	return out.String(), err
}

func seedStore(t *testing.T, dir string, docs, versions int) {
	t.Helper()
	db, err := kv.Open(dir, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := pack.NewStores(db)
	if err := packtest.New(db, s.Objects, s.Refs, 7).Build(docs, versions); err != nil {
		t.Fatal(err)
	}
}

func TestPackCommands(t *testing.T) {
	tmp := t.TempDir()
	src, dst := filepath.Join(tmp, "src"), filepath.Join(tmp, "dst")
	seedStore(t, src, 3, 4)
	full := filepath.Join(tmp, "full.fpack")

	out, err := runPack(t, "--data", src, "pack", "export", "--output", full)
	if err != nil || !strings.Contains(out, "exported 3") && !strings.Contains(out, "heads") {
		t.Fatalf("export: %v\n%s", err, out)
	}
	out, err = runPack(t, "pack", "verify", full)
	if err != nil || !strings.Contains(out, "valid folio pack") || !strings.Contains(out, "12 versions") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	out, err = runPack(t, "--data", dst, "pack", "import", full)
	if err != nil || !strings.Contains(out, "3 created") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, err = runPack(t, "--data", dst, "pack", "import", full)
	if err != nil || !strings.Contains(out, "0 new") || !strings.Contains(out, "3 unchanged") {
		t.Fatalf("second import: %v\n%s", err, out)
	}

	// Incremental: the receiver's heads as the have-file.
	heads, err := runPack(t, "--data", dst, "pack", "heads")
	if err != nil || strings.Count(heads, "\n") != 3 {
		t.Fatalf("heads: %v\n%s", err, heads)
	}
	haveFile := filepath.Join(tmp, "haves")
	os.WriteFile(haveFile, []byte(heads), 0o644)
	inc := filepath.Join(tmp, "inc.fpack")
	out, err = runPack(t, "--data", src, "pack", "export", "--have", haveFile, "--doc", "doc-0001", "-o", inc)
	if err != nil || !strings.Contains(out, "exported 0 objects") {
		t.Fatalf("export with nothing new: %v\n%s", err, out)
	}

	// A damaged pack is refused with its offset; nothing moves.
	data, _ := os.ReadFile(full)
	data[len(data)/2] ^= 1
	bad := filepath.Join(tmp, "bad.fpack")
	os.WriteFile(bad, data, 0o644)
	out, err = runPack(t, "pack", "verify", bad)
	if err == nil || !strings.Contains(err.Error(), "at byte") {
		t.Fatalf("verify of a damaged pack: %v\n%s", err, out)
	}
	if _, err = runPack(t, "--data", dst, "pack", "import", bad); err == nil {
		t.Fatal("import of a damaged pack succeeded")
	}
	if _, err = runPack(t, "--data", dst, "pack", "import", full, "--into", "nightly"); err == nil || !strings.Contains(err.Error(), "backup/NAME") {
		t.Fatalf("--into without backup/: %v", err)
	}
	out, err = runPack(t, "--data", dst, "pack", "import", "--into", "backup/nightly", full)
	if err != nil || !strings.Contains(out, "3 set") {
		t.Fatalf("import --into: %v\n%s", err, out)
	}

	gitOut := filepath.Join(tmp, "history.fi")
	out, err = runPack(t, "--data", src, "export", "git", "--doc", "doc-0002", "-o", gitOut)
	if err != nil || !strings.Contains(out, "1 documents as 4 commits") {
		t.Fatalf("export git: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(gitOut); !bytes.HasPrefix(b, []byte("commit refs/heads/main\n")) || !bytes.HasSuffix(b, []byte("done\n")) {
		t.Fatalf("git stream starts %q", b[:min(len(b), 40)])
	}
}
