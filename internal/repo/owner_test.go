package repo

import (
	"context"
	"errors"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/stream"
)

// legacyStore writes what a store of the version before user ids held:
// document records whose owner is a name, and user and token records
// without ids. It returns the repository reopened on it.
func legacyStore(t *testing.T, owners map[string]string, users []string) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	if err := Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for doc, owner := range owners {
		if _, err := r.CreateDoc(ctx, CreateParams{ID: doc, Author: owner, Attrs: flowdoc.Attributes{Title: doc}, Body: docOf(2)}); err != nil {
			t.Fatal(err)
		}
		d, err := r.loadDoc(doc)
		if err != nil {
			t.Fatal(err)
		}
		d.Owner, d.LegacyOwner = "", owner
		b := r.db.NewBatch()
		if err := setRec(b, docKey(doc), d); err != nil {
			t.Fatal(err)
		}
		if err := r.db.Apply(b, kv.Sync); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range users {
		// The old record: no id.
		rec := struct {
			Name    string `msgpack:"name"`
			Role    string `msgpack:"role"`
			Created int64  `msgpack:"created"`
		}{name, auth.RoleAuthor, 1}
		data, _ := kv.Marshal(rec)
		if err := r.db.Set(kv.TableKey("user", name), data, kv.Sync); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if r, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir
}

func TestMigrateOwners(t *testing.T) {
	r, _ := legacyStore(t, map[string]string{"d-a": "author-a", "d-b": "author-b", "d-gone": "author-gone"},
		[]string{"author-a", "author-b"})
	// Before the migration no author reaches anything: owners are names.
	if o, _ := r.DocOwner("d-a"); o != "" {
		t.Fatalf("legacy owner read as %q", o)
	}
	as := auth.New(r.DB())
	rep, err := r.MigrateOwners(ctx, as)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Done || rep.Docs != 3 || len(rep.Orphaned) != 1 || rep.Orphaned[0] != "d-gone" {
		t.Fatalf("report %+v", rep)
	}
	ids := map[string]string{}
	for _, n := range []string{"author-a", "author-b"} {
		u, err := as.GetUser(ctx, n)
		if err != nil || u.ID == "" {
			t.Fatalf("%s: %+v %v", n, u, err)
		}
		ids[n] = u.ID
	}
	for doc, want := range map[string]string{"d-a": ids["author-a"], "d-b": ids["author-b"], "d-gone": ""} {
		if o, err := r.DocOwner(doc); err != nil || o != want {
			t.Fatalf("%s owned by %q (%v), want %q", doc, o, err, want)
		}
	}
	// Versions keep the names they recorded.
	if vs, _ := r.Log(ctx, "d-a", 0, 0); len(vs) != 1 || vs[0].Author != "author-a" {
		t.Fatalf("log %+v", vs)
	}
	// Idempotent: a second run reads the marker and changes nothing.
	rep, err = r.MigrateOwners(ctx, as)
	if err != nil || !rep.Done {
		t.Fatalf("second run %+v %v", rep, err)
	}
	if u, _ := as.GetUser(ctx, "author-a"); u.ID != ids["author-a"] {
		t.Fatalf("the second run changed author-a's id")
	}
	// A user added after the migration with the name of an orphan's old
	// owner does not get the orphan.
	if _, _, err := as.AddUser(ctx, "author-gone", false); err != nil {
		t.Fatal(err)
	}
	if o, _ := r.DocOwner("d-gone"); o != "" {
		t.Fatalf("d-gone went to the new author-gone: %q", o)
	}
}

// failingUsers fails after adding some writes to the batch, as a crash in
// the middle would.
type failingUsers struct{ inner UserIDs }

func (f failingUsers) AssignIDs(ctx context.Context, b *kv.Batch) (map[string]string, error) {
	if _, err := f.inner.AssignIDs(ctx, b); err != nil {
		return nil, err
	}
	return nil, errors.New("disk on fire")
}

// TestMigrateOwnersAllOrNothing: the users, the documents and the marker
// are one batch; a migration that fails leaves the store as it was, and
// the next open migrates it whole.
func TestMigrateOwnersAllOrNothing(t *testing.T) {
	r, _ := legacyStore(t, map[string]string{"d-a": "author-a"}, []string{"author-a"})
	as := auth.New(r.DB())
	if _, err := r.MigrateOwners(ctx, failingUsers{as}); err == nil {
		t.Fatal("the failing migration succeeded")
	}
	if u, _ := as.GetUser(ctx, "author-a"); u.ID != "" {
		t.Fatalf("a failed migration gave author-a an id: %+v", u)
	}
	if ok, _ := kv.Has(r.db, ownersKey()); ok {
		t.Fatal("a failed migration set the marker")
	}
	var d docRec
	if _, err := getRec(r.db, docKey("d-a"), &d); err != nil || d.LegacyOwner != "author-a" || d.Owner != "" {
		t.Fatalf("a failed migration changed d-a: %+v %v", d, err)
	}
	if rep, err := r.MigrateOwners(ctx, as); err != nil || rep.Docs != 1 {
		t.Fatalf("retry %+v %v", rep, err)
	}
	u, _ := as.GetUser(ctx, "author-a")
	if o, _ := r.DocOwner("d-a"); o == "" || o != u.ID {
		t.Fatalf("after the retry d-a is owned by %q, author-a is %q", o, u.ID)
	}
}

func TestChown(t *testing.T) {
	r := newRepo(t)
	v, err := r.CreateDoc(ctx, CreateParams{Owner: "u-one", Author: "one", Attrs: flowdoc.Attributes{Title: "T"}, Body: docOf(1)})
	if err != nil {
		t.Fatal(err)
	}
	prev, err := r.Chown(ctx, ChownParams{Doc: v.Doc, Owner: "u-two", OwnerName: "two", PrevName: "one", Actor: "admin"})
	if err != nil || prev != "u-one" {
		t.Fatalf("chown: %q %v", prev, err)
	}
	if o, _ := r.DocOwner(v.Doc); o != "u-two" {
		t.Fatalf("owner %q", o)
	}
	evs, err := stream.Read(r.db, Stream(v.Doc), 0, 10)
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Type != EventOwnerChanged {
		t.Fatalf("events %+v %v", evs, err)
	}
	var oe OwnerEvent
	if err := kv.Unmarshal(evs[len(evs)-1].Data, &oe); err != nil || oe != (OwnerEvent{From: "u-one", FromName: "one", To: "u-two", ToName: "two", Actor: "admin"}) {
		t.Fatalf("event %+v %v", oe, err)
	}
	if _, err := r.Chown(ctx, ChownParams{Doc: "missing", Owner: "u-two"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("chown of a missing document: %v", err)
	}
	if _, err := r.Chown(ctx, ChownParams{Doc: v.Doc}); err == nil {
		t.Fatal("chown to nobody succeeded")
	}
	// Reindexing keeps the owner; a document without a record gets the
	// owner given, never the author of its first version.
	if err := r.Reindex(ctx, v.Doc, "u-three"); err != nil {
		t.Fatal(err)
	}
	if o, _ := r.DocOwner(v.Doc); o != "u-two" {
		t.Fatalf("reindex changed the owner to %q", o)
	}
	if err := r.db.Delete(docKey(v.Doc), kv.Sync); err != nil {
		t.Fatal(err)
	}
	if err := r.Reindex(ctx, v.Doc, ""); err != nil {
		t.Fatal(err)
	}
	if o, _ := r.DocOwner(v.Doc); o != "" {
		t.Fatalf("a reindexed document without a record is owned by %q, want nobody", o)
	}
}
