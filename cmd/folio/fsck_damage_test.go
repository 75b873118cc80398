package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fsck on a store with a damaged table file exits 7, goes on past the
// damaged blocks to report every object and document it can reach, and
// says which documents to bring back from a backup mirror, and how.
func TestFsckDamagedTableFile(t *testing.T) {
	isolateEnv(t)
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	runCLI("--data", data, "init")
	for i := range 30 {
		noise := make([]byte, 3000)
		rand.Read(noise)
		md := writeFile(t, tmp, fmt.Sprintf("d%d.md", i), fmt.Sprintf("# Doc %d\n\n%s\n", i, base64.StdEncoding.EncodeToString(noise)))
		if r := runCLI("--data", data, "doc", "new", "--id", fmt.Sprintf("doc%d", i), "--from", md); r.code != 0 {
			t.Fatal(r)
		}
	}
	if r := runCLI("--data", data, "fsck"); r.code != 0 {
		t.Fatalf("fsck before the damage: %+v", r)
	}
	tables, _ := filepath.Glob(filepath.Join(data, "store", "*.sst"))
	var biggest string
	var size int64
	for _, p := range tables {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			biggest, size = p, fi.Size()
		}
	}
	if size < 50_000 {
		t.Fatalf("no table file to damage: %v", tables)
	}
	f, err := os.OpenFile(biggest, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{size * 3 / 10, size * 7 / 10} { // two data blocks apart
		f.WriteAt(make([]byte, 64), at)
	}
	f.Close()

	r := runCLI("--data", data, "fsck", "--format", "json")
	var rep struct {
		OK       bool
		Damaged  bool
		Problems []struct{ Object, Doc, Problem string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("fsck json: %v\n%+v", err, r)
	}
	if r.code != exitProblems || rep.OK || !rep.Damaged {
		t.Fatalf("fsck of a damaged store: exit %d, %+v; want exit %d", r.code, rep, exitProblems)
	}
	docs, objects := map[string]bool{}, map[string]bool{}
	for _, p := range rep.Problems {
		if p.Doc != "" {
			docs[p.Doc] = true
		}
		if p.Object != "" {
			objects[p.Object] = true
		}
	}
	if len(docs) < 2 || len(objects) < 2 {
		t.Errorf("fsck stopped early: %d documents, %d objects with problems: %+v", len(docs), len(objects), rep.Problems)
	}
	for _, want := range []string{"a table file of the store is damaged", "documents affected", "backup restore --from MIRROR", "folio backup pull"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("fsck's advice lacks %q: %s", want, r.stderr)
		}
	}
	for doc := range docs {
		if !strings.Contains(r.stderr, doc) {
			t.Errorf("the advice does not name %s: %s", doc, r.stderr)
		}
	}
	if text := runCLI("--data", data, "fsck"); text.code != exitProblems || strings.Count(text.stdout, "problem: ") != len(rep.Problems) {
		t.Errorf("fsck text: exit %d, %d problems, json %d", text.code, strings.Count(text.stdout, "problem: "), len(rep.Problems))
	}
}
