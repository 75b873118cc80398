package publish

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
)

// probe publishes a fresh public document with slug and unpublishes it
// again, returning the publish's error code ("" when it succeeded): what
// an author learns by trying a slug.
func probe(t *testing.T, r *repo.Repo, s *Store, n int, slug string) string {
	t.Helper()
	doc := fmt.Sprintf("probe-%d", n)
	newDoc(t, r, doc, flowdoc.Attributes{Slug: slug})
	_, err := s.Publish(ctx, Params{Doc: doc, Actor: "author-b", MaySee: func(d string) bool { return d == doc }})
	if err != nil {
		if errs.CodeOf(err) == "" {
			t.Fatalf("probe %s: %v", slug, err)
		}
		return errs.CodeOf(err)
	}
	if _, err := s.Unpublish(ctx, doc, "author-b"); err != nil {
		t.Fatal(err)
	}
	return ""
}

// An author who tries slugs gets the same answers from a store full of
// hidden articles (private ones, drafts never published, articles that
// were public and turned private) as from a store with only the public
// site's articles: slug_taken depends on nothing a visitor cannot see.
func TestSlugProbeLearnsNothingOfHiddenArticles(t *testing.T) {
	site := func(t *testing.T, hidden bool) (*repo.Repo, *Store) {
		r, s := newStore(t)
		newDoc(t, r, "pub", flowdoc.Attributes{Slug: "on-the-site"})
		newDoc(t, r, "pw", flowdoc.Attributes{Slug: "behind-a-password"})
		if _, err := s.Publish(ctx, Params{Doc: "pub", Actor: "author-a"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Publish(ctx, Params{Doc: "pw", Actor: "author-a", Visibility: Password, Password: "open sesame"}); err != nil {
			t.Fatal(err)
		}
		if !hidden {
			return r, s
		}
		newDoc(t, r, "priv", flowdoc.Attributes{Slug: "private-one"})
		if _, err := s.Publish(ctx, Params{Doc: "priv", Actor: "author-a", Visibility: Private}); err != nil {
			t.Fatal(err)
		}
		newDoc(t, r, "draft", flowdoc.Attributes{Slug: "never-published"})
		newDoc(t, r, "was-public", flowdoc.Attributes{Slug: "was-public"})
		if _, err := s.Publish(ctx, Params{Doc: "was-public", Actor: "author-a"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetVisibility(ctx, "was-public", "author-a", Private, ""); err != nil {
			t.Fatal(err)
		}
		newDoc(t, r, "was-pw", flowdoc.Attributes{Slug: "was-password"})
		if _, err := s.Publish(ctx, Params{Doc: "was-pw", Actor: "author-a", Visibility: Password, Password: "open sesame"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Publish(ctx, Params{Doc: "was-pw", Actor: "author-a", Visibility: Private}); err != nil {
			t.Fatal(err)
		}
		return r, s
	}
	slugs := []string{"on-the-site", "behind-a-password", "private-one", "never-published", "was-public", "was-password", "nobody-has-it"}
	rh, sh := site(t, true)
	rp, sp := site(t, false)
	for i, slug := range slugs {
		got, want := probe(t, rh, sh, i, slug), probe(t, rp, sp, i, slug)
		if got != want {
			t.Errorf("slug %q: %q with hidden articles, %q without: the answer tells of a hidden article", slug, got, want)
		}
	}
	if got := probe(t, rh, sh, 100, "on-the-site"); got != CodeSlugTaken {
		t.Fatalf("a public article's slug: %q, want slug_taken", got)
	}
}

// A published article holds its slug while it is reachable, gives it up
// when it turns private and claims it again when it turns public or
// password, through Publish and through SetVisibility; an article that
// wants back a slug a public article took meanwhile is refused and
// stays as it was.
func TestSlugMovesWithVisibility(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "a", flowdoc.Attributes{Slug: "shared"})
	newDoc(t, r, "b", flowdoc.Attributes{Slug: "shared"})
	if _, err := s.Publish(ctx, Params{Doc: "a", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	serves := func(want string) {
		t.Helper()
		art, err := s.ArticleBySlug(ctx, "shared", "")
		switch {
		case want == "" && errs.CodeOf(err) != CodeArticleNotFound:
			t.Fatalf("slug serves %+v, %v; want nothing", art, err)
		case want != "" && (err != nil || art.Doc != want):
			t.Fatalf("slug serves %+v, %v; want %s", art, err, want)
		}
	}
	serves("a")
	// public -> private releases the slug: b takes it.
	if _, err := s.SetVisibility(ctx, "a", "author-a", Private, ""); err != nil {
		t.Fatal(err)
	}
	serves("")
	if _, err := s.Publish(ctx, Params{Doc: "b", Actor: "author-b"}); err != nil {
		t.Fatalf("the slug of a private article is still taken: %v", err)
	}
	serves("b")
	// private -> public while b holds it: refused both ways, a stays private.
	if _, err := s.SetVisibility(ctx, "a", "author-a", Public, ""); errs.CodeOf(err) != CodeSlugTaken {
		t.Fatalf("SetVisibility public onto a taken slug: %v", err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "a", Actor: "author-a", Visibility: Password, Password: "open sesame"}); errs.CodeOf(err) != CodeSlugTaken {
		t.Fatalf("Publish password onto a taken slug: %v", err)
	}
	if v, _, err := s.Status(ctx, "a"); err != nil || v.Visibility != Private {
		t.Fatalf("the refused change moved a's visibility: %+v %v", v, err)
	}
	serves("b")
	// b turns private (through Publish): a may become public again.
	if _, err := s.Publish(ctx, Params{Doc: "b", Actor: "author-b", Visibility: Private}); err != nil {
		t.Fatal(err)
	}
	serves("")
	if _, err := s.SetVisibility(ctx, "a", "author-a", Public, ""); err != nil {
		t.Fatal(err)
	}
	serves("a")
	// public -> password keeps the claim; password -> private drops it;
	// unpublishing a private article touches no claim.
	if _, err := s.SetVisibility(ctx, "a", "author-a", Password, "open sesame"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "b", Actor: "author-b", Visibility: Public}); errs.CodeOf(err) != CodeSlugTaken {
		t.Fatalf("b onto a password article's slug: %v", err)
	}
	if _, err := s.SetVisibility(ctx, "a", "author-a", Private, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Unpublish(ctx, "a", "author-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, Params{Doc: "b", Actor: "author-b", Visibility: Public}); err != nil {
		t.Fatal(err)
	}
	serves("b")
	if _, err := s.Unpublish(ctx, "b", "author-b"); err != nil {
		t.Fatal(err)
	}
	serves("")
}

// A store written before private articles stopped holding slugs has
// claims of private articles; such a claim is released for the article
// that wants the slug, and the private article can become public again
// only while no one else holds it.
func TestLegacyClaimOfPrivateArticleIsReleased(t *testing.T) {
	r, s := newStore(t)
	newDoc(t, r, "old", flowdoc.Attributes{Slug: "legacy"})
	if _, err := s.Publish(ctx, Params{Doc: "old", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	// What the old SetVisibility wrote: the visibility, not the claim.
	b := r.DB().NewBatch()
	if err := kv.SetRecord(b, visKey("old"), visRec{Visibility: Private}); err != nil {
		t.Fatal(err)
	}
	if err := r.DB().Apply(b, kv.Sync); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Refs().Get(SlugRef("legacy")); err != nil {
		t.Fatalf("setup: no legacy claim: %v", err)
	}
	newDoc(t, r, "new", flowdoc.Attributes{Slug: "legacy"})
	if _, err := s.Publish(ctx, Params{Doc: "new", Actor: "author-b"}); err != nil {
		t.Fatalf("a legacy claim of a private article refused the slug: %v", err)
	}
	if _, err := s.SetVisibility(ctx, "old", "author-a", Public, ""); errs.CodeOf(err) != CodeSlugTaken {
		t.Fatalf("old onto new's slug: %v", err)
	}
}

// Private articles sharing one slug turn public at the same moment,
// through two Stores: exactly one gets the slug, the others stay private.
func TestConcurrentVisibilityChangesOneSlugExactlyOneWins(t *testing.T) {
	r, s1 := newStore(t)
	s2 := New(r, nil)
	const docs = 6
	for i := 0; i < docs; i++ {
		doc := fmt.Sprintf("v%d", i)
		newDoc(t, r, doc, flowdoc.Attributes{Slug: "contested"})
		if _, err := s1.Publish(ctx, Params{Doc: doc, Actor: "author-a", Visibility: Private}); err != nil {
			t.Fatal(err)
		}
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
			_, errsOf[i] = st.SetVisibility(ctx, fmt.Sprintf("v%d", i), "author-a", Public, "")
		}(i)
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errsOf {
		switch {
		case err == nil && winner != "":
			t.Fatalf("v%d and %s both turned public with one slug", i, winner)
		case err == nil:
			winner = fmt.Sprintf("v%d", i)
		case errs.KindOf(err) != errs.Conflict:
			t.Fatalf("v%d: %v", i, err)
		}
	}
	if winner == "" {
		t.Fatal("no article got the slug")
	}
	if art, err := s1.ArticleBySlug(ctx, "contested", ""); err != nil || art.Doc != winner {
		t.Fatalf("slug serves %+v, %v; want %s", art, err, winner)
	}
	checkSlugsUnique(t, r, s1, docs, "v%d")
}

// checkSlugsUnique asserts the invariant of public URLs: no two reachable
// published articles share a slug, and each is served under its own.
func checkSlugsUnique(t *testing.T, r *repo.Repo, s *Store, n int, name string) {
	t.Helper()
	bySlug := map[string]string{}
	for i := 0; i < n; i++ {
		doc := fmt.Sprintf(name, i)
		v, pub, err := s.Status(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		if pub == nil || !reachable(v.Visibility) {
			continue
		}
		if other, ok := bySlug[pub.Slug]; ok {
			t.Fatalf("%s and %s are both reachable under slug %q", other, doc, pub.Slug)
		}
		bySlug[pub.Slug] = doc
		pw := ""
		if v.Visibility == Password {
			pw = "open sesame"
		}
		if art, err := s.ArticleBySlug(ctx, pub.Slug, pw); err != nil || art.Doc != doc {
			t.Fatalf("%s (%s) is not served under its slug %q: %+v %v", doc, v.Visibility, pub.Slug, art, err)
		}
	}
}

// Random publishes, unpublishes, visibility and slug changes over a few
// documents and slugs never leave two reachable articles on one slug.
func TestRandomVisibilityChurnKeepsSlugsUnique(t *testing.T) {
	r, s := newStore(t)
	const docs = 5
	slugs := []string{"one", "two", "three"}
	rng := rand.New(rand.NewSource(19))
	for i := 0; i < docs; i++ {
		newDoc(t, r, fmt.Sprintf("c%d", i), flowdoc.Attributes{Slug: slugs[i%len(slugs)]})
	}
	vis := []string{Public, Private, Password}
	for step := 0; step < 300; step++ {
		doc := fmt.Sprintf("c%d", rng.Intn(docs))
		var err error
		switch rng.Intn(4) {
		case 0:
			v := vis[rng.Intn(3)]
			pw := ""
			if v == Password {
				pw = "open sesame"
			}
			_, err = s.Publish(ctx, Params{Doc: doc, Actor: "author-a", Visibility: v, Password: pw})
		case 1:
			_, err = s.Unpublish(ctx, doc, "author-a")
		case 2:
			v := vis[rng.Intn(3)]
			pw := ""
			if v == Password {
				pw = "open sesame"
			}
			_, err = s.SetVisibility(ctx, doc, "author-a", v, pw)
		case 3:
			d, derr := r.Draft(ctx, doc)
			if derr != nil {
				t.Fatal(derr)
			}
			a := d.Attrs
			a.Slug = slugs[rng.Intn(len(slugs))]
			_, err = r.SaveDraft(ctx, repo.SaveParams{Doc: doc, Actor: "author-a", BaseSeq: d.Seq, Attrs: &a})
		}
		if c := errs.CodeOf(err); err != nil && c != CodeSlugTaken && c != CodeNotPublished {
			t.Fatalf("step %d on %s: %v", step, doc, err)
		}
		checkSlugsUnique(t, r, s, docs, "c%d")
	}
}
