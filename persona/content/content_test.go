package content_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/persona"
	"github.com/foliodev/folio/persona/content"
	"github.com/foliodev/folio/persona/index"
	"github.com/foliodev/folio/persona/source"
)

var ctx = context.Background()

type world struct {
	r   *repo.Repo
	pub *publish.Store
	src *content.Sources
	dir string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	if err := repo.Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := repo.Open(dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	pub := publish.New(r, nil)
	return &world{r: r, pub: pub, src: content.New(r, pub), dir: dir}
}

func (w *world) service(t *testing.T, sw persona.Switches) *persona.Service {
	t.Helper()
	idx, err := index.Open(ctx, w.r.DB(), filepath.Join(w.dir, "index"), persona.IndexSource(), index.Options{Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close(ctx) })
	return persona.New(w.r.DB(), idx, sw, persona.Options{})
}

func body(texts ...string) flowdoc.Document {
	d := flowdoc.Document{SchemaVersion: flowdoc.SchemaVersion}
	for i, s := range texts {
		d.Blocks = append(d.Blocks, flowdoc.Block{ID: fmt.Sprintf("b%d", i), Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: s}}})
	}
	return d
}

// doc creates document id of owner with texts.
func (w *world) doc(t *testing.T, owner, id string, texts ...string) {
	t.Helper()
	if _, err := w.r.CreateDoc(ctx, repo.CreateParams{ID: id, Owner: owner, Author: owner,
		Attrs: flowdoc.Attributes{Title: "Title of " + id}, Body: body(texts...)}); err != nil {
		t.Fatal(err)
	}
}

