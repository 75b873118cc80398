package search

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
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

	x, err := Build(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()

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

	// A deleted document disappears once the index is synced, and a
	// rebuild never brings it back.
	if _, err := r.DeleteDoc(ctx, garden, "ana"); err != nil {
		t.Fatal(err)
	}
	if err := x.Sync(ctx, r); err != nil {
		t.Fatal(err)
	}
	cases[0].want, cases[1].want, cases[2].want, cases[3].want = []string{}, []string{}, []string{}, []string{}
	cases[10].want = []string{}
	check(x, "after delete")

	// A new draft save is seen after a Sync.
	d, err = r.Draft(ctx, beijing)
	if err != nil {
		t.Fatal(err)
	}
	nb = body("颐和园的湖。")
	if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: beijing, Actor: "ana", BaseSeq: d.Seq, Body: &nb}); err != nil {
		t.Fatal(err)
	}
	if err := x.Sync(ctx, r); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct {
		q    string
		want []string
	}{"颐和园", []string{beijing}})
	check(x, "after update")

	y, err := Build(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	check(y, "rebuilt")
}

func TestSearchRefusesBadQueries(t *testing.T) {
	r := newRepo(t)
	x, err := Build(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, c := range []struct {
		owner, q string
		limit    int
	}{{"ana", "  ", 0}, {"ana", string(make([]byte, MaxQueryBytes+1)), 0}, {"ana", "x", MaxLimit + 1}, {"", "x", 0}} {
		if _, err := x.Search(ctx, c.owner, c.q, c.limit); errs.KindOf(err) != errs.Invalid {
			t.Errorf("Search(%q, %d bytes, limit %d) = %v, want an invalid-input error", c.owner, len(c.q), c.limit, err)
		}
	}
}
