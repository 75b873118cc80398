package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/kv/pgkv/pgtest"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/stream"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/refs"
)

var ctx = context.Background()

// clock is a test clock that moves one second per reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func newStore(t testing.TB) (*repo.Repo, *Store) {
	t.Helper()
	dir := t.TempDir()
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(dir, repo.Options{KV: pgtest.Store(t, dir, kv.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c := &clock{t: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)}
	return r, New(r, c.now)
}

func body(texts ...string) flowdoc.Document {
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	for i, s := range texts {
		d.Blocks = append(d.Blocks, flowdoc.Block{ID: fmt.Sprintf("b%d", i), Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: s}}})
	}
	return d
}

func newDoc(t testing.TB, r *repo.Repo, id string, a flowdoc.Attributes) {
	t.Helper()
	if a.Title == "" {
		a.Title = "Title of " + id
	}
	if _, err := r.CreateDoc(ctx, repo.CreateParams{ID: id, Owner: "author-a", Attrs: a, Body: body("first text of " + id)}); err != nil {
		t.Fatal(err)
	}
}

func saveText(t testing.TB, r *repo.Repo, doc, text string) {
	t.Helper()
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	b := body(text)
	if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "author-a", BaseSeq: d.Seq, Body: &b}); err != nil {
		t.Fatal(err)
	}
}