// edit saves texts as doc's draft.
func (w *world) edit(t *testing.T, id string, texts ...string) {
	t.Helper()
	d, err := w.r.Draft(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	b := body(texts...)
	if _, err := w.r.SaveDraft(ctx, repo.SaveParams{Doc: id, Actor: "author-a", BaseSeq: d.Seq, Body: &b}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) publish(t *testing.T, id, vis string) publish.Publication {
	t.Helper()
	p := publish.Params{Doc: id, Actor: "author-a", Visibility: vis}
	if vis == publish.Password {
		p.Password = "correct horse battery"
	}
	res, err := w.pub.Publish(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return res.Publication
}

var allOn = persona.Switches{Enabled: true, Style: true, Learning: true, Memory: true}

const user = "uauthora"

func TestCurrentPinsThePublishedVersionNotTheDraft(t *testing.T) {
	w := newWorld(t)
	w.doc(t, user, "d1", "我在2019年加入星火公司。", "第二段。")
	if st, err := w.src.Current(ctx, user, "d1"); err != nil || st.Published {
		t.Fatalf("unpublished: %+v %v", st, err)
	}
	pub := w.publish(t, "d1", publish.Public)
	w.edit(t, "d1", "草稿里的新文字，还没有发布。")
	st, err := w.src.Current(ctx, user, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Published || st.Visibility != publish.Public || st.Pin.Version != source.VersionID(pub.Version) || st.Pin.Label != pub.Label {
		t.Fatalf("state %+v, want the published %s", st, pub.Label)
	}
	d, err := w.src.Load(ctx, st.Pin)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Blocks) != 2 || d.Blocks[0].Text != "我在2019年加入星火公司。" {
		t.Fatalf("loaded %+v, want the published text", d.Blocks)
	}
	// A pin whose body does not match is refused.
	bad := st.Pin
	bad.Fingerprint[0] ^= 1
	if _, err := w.src.Load(ctx, bad); errs.KindOf(err) != errs.Corrupt {
		t.Fatalf("load of a wrong pin: %v, want corrupt", err)
	}
	// Another user's document is not found, like a missing one.
	if _, err := w.src.Current(ctx, "uauthorb", "d1"); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("another user's document: %v", err)
	}
	if _, err := w.src.Current(ctx, user, "nosuch"); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("missing document: %v", err)
	}
}

func TestGenerateOverPublishing(t *testing.T) {
	w := newWorld(t)
	w.doc(t, user, "pub1", "我在2019年加入星火公司，担任工程师。", "那一年我搬到了杭州。")
	w.doc(t, user, "priv1", "我在2015年毕业于南京大学。")
	w.doc(t, user, "draft1", "我从未发布这篇。")
	w.publish(t, "pub1", publish.Public)
	w.publish(t, "priv1", publish.Private)

	svc := w.service(t, allOn)
	p, err := svc.Create(ctx, user, "博客", []string{"pub1", "draft1"})
	if err != nil {
		t.Fatal(err)
	}
	// An unpublished source is refused when the generation starts.
	if _, err := svc.Generate(ctx, persona.GenerateRequest{User: user, Persona: p.ID}, w.src, nil); errs.CodeOf(err) != persona.CodeSourceUnpublished {
		t.Fatalf("unpublished source: %v", err)
	}
	// A private source without the switch is refused; the choice at
	// creation authorized nothing.
	if _, err := svc.SetSources(ctx, user, p.ID, []string{"pub1", "priv1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Generate(ctx, persona.GenerateRequest{User: user, Persona: p.ID}, w.src, nil); errs.CodeOf(err) != persona.CodePrivateSource {
		t.Fatalf("private source without the switch: %v", err)
	}
	if _, err := svc.Versions(ctx, user, p.ID); err != nil {
		t.Fatal(err)
	}
	// Public only: a version is made, pinned to the published versions.
	if _, err := svc.SetSources(ctx, user, p.ID, []string{"pub1"}); err != nil {
		t.Fatal(err)
	}
	v, err := svc.Generate(ctx, persona.GenerateRequest{User: user, Persona: p.ID}, w.src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Sources) != 1 || v.Sources[0].Pin.Doc != "pub1" || !v.Sources[0].Memory || v.Memory == "" {
		t.Fatalf("version %+v", v)
	}
	// Turning the article private afterwards: the next generation checks
	// again and refuses.
	if _, err := w.pub.SetVisibility(ctx, "pub1", "author-a", publish.Private, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Generate(ctx, persona.GenerateRequest{User: user, Persona: p.ID}, w.src, nil); errs.CodeOf(err) != persona.CodePrivateSource {
		t.Fatalf("source turned private: %v", err)
	}
	if got, _ := svc.Get(ctx, user, p.ID); got.Active != v.Seq {
		t.Fatalf("active %d after a refused generation, want %d", got.Active, v.Seq)
	}
}

func TestPrivateSourcesWithTheSwitches(t *testing.T) {
	w := newWorld(t)
	w.doc(t, user, "pub1", "我在2019年加入星火公司。")
	w.doc(t, user, "priv1", "我在2015年毕业于南京大学。")
	w.publish(t, "pub1", publish.Public)
	w.publish(t, "priv1", publish.Password)

	// send_private_to_provider without private_memory: the private
	// source shapes the style but not the memory.
	sw := allOn
	sw.SendPrivate = true
	svc := w.service(t, sw)
	p, err := svc.Create(ctx, user, "博客", []string{"pub1", "priv1"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := svc.Generate(ctx, persona.GenerateRequest{User: user, Persona: p.ID}, w.src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Sources) != 2 || !v.Sources[0].Memory || v.Sources[1].Memory || len(v.Notes) != 1 {
		t.Fatalf("sources %+v notes %q", v.Sources, v.Notes)
	}
	_, items, err := svc.MemoryItems(ctx, user, p.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		for _, d := range it.Docs() {
			if d == "priv1" {
				t.Fatalf("memory item %q comes from the private source", it.Statement)
			}
		}
	}
	if len(items) == 0 {
		t.Fatal("no memory from the public source")
	}
}

// movingSources republishes a source after the generation pinned it.
type movingSources struct {
	*content.Sources
	calls atomic.Int32
	move  func()
}

func (m *movingSources) Current(ctx context.Context, user, doc string) (persona.SourceState, error) {
	if m.calls.Add(1) == 2 { // the first call pinned; the second verifies
		m.move()
	}
	return m.Sources.Current(ctx, user, doc)
}

func TestRepublishDuringGenerationConflicts(t *testing.T) {
	w := newWorld(t)
	w.doc(t, user, "pub1", "我在2019年加入星火公司。")
	w.publish(t, "pub1", publish.Public)
	svc := w.service(t, allOn)
	p, err := svc.Create(ctx, user, "博客", []string{"pub1"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := svc.Generate(ctx, persona.GenerateRequest{User: user, Persona: p.ID}, w.src, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &movingSources{Sources: w.src, move: func() {
		w.edit(t, "pub1", "我在2020年加入星火公司。")
		w.publish(t, "pub1", "")
	}}
	_, err = svc.Generate(ctx, persona.GenerateRequest{User: user, Persona: p.ID}, m, nil)
	if errs.CodeOf(err) != persona.CodeSourceChanged || errs.KindOf(err) != errs.Conflict {
		t.Fatalf("republished during generation: %v, want source_changed", err)
	}
	got, err := svc.Get(ctx, user, p.ID)
	if err != nil || got.Active != first.Seq || got.Versions != first.Seq {
		t.Fatalf("persona %+v %v: the first version must stay active", got, err)
	}
}

func TestCandidatesArePublishedOtherArticlesOfTheUser(t *testing.T) {
	w := newWorld(t)
	w.doc(t, user, "cur", "当前文章。")
	w.doc(t, user, "a", "杭州的春天。")
	w.doc(t, user, "b", "私密日记。")
	w.doc(t, user, "c", "还没发布。")
	w.doc(t, "uauthorb", "other", "别人的文章。")
	for _, d := range []string{"cur", "a", "other"} {
		w.publish(t, d, publish.Public)
	}
	w.publish(t, "b", publish.Private)
	docs := func(allow bool) []string {
		cs, err := w.src.Candidates(ctx, user, "cur", allow)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, c.Doc)
			if c.Pin.Version.IsZero() || c.Text == "" {
				t.Fatalf("candidate %+v has no pin or text", c)
			}
		}
		return out
	}
	if got := fmt.Sprint(docs(false)); got != "[a]" {
		t.Fatalf("candidates %s, want [a]", got)
	}
	if got := fmt.Sprint(docs(true)); got != "[b a]" && got != "[a b]" {
		t.Fatalf("candidates with private allowed %s, want a and b", got)
	}
}
