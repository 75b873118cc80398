package search

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

var ctx = context.Background()

func newRepo(t testing.TB) *repo.Repo {
	t.Helper()
	r, err := repo.Open(t.TempDir(), repo.Options{KV: kv.Options{Engine: kv.EngineMemory}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func body(texts ...string) flowdoc.Document {
	d := flowdoc.Document{SchemaVersion: 1}
	for i, s := range texts {
		d.Blocks = append(d.Blocks, flowdoc.Block{ID: fmt.Sprintf("p%d", i), Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: s}}})
	}
	return d
}

func createDoc(t testing.TB, r *repo.Repo, owner, title string, tags []string, texts ...string) string {
	t.Helper()
	v, err := r.CreateDoc(ctx, repo.CreateParams{Owner: owner, Author: owner,
		Attrs: flowdoc.Attributes{Title: title, Tags: tags}, Body: body(texts...)})
	if err != nil {
		t.Fatal(err)
	}
	return v.Doc
}

// openIndex opens an index of r, closed at the end of the test.
func openIndex(t testing.TB, r *repo.Repo, o Options) *Index {
	t.Helper()
	x, err := Open(ctx, r, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close(ctx) })
	return x
}

func ids(hits []Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func find(t *testing.T, x *Index, owner, q string) []string {
	t.Helper()
	hits, err := x.Search(ctx, owner, q, 0)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return ids(hits)
}

// TestSearchWhatAWriterSees: documents are found by words of their
// title, body and tags, in the draft and in the head, including Chinese;
// another owner's documents never appear; a deleted document disappears;
// a rebuilt index answers the same.
func TestSearchWhatAWriterSees(t *testing.T) {
	r := newRepo(t)
	garden := createDoc(t, r, "ana", "Notes from the garden", []string{"plants"}, "Tomatoes ripen in August.")
	bread := createDoc(t, r, "ana", "Sourdough", []string{"baking"}, "Feed the starter twice a day.")
	beijing := createDoc(t, r, "ana", "北京的秋天", nil, "故宫的红墙和银杏叶。")
	other := createDoc(t, r, "bo", "Tomatoes for everyone", []string{"plants"}, "Tomatoes everywhere.")

	// A saved draft (unsealed) is searchable at once, and the head's words
	// still find the document until the draft is checkpointed.
	d, err := r.Draft(ctx, bread)
	if err != nil {
		t.Fatal(err)
	}
	nb := body("Rye flour makes a sour crumb.")
	if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: bread, Actor: "ana", BaseSeq: d.Seq, Body: &nb}); err != nil {
		t.Fatal(err)
	}

	x := openIndex(t, r, Options{Manual: true})

	cases := []struct {
		q    string
		want []string
	}{
		{"garden", []string{garden}},      // title
		{"ripen", []string{garden}},       // body
		{"PLANTS", []string{garden}},      // tag, any case; bo's document is not ana's
		{"tomatoes", []string{garden}},    // never bo's
		{"rye crumb", []string{bread}},    // the unsealed draft
		{"starter", []string{bread}},      // the head
		{"rye garden", []string{}},        // every word must match
		{"秋天", []string{beijing}},         // a Chinese title word
		{"银杏", []string{beijing}},         // a Chinese body word
		{"京", []string{beijing}},          // one character
		{"ＧＡＲＤＥＮ", []string{garden}},      // full-width folds
		{"nothing-like-this", []string{}}, // no match is no hit, no error
	}
	check := func(x *Index, label string) {
		t.Helper()
		for _, c := range cases {
			if got := find(t, x, "ana", c.q); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: search %q = %v, want %v", label, c.q, got, c.want)
			}
		}
	}
	check(x, "built")
	if got := find(t, x, "bo", "tomatoes"); !reflect.DeepEqual(got, []string{other}) {
		t.Errorf("bo's search tomatoes = %v, want only bo's %s", got, other)
	}

	// A deleted document disappears from the next query (the delete's
	// outbox entry reached the index), and a rebuild never brings it back.
	if _, err := r.DeleteDoc(ctx, garden, "ana"); err != nil {
		t.Fatal(err)
	}
	cases[0].want, cases[1].want, cases[2].want, cases[3].want = []string{}, []string{}, []string{}, []string{}
	cases[10].want = []string{}
	check(x, "after delete")

	// A new draft save is seen by the next query.
	d, err = r.Draft(ctx, beijing)
	if err != nil {
		t.Fatal(err)
	}
	nb = body("颐和园的湖。")
	if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: beijing, Actor: "ana", BaseSeq: d.Seq, Body: &nb}); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		q    string
		want []string
	}{"颐和园", []string{beijing}})
	check(x, "after update")

	y := openIndex(t, r, Options{Manual: true})
	check(y, "rebuilt")
}