func events(t testing.TB, r *repo.Repo, doc string, types ...string) []stream.Event {
	t.Helper()
	all, err := stream.Read(r.DB(), repo.Stream(doc), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []stream.Event
	for _, e := range all {
		for _, typ := range types {
			if e.Type == typ {
				out = append(out, e)
			}
		}
	}
	return out
}

func TestPublishUnpublishRepublishMovesRefAndRecordsEvents(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "essay", flowdoc.Attributes{Slug: "an-essay"})

	// First publish: the draft is clean, so the head v1.r0 is published.
	res, err := s.Publish(ctx, Params{Doc: "essay", Actor: "author-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Moved || res.Sealed != nil || res.Publication.Label != "v1.r0" || res.Publication.Slug != "an-essay" || res.Publication.Visibility != Public {
		t.Fatalf("first publish = %+v", res)
	}
	v1 := res.Publication.Version

	// An edit, then republish: the unsealed draft is sealed as a publish
	// checkpoint and the ref moves forward to it.
	saveText(t, r, "essay", "second text")
	res, err = s.Publish(ctx, Params{Doc: "essay", Actor: "author-a", Message: "ready"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sealed == nil || res.Sealed.Reason != objstore.ReasonPublish || res.Sealed.Label != "v1.r1" || res.Sealed.Message != "ready" {
		t.Fatalf("republish sealed %+v, want a publish checkpoint v1.r1", res.Sealed)
	}
	if !res.Moved || res.Previous != "v1.r0" || res.Publication.Label != "v1.r1" {
		t.Fatalf("republish = %+v", res)
	}
	v2 := res.Publication.Version
	// A publish with nothing new moves nothing.
	res, err = s.Publish(ctx, Params{Doc: "essay", Actor: "author-a"})
	if err != nil || res.Moved || res.Publication.Label != "v1.r1" {
		t.Fatalf("publish of the published head = %+v, %v", res, err)
	}

	// log marks the published version only.
	vs, err := r.Log(ctx, "essay", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Published != (v.Label == "v1.r1") {
			t.Fatalf("log: %s published=%v", v.Label, v.Published)
		}
	}

	if _, err := s.Unpublish(ctx, "essay", "author-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Refs().Get(repo.PublishedRef("essay")); err == nil {
		t.Fatal("the published ref survived unpublish")
	}
	if _, err := s.ArticleBySlug(ctx, "an-essay", ""); !errors.Is(err, errs.NotFound) {
		t.Fatalf("read after unpublish: %v, want not found", err)
	}
	if _, err := s.Unpublish(ctx, "essay", "author-a"); errs.CodeOf(err) != CodeNotPublished {
		t.Fatalf("second unpublish: %v, want not_published", err)
	}
	vs, _ = r.Log(ctx, "essay", 0, 0)
	for _, v := range vs {
		if v.Published {
			t.Fatalf("log marks %s published after unpublish", v.Label)
		}
	}

	// Reflog: publish v1, publish v2, unpublish.
	log, err := r.Refs().Reflog(repo.PublishedRef("essay"))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		old, new objstore.ID
		msg      string
	}{{objstore.ID{}, v1, "publish v1.r0"}, {v1, v2, "publish v1.r1"}, {v2, objstore.ID{}, "unpublish v1.r1"}}
	if len(log) != len(want) {
		t.Fatalf("reflog has %d entries, want %d: %+v", len(log), len(want), log)
	}
	for i, w := range want {
		if log[i].Old != w.old || log[i].New != w.new || log[i].Message != w.msg {
			t.Fatalf("reflog[%d] = %+v, want %+v", i, log[i], w)
		}
	}
	// Stream: doc.published twice, then doc.unpublished.
	evs := events(t, r, "essay", EventPublished, EventUnpublished)
	if len(evs) != 3 || evs[0].Type != EventPublished || evs[1].Type != EventPublished || evs[2].Type != EventUnpublished {
		t.Fatalf("events = %+v", evs)
	}
	if evs[2].Seq <= evs[1].Seq || evs[1].Seq <= evs[0].Seq {
		t.Fatal("events out of order")
	}
}

func TestSlugUniqueAmongPublishedArticles(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "a", flowdoc.Attributes{Slug: "same"})
	newDoc(t, r, "b", flowdoc.Attributes{Slug: "same"})
	if _, err := s.Publish(ctx, Params{Doc: "a", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Publish(ctx, Params{Doc: "b", Actor: "author-b", MaySee: func(string) bool { return false }})
	if errs.CodeOf(err) != CodeSlugTaken || errs.KindOf(err) != errs.Conflict {
		t.Fatalf("second publish: %v, want slug_taken", err)
	}
	if got := err.Error(); strings.Contains(got, `"a"`) || strings.Contains(got, "Title of a") {
		t.Fatalf("a caller who may not see the other article learns its name: %s", got)
	}
	_, err = s.Publish(ctx, Params{Doc: "b", Actor: "admin", MaySee: func(string) bool { return true }})
	if errs.CodeOf(err) != CodeSlugTaken || !strings.Contains(err.Error(), "Title of a") {
		t.Fatalf("admin's conflict should name the article: %v", err)
	}
	if _, err := r.Refs().Get(repo.PublishedRef("b")); err == nil {
		t.Fatal("the losing publish moved its ref")
	}
	// After a unpublishes, b may take the slug.
	if _, err := s.Unpublish(ctx, "a", "author-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "b", Actor: "author-b"}); err != nil {
		t.Fatal(err)
	}
}

// Concurrent publishes of one slug from different documents, through
// different Stores (as two daemons' worth of callers would be if they
// could share a store): exactly one wins each round.
func TestConcurrentPublishOfOneSlugExactlyOneWins(t *testing.T) {
	r, s1 := newStore(t)
	s2 := New(r, nil)
	const docs, rounds = 6, 5
	for round := 0; round < rounds; round++ {
		slug := fmt.Sprintf("race-%d", round)
		for i := 0; i < docs; i++ {
			newDoc(t, r, fmt.Sprintf("r%d-d%d", round, i), flowdoc.Attributes{Slug: slug})
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errsOf := make([]error, docs)
		for i := 0; i < docs; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				st := s1
				if i%2 == 1 {
					st = s2
				}
				<-start
				_, errsOf[i] = st.Publish(ctx, Params{Doc: fmt.Sprintf("r%d-d%d", round, i), Actor: "author-a"})
			}(i)
		}
		close(start)
		wg.Wait()
		winners := 0
		for i, err := range errsOf {
			switch {
			case err == nil:
				winners++
			case errs.CodeOf(err) == CodeSlugTaken:
			default:
				t.Fatalf("round %d doc %d: %v", round, i, err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d publishes of slug %s won, want exactly 1", round, winners, slug)
		}
		a, err := s1.ArticleBySlug(ctx, slug, "")
		if err != nil {
			t.Fatal(err)
		}
		if errsOf[docIndex(a.Doc)] != nil {
			t.Fatalf("the slug serves %s, which lost", a.Doc)
		}
	}
}

func docIndex(doc string) int {
	var round, i int
	fmt.Sscanf(doc, "r%d-d%d", &round, &i)
	return i
}

func TestVisibilityAndPassword(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "note", flowdoc.Attributes{Slug: "note"})
	if _, err := s.Publish(ctx, Params{Doc: "note", Actor: "author-a", Visibility: Password}); errs.CodeOf(err) != CodePasswordRequired {
		t.Fatalf("password visibility without a password: %v", err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "note", Actor: "author-a", Visibility: Private, Password: "x"}); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("a password with private visibility: %v", err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "note", Actor: "author-a", Visibility: Password, Password: "open sesame"}); err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"", "wrong", "open sesame "} {
		if _, err := s.ArticleBySlug(ctx, "note", pw); errs.CodeOf(err) != CodeArticleNotFound {
			t.Fatalf("password %q: %v, want article_not_found", pw, err)
		}
	}
	a, err := s.ArticleBySlug(ctx, "note", "open sesame")
	if err != nil || a.Visibility != Password || len(a.Body.Blocks) != 1 {
		t.Fatalf("right password: %+v, %v", a, err)
	}
	// The hash is stored, never the password.
	var vr visRec
	if _, err := kv.GetRecord(r.DB(), visKey("note"), &vr); err != nil || strings.Contains(vr.Hash, "open sesame") || !strings.Contains(vr.Hash, "$argon2id$") {
		t.Fatalf("stored visibility record %+v, %v", vr, err)
	}
	// Private at once, without publishing anything new.
	saveText(t, r, "note", "an unpublished edit")
	v, err := s.SetVisibility(ctx, "note", "author-a", Private, "")
	if err != nil || v.Visibility != Private || v.HasPassword || v.Published != "v1.r0" {
		t.Fatalf("SetVisibility = %+v, %v", v, err)
	}
	if _, err := s.ArticleBySlug(ctx, "note", "open sesame"); errs.CodeOf(err) != CodeArticleNotFound {
		t.Fatalf("private article read: %v", err)
	}
	if vs, _ := r.Log(ctx, "note", 0, 0); len(vs) != 1 {
		t.Fatalf("SetVisibility sealed or published something: %d versions", len(vs))
	}
	// Back to password needs a password again: the old one was forgotten.
	if _, err := s.SetVisibility(ctx, "note", "author-a", Password, ""); errs.CodeOf(err) != CodePasswordRequired {
		t.Fatalf("password visibility after private: %v", err)
	}
	if _, err := s.SetVisibility(ctx, "note", "author-a", Public, ""); err != nil {
		t.Fatal(err)
	}
	if a, err := s.ArticleBySlug(ctx, "note", ""); err != nil || a.Label != "v1.r0" {
		t.Fatalf("public again: %+v, %v", a, err)
	}
	if evs := events(t, r, "note", EventVisibility); len(evs) != 3 {
		t.Fatalf("%d doc.visibility events, want 3 (password, private, public)", len(evs))
	}
}

func TestCategoriesCuratedTagsCreatedOnUse(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "post", flowdoc.Attributes{Slug: "post", Category: "Databases", Tags: []string{"Pebble", "storage", "pebble"}})
	if _, err := s.Publish(ctx, Params{Doc: "post", Actor: "author-a"}); errs.CodeOf(err) != CodeCategoryUnknown {
		t.Fatalf("publish with an unknown category: %v", err)
	}
	saveText(t, r, "post", "an edit")
	if _, err := s.Publish(ctx, Params{Doc: "post", Actor: "author-a"}); errs.CodeOf(err) != CodeCategoryUnknown {
		t.Fatalf("publish with an unknown category: %v", err)
	}
	if vs, _ := r.Log(ctx, "post", 0, 0); len(vs) != 1 {
		t.Fatalf("a refused publish sealed a checkpoint: %d versions", len(vs))
	}
	if _, err := s.AddCategory(ctx, "databases", "storage engines"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddCategory(ctx, "DATABASES", ""); errs.CodeOf(err) != CodeCategoryExists {
		t.Fatalf("duplicate category: %v", err)
	}
	res, err := s.Publish(ctx, Params{Doc: "post", Actor: "author-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Publication.Tags) != 2 {
		t.Fatalf("tags %v, want the repeated one dropped", res.Publication.Tags)
	}
	tags, err := s.Tags(ctx)
	if err != nil || len(tags) != 2 || tags[0].Articles != 1 {
		t.Fatalf("tags = %+v, %v", tags, err)
	}
	if _, err := s.DeleteCategory(ctx, "databases"); errs.CodeOf(err) != CodeCategoryInUse {
		t.Fatalf("delete a used category: %v", err)
	}
	page, err := s.PublicList(ctx, ListQuery{Category: "DataBases"})
	if err != nil || len(page.Articles) != 1 {
		t.Fatalf("list by category = %+v, %v", page, err)
	}
	page, err = s.PublicList(ctx, ListQuery{Tag: "storage"})
	if err != nil || len(page.Articles) != 1 {
		t.Fatalf("list by tag = %+v, %v", page, err)
	}
}

func TestPublicListNewestFirstPagedOnlyPublic(t *testing.T) {
	r, s := newStore(t)
	for i := 0; i < 7; i++ {
		id := fmt.Sprintf("p%d", i)
		newDoc(t, r, id, flowdoc.Attributes{Slug: id})
		vis := Public
		if i == 3 {
			vis = Private
		}
		if _, err := s.Publish(ctx, Params{Doc: id, Actor: "author-a", Visibility: vis}); err != nil {
			t.Fatal(err)
		}
	}
	newDoc(t, r, "draft-only", flowdoc.Attributes{})
	var got []string
	q := ListQuery{Limit: 2}
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		page, err := s.PublicList(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Articles {
			got = append(got, a.Doc)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	want := "[p6 p5 p4 p2 p1 p0]"
	if fmt.Sprint(got) != want {
		t.Fatalf("list = %v, want %s", got, want)
	}
	// Republishing keeps an article's place (first publication date).
	saveText(t, r, "p0", "updated")
	if _, err := s.Publish(ctx, Params{Doc: "p0", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	page, _ := s.PublicList(ctx, ListQuery{Limit: 10})
	if last := page.Articles[len(page.Articles)-1]; last.Doc != "p0" || last.Label != "v1.r1" || last.Updated <= last.Published {
		t.Fatalf("republished p0 = %+v", last)
	}
	if _, err := s.PublicList(ctx, ListQuery{Cursor: "zz"}); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestSlugChangeOnRepublishReleasesTheOldOne(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "x", flowdoc.Attributes{Slug: "old-slug"})
	if _, err := s.Publish(ctx, Params{Doc: "x", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	d, _ := r.Draft(ctx, "x")
	a := d.Attrs
	a.Slug = "new-slug"
	if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: "x", Actor: "author-a", BaseSeq: d.Seq, Attrs: &a}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "x", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArticleBySlug(ctx, "old-slug", ""); errs.CodeOf(err) != CodeArticleNotFound {
		t.Fatalf("old slug: %v", err)
	}
	if a, err := s.ArticleBySlug(ctx, "new-slug", ""); err != nil || a.Doc != "x" {
		t.Fatalf("new slug: %+v %v", a, err)
	}
	newDoc(t, r, "y", flowdoc.Attributes{Slug: "old-slug"})
	if _, err := s.Publish(ctx, Params{Doc: "y", Actor: "author-a"}); err != nil {
		t.Fatalf("the released slug is still taken: %v", err)
	}
}

// fsck accepts a published ref into the document's history and reports
// one that names anything else.
func TestFsckChecksPublishedRef(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "a", flowdoc.Attributes{Slug: "a"})
	newDoc(t, r, "b", flowdoc.Attributes{Slug: "b"})
	if _, err := s.Publish(ctx, Params{Doc: "a", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Fsck(ctx, repo.FsckOptions{})
	if err != nil || !rep.OK {
		t.Fatalf("fsck of a published store: %+v, %v", rep, err)
	}
	// Point a's published ref at b's version: a problem fsck must name.
	cur, _ := r.Refs().Get(repo.PublishedRef("a"))
	other, _ := r.Refs().Get(repo.HeadRef("b"))
	if err := r.Refs().Update(r.DB().NewBatch(), []refs.Update{{Name: repo.PublishedRef("a"), Old: cur, New: other}}, "test"); err != nil {
		t.Fatal(err)
	}
	rep, err = r.Fsck(ctx, repo.FsckOptions{})
	if err != nil || rep.OK || !strings.Contains(fmt.Sprint(rep.Problems), "published ref") {
		t.Fatalf("fsck after corrupting the published ref: %+v, %v", rep, err)
	}
}

// TestRefusedPublishSealsNothing: a publish refused for a slug another
// article holds, or for a password visibility without a password, leaves
// the draft unsealed: no publish checkpoint is made.
func TestRefusedPublishSealsNothing(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "a", flowdoc.Attributes{Slug: "same"})
	newDoc(t, r, "b", flowdoc.Attributes{Slug: "same"})
	if _, err := s.Publish(ctx, Params{Doc: "a", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	saveText(t, r, "b", "an unsealed edit")
	before, err := r.Refs().Get(repo.HeadRef("b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Params{{Doc: "b", Actor: "author-b"}, {Doc: "b", Actor: "author-b", Visibility: Password}} {
		if p.Visibility == Password {
			saveAttrs(t, r, "b", flowdoc.Attributes{Title: "Title of b", Slug: "other"})
		}
		if _, err := s.Publish(ctx, p); err == nil {
			t.Fatalf("publish %+v succeeded", p)
		}
		if head, _ := r.Refs().Get(repo.HeadRef("b")); head != before {
			t.Fatalf("a refused publish (%+v) sealed a checkpoint", p)
		}
	}
}

func saveAttrs(t testing.TB, r *repo.Repo, doc string, a flowdoc.Attributes) {
	t.Helper()
	d, err := r.Draft(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "author-a", BaseSeq: d.Seq, Attrs: &a}); err != nil {
		t.Fatal(err)
	}
}
