package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
)

// TestOwnershipThroughTheCLI: the id oracle, the delete/re-add case and
// chown, through the daemon and directly, as an operator would run them.
func TestOwnershipThroughTheCLI(t *testing.T) {
	isolateEnv(t)
	dir := filepath.Join(t.TempDir(), "data")
	d := startDaemon(t, dir, "")
	admin := []string{"--server", d.url, "--token", d.token}
	addAuthor := func(name string) []string {
		t.Helper()
		var it struct{ Token string }
		r := runCLI(append(admin, "user", "add", name, "--format", "json")...)
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &it) != nil {
			t.Fatalf("user add %s: %+v", name, r)
		}
		return []string{"--server", d.url, "--token", it.Token}
	}
	a, b := addAuthor("author-a"), addAuthor("author-b")
	r := runCLI(append(a, "doc", "new", "--title", "A's draft")...)
	if r.code != 0 {
		t.Fatalf("doc new: %+v", r)
	}
	doc := strings.TrimSpace(r.stdout)
	if !repo.ValidDocID(doc) || len(doc) != 16 {
		t.Fatalf("generated id %q", doc)
	}

	// The oracle: author-b's answer is the same whether the id is taken.
	free := "zz" + doc[2:]
	taken := runCLI(append(b, "doc", "new", "--id", doc, "--title", "B's")...)
	missing := runCLI(append(b, "doc", "new", "--id", free, "--title", "B's")...)
	missing.stdout = strings.ReplaceAll(missing.stdout, free, doc)
	missing.stderr = strings.ReplaceAll(missing.stderr, free, doc)
	if taken != missing || taken.code != exitDenied {
		t.Fatalf("doc new --id answers differ:\ntaken:   %+v\nmissing: %+v", taken, missing)
	}

	// An author cannot chown, whatever the document.
	for _, id := range []string{doc, free} {
		if r := runCLI(append(b, "doc", "chown", id, "author-b")...); r.code != exitDenied || !strings.Contains(r.stderr, "admin") {
			t.Fatalf("author chown %s: %+v", id, r)
		}
	}

	// Delete author-a, add a new author-a: the new one reads nothing of the
	// old one's, exactly as for a missing document.
	if r := runCLI(append(admin, "user", "delete", "author-a")...); r.code != 0 {
		t.Fatalf("user delete: %+v", r)
	}
	a2 := addAuthor("author-a")
	got := runCLI(append(a2, "show", doc)...)
	want := runCLI(append(a2, "show", free)...)
	want.stderr = strings.ReplaceAll(want.stderr, free, doc)
	if got.code != exitNotFound || got != want {
		t.Fatalf("the new author-a reads the old one's document:\n%+v\nmissing: %+v", got, want)
	}
	if r := runCLI(append(admin, "doc", "list")...); !strings.Contains(r.stdout, doc+"  v1.r0") || !strings.Contains(r.stdout, " - ") {
		t.Fatalf("admin's list does not show the document as nobody's:\n%s", r.stdout)
	}

	// The admin gives it to the new author-a, who then reads it.
	if r := runCLI(append(admin, "doc", "chown", doc, "author-a")...); r.code != 0 || r.stdout != "document "+doc+" now belongs to author-a\n" {
		t.Fatalf("chown: %+v", r)
	}
	if r := runCLI(append(a2, "show", doc)...); r.code != 0 {
		t.Fatalf("author-a after chown: %+v", r)
	}
	if r := runCLI(append(admin, "doc", "chown", doc, "nobody-here")...); r.code != exitNotFound {
		t.Fatalf("chown to a missing user: %+v", r)
	}
	if r := runCLI(append(admin, "doc", "chown", free, "author-a")...); r.code != exitNotFound || !strings.Contains(r.stderr, free) {
		t.Fatalf("chown of a missing document: %+v", r)
	}
	remoteAgain := runCLI(append(admin, "doc", "chown", doc, "author-a")...)
	d.stop(t)

	// Direct mode acts as an admin: the same verb, the same output.
	direct := []string{"--data", dir}
	if r := runCLI(append(direct, "doc", "chown", doc, "author-a")...); r != remoteAgain {
		t.Fatalf("direct chown to the owner: %+v, daemon: %+v", r, remoteAgain)
	}
	if r := runCLI(append(direct, "doc", "chown", doc, "author-b")...); r.code != 0 || !strings.Contains(r.stdout, "now belongs to author-b") {
		t.Fatalf("direct chown: %+v", r)
	}
	if r := runCLI(append(direct, "doc", "new", "--id", "picked", "--owner", "author-b", "--title", "x")...); r.code != 0 || r.stdout != "picked\n" {
		t.Fatalf("direct doc new --id: %+v", r)
	}
	// Both reassignments are in the document's stream.
	rp, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	evs, err := stream.Read(rp.DB(), repo.Stream(doc), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range evs {
		if e.Type == repo.EventOwnerChanged {
			var oe repo.OwnerEvent
			if err := kv.Unmarshal(e.Data, &oe); err != nil {
				t.Fatal(err)
			}
			changes = append(changes, oe.ToName+" by "+oe.Actor)
		}
	}
	if strings.Join(changes, ", ") != "author-a by admin, author-b by admin" {
		t.Fatalf("owner changes in the stream: %v", changes)
	}
	if o, _ := rp.DocOwner("picked"); o == "" {
		t.Fatal("doc new --owner left the document to nobody")
	}
}