// TestSearchFollowsEveryChange: checkpoints, restores, accepted
// changes, chown, delete, undelete and purge reach the index through
// the outbox, and no query lists the documents.
func TestSearchFollowsEveryChange(t *testing.T) {
	clock := repo.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, err := repo.Open(t.TempDir(), repo.Options{KV: kv.Options{Engine: kv.EngineMemory}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x := openIndex(t, r, Options{Manual: true})
	doc := createDoc(t, r, "ana", "Letters", nil, "A letter about lilacs.")
	expect := func(owner, q string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if got := find(t, x, owner, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s searches %q: %v, want %v", owner, q, got, want)
		}
	}
	expect("ana", "lilacs", doc) // a document created after the index opened
	save := func(text string) {
		t.Helper()
		d, err := r.Draft(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		nb := body(text)
		if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "ana", BaseSeq: d.Seq, Body: &nb}); err != nil {
			t.Fatal(err)
		}
	}
	save("A letter about peonies.")
	if _, _, err := r.Checkpoint(ctx, doc, "manual", "ana", ""); err != nil {
		t.Fatal(err)
	}
	expect("ana", "peonies", doc)
	expect("ana", "lilacs") // neither the draft nor the head holds it now
	log, err := r.Log(ctx, doc, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore(ctx, doc, log[len(log)-1].Label, "ana"); err != nil { // the first version
		t.Fatal(err)
	}
	expect("ana", "lilacs", doc)
	expect("ana", "peonies")
	// A structured change (what an accepted suggestion commits).
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	head, err := r.Show(ctx, doc, "head")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CommitChange(ctx, repo.ChangeParams{Doc: doc, Actor: "ana", Kind: objstore.KindAcceptSuggestion,
		BaseVersion: head.Info.Hash, BaseFingerprint: d.Fingerprint,
		Ops: []flowdoc.Op{{Op: flowdoc.ReplaceBlock, BlockID: "p0",
			Block: &flowdoc.Block{ID: "p0", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "A letter about tulips."}}}}}}); err != nil {
		t.Fatal(err)
	}
	expect("ana", "tulips", doc)
	if _, err := r.Chown(ctx, repo.ChownParams{Doc: doc, Owner: "bo", Actor: "admin"}); err != nil {
		t.Fatal(err)
	}
	expect("ana", "tulips")
	expect("bo", "tulips", doc)
	if _, err := r.DeleteDoc(ctx, doc, "bo"); err != nil {
		t.Fatal(err)
	}
	expect("bo", "tulips")
	if _, err := r.UndeleteDoc(ctx, doc, "admin"); err != nil {
		t.Fatal(err)
	}
	expect("bo", "tulips", doc)
	if _, err := r.DeleteDoc(ctx, doc, "bo"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if rep, err := r.GC(ctx, repo.GCOptions{Prune: -1}); err != nil || rep.Purged != 1 {
		t.Fatalf("gc = %+v, %v; want one document purged", rep, err)
	}
	if _, err := r.UndeleteDoc(ctx, doc, "admin"); err == nil {
		t.Fatal("a purged document came back")
	}
	expect("bo", "tulips")
	if n, err := x.Pending(ctx); err != nil || n != 0 {
		t.Errorf("after the queries %d outbox entries are pending (%v), want 0", n, err)
	}
}

// TestSearchCatchesUpAfterRestart: changes committed while no index
// applied them (a process stopped between the commit and the index
// update) are in the index once it opens again, from its directory,
// without a rebuild.
func TestSearchCatchesUpAfterRestart(t *testing.T) {
	dir := t.TempDir()
	r, err := repo.Open(filepath.Join(dir, "store"), repo.Options{KV: kv.Options{Engine: kv.EngineMemory}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o := Options{Dir: filepath.Join(dir, "search"), Manual: true}
	first := createDoc(t, r, "ana", "Before", nil, "Written before the index existed.")
	x, err := Open(ctx, r, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := find(t, x, "ana", "existed"); !reflect.DeepEqual(got, []string{first}) {
		t.Fatalf("built index: %v", got)
	}
	// The index stops applying (closed without draining): the change is
	// committed, its outbox entry pending.
	if err := x.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second := createDoc(t, r, "ana", "After", nil, "Written while the index was down.")
	if _, err := r.DeleteDoc(ctx, first, "ana"); err != nil {
		t.Fatal(err)
	}
	rebuilt := false
	testAfterApply = func() { rebuilt = true }
	defer func() { testAfterApply = nil }()
	x, err = Open(ctx, r, o)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close(ctx)
	if !rebuilt {
		t.Error("the reopened index applied no outbox entry")
	}
	if got := find(t, x, "ana", "written"); !reflect.DeepEqual(got, []string{second}) {
		t.Errorf("after the restart: %v, want only %s", got, second)
	}
	if n, _ := x.Pending(ctx); n != 0 {
		t.Errorf("%d entries still pending", n)
	}
}

// TestSearchSnippetMarksTheWords: a hit carries the body around the
// match with the matched words marked.
func TestSearchSnippetMarksTheWords(t *testing.T) {
	r := newRepo(t)
	long := strings.Repeat("filler words here. ", 20)
	createDoc(t, r, "ana", "Snippets", nil, long+"The heron stood still in the reeds. "+long)
	createDoc(t, r, "ana", "中文", nil, "我们在北京大学读书。")
	x := openIndex(t, r, Options{Manual: true})
	for _, c := range []struct{ q, marked string }{{"heron", "heron"}, {"北京", "北京"}} {
		hits, err := x.Search(ctx, "ana", c.q, 0)
		if err != nil || len(hits) != 1 {
			t.Fatalf("search %q: %v %v", c.q, hits, err)
		}
		var marked []string
		var all string
		for _, s := range hits[0].Snippet {
			if s.Mark {
				marked = append(marked, s.Text)
			}
			all += s.Text
		}
		if !reflect.DeepEqual(marked, []string{c.marked}) {
			t.Errorf("search %q: marked %q, want [%q] (snippet %q)", c.q, marked, c.marked, all)
		}
		if len(all) > snippetLen+10 {
			t.Errorf("search %q: snippet of %d bytes", c.q, len(all))
		}
	}
}

func TestSearchRefusesBadQueries(t *testing.T) {
	r := newRepo(t)
	x := openIndex(t, r, Options{Manual: true})
	for _, c := range []struct {
		owner, q string
		limit    int
	}{{"ana", "  ", 0}, {"ana", string(make([]byte, MaxQueryBytes+1)), 0}, {"ana", "x", MaxLimit + 1}, {"", "x", 0}} {
		if _, err := x.Search(ctx, c.owner, c.q, c.limit); errs.KindOf(err) != errs.Invalid {
			t.Errorf("Search(%q, %d bytes, limit %d) = %v, want an invalid-input error", c.owner, len(c.q), c.limit, err)
		}
	}
}
