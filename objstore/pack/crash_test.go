package pack_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/objstore/pack"
)

// TestImportKillHelper is the child of TestImportSurvivesKill: it imports
// FOLIO_PACK_FILE into FOLIO_PACK_DATA and is killed with SIGKILL midway.
func TestImportKillHelper(t *testing.T) {
	file, data := os.Getenv("FOLIO_PACK_FILE"), os.Getenv("FOLIO_PACK_DATA")
	if file == "" {
		t.Skip("helper process for TestImportSurvivesKill")
	}
	db, err := kv.Open(data, kv.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = f
	if os.Getenv("FOLIO_PACK_STREAM") != "" {
		r = struct{ io.Reader }{f} // not seekable: objects are staged while reading
	}
	os.Stdout.WriteString("importing\n")
	if _, err := pack.Import(context.Background(), pack.NewStores(db), r, pack.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// TestImportSurvivesKill kills real importing processes at random moments:
// afterwards the store opens, either no head or every head of the pack is
// there, every head's history is complete, and importing again finishes
// the job.
func TestImportSurvivesKill(t *testing.T) {
	src := openStore(t)
	docs, versions, rounds := 30, 20, 6
	if testing.Short() {
		docs, versions, rounds = 10, 10, 2
	}
	build(t, src, docs, versions)
	data, st := exportAll(t, src, pack.ExportOptions{})
	dir := t.TempDir()
	file := filepath.Join(dir, "all.fpack")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := refsOf(t, src, "docs/")
	// Kill within the time an import takes here, measured once.
	t0 := time.Now()
	if _, err := pack.Import(context.Background(), openStore(t), bytes.NewReader(data), pack.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for i := 0; i < rounds; i++ {
		target := filepath.Join(dir, "dst"+string(rune('a'+i)))
		cmd := exec.Command(os.Args[0], "-test.run=^TestImportKillHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "FOLIO_PACK_FILE="+file, "FOLIO_PACK_DATA="+target)
		if i%2 == 1 {
			cmd.Env = append(cmd.Env, "FOLIO_PACK_STREAM=1")
		}
		var out bytes.Buffer
		cmd.Stderr = &out
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if line != "importing\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper said %q\n%s", line, out.String())
		}
		go io.Copy(io.Discard, stdout)
		delay := time.Duration(rng.Int63n(int64(took) * 6 / 5))
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		killed := false
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("helper failed: %v\n%s", err, out.String())
			}
		case <-time.After(delay):
			cmd.Process.Kill()
			<-done
			killed = true
		}

		db, err := kv.Open(target, kv.Options{Create: true})
		if err != nil {
			t.Fatalf("round %d: store does not open after kill: %v", i, err)
		}
		s := pack.NewStores(db)
		got := refsOf(t, s, "docs/")
		if len(got) != 0 && len(got) != len(want) {
			t.Fatalf("round %d (killed after %s): %d of %d heads moved; heads move all or none", i, delay, len(got), len(want))
		}
		for n, id := range got {
			if want[n] != id {
				t.Fatalf("round %d: %s = %s, want %s", i, n, id.Short(), want[n].Short())
			}
		}
		if len(got) > 0 { // every head's history must be complete
			if _, err := pack.Export(context.Background(), s, io.Discard, pack.ExportOptions{}); err != nil {
				t.Fatalf("round %d: heads moved but history incomplete: %v", i, err)
			}
		}
		f, _ := os.Open(file)
		res, err := pack.Import(context.Background(), s, f, pack.ImportOptions{})
		f.Close()
		if err != nil {
			t.Fatalf("round %d: import after kill: %v", i, err)
		}
		if after := refsOf(t, s, "docs/"); len(after) != len(want) {
			t.Fatalf("round %d: %d heads after re-import, want %d", i, len(after), len(want))
		}
		if n := len(objects(t, s)); uint64(n) != st.Objects {
			t.Fatalf("round %d: %d objects after re-import, want %d", i, n, st.Objects)
		}
		t.Logf("round %d: killed=%v after %s; heads before re-import %d; re-import wrote %d objects", i, killed, delay, len(got), res.New)
		db.Close()
	}
}
