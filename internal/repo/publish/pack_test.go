package publish

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/kv"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
	"github.com/foliodev/folio/objstore/pack"
)

// Packs carry published refs like heads. A store that imports one knows
// which version was published (its log marks it) but serves nothing until
// the article is published there: visibility and passwords do not travel,
// so a restore never makes a private article public.
func TestPackCarriesPublishedRef(t *testing.T) {
	ra, sa := newStore(t)
	newDoc(t, ra, "essay", flowdoc.Attributes{Slug: "essay"})
	if _, err := sa.Publish(ctx, Params{Doc: "essay", Actor: "author-a", Visibility: Private}); err != nil {
		t.Fatal(err)
	}
	saveText(t, ra, "essay", "an unpublished edit")
	if _, _, err := ra.Checkpoint(ctx, "essay", objstore.ReasonManual, "author-a", ""); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := pack.Export(ctx, pack.Stores{DB: ra.DB(), Objects: ra.Objects(), Refs: ra.Refs()}, &buf, pack.ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range st.Refs {
		names[r.Name] = true
	}
	if !names["docs/essay/head"] || !names["docs/essay/published"] || len(st.Refs) != 2 {
		t.Fatalf("pack refs = %+v", st.Refs)
	}

	rb, sb := newStore(t)
	_, err = pack.Import(ctx, pack.Stores{DB: rb.DB(), Objects: rb.Objects(), Refs: rb.Refs()}, bytes.NewReader(buf.Bytes()), pack.ImportOptions{
		Index: func(_ context.Context, b *kv.Batch, doc string, head objstore.ID) error {
			return rb.IndexInto(ctx, b, doc, head, "author-a")
		}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ra.Refs().Get(repo.PublishedRef("essay"))
	if got, err := rb.Refs().Get(repo.PublishedRef("essay")); err != nil || got != want {
		t.Fatalf("imported published ref = %s, %v; want %s", got.Short(), err, want.Short())
	}
	vs, err := rb.Log(ctx, "essay", 0, 0)
	if err != nil || len(vs) != 2 || !vs[1].Published || vs[0].Published {
		t.Fatalf("imported log = %+v, %v", vs, err)
	}
	if _, err := sb.ArticleBySlug(ctx, "essay", ""); errs.CodeOf(err) != CodeArticleNotFound {
		t.Fatalf("an imported publication is served before it is published here: %v", err)
	}
	// Publishing on the restored store repairs the publication.
	res, err := sb.Publish(ctx, Params{Doc: "essay", Actor: "admin"})
	if err != nil || res.Publication.Label != "v1.r1" {
		t.Fatalf("publish after import: %+v, %v", res, err)
	}
	if a, err := sb.ArticleBySlug(ctx, "essay", ""); err != nil || a.Label != "v1.r1" {
		t.Fatalf("after publishing: %+v, %v", a, err)
	}
}

// The git export tags each published version refs/tags/published/<doc>.
func TestGitExportTagsPublishedVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r, s := newStore(t)
	newDoc(t, r, "essay", flowdoc.Attributes{Slug: "essay"})
	if _, err := s.Publish(ctx, Params{Doc: "essay", Actor: "author-a"}); err != nil {
		t.Fatal(err)
	}
	saveText(t, r, "essay", "later edit")
	if _, _, err := r.Checkpoint(ctx, "essay", objstore.ReasonManual, "author-a", ""); err != nil {
		t.Fatal(err)
	}
	newDoc(t, r, "draft", flowdoc.Attributes{})
	var stream bytes.Buffer
	if _, err := pack.ExportGit(ctx, pack.Stores{DB: r.DB(), Objects: r.Objects(), Refs: r.Refs()}, &stream, pack.GitOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "repo")
	run := func(stdin []byte, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if err := exec.Command("git", "init", "-q", "--initial-branch=main", dir).Run(); err != nil {
		t.Fatal(err)
	}
	run(stream.Bytes(), "fast-import", "--quiet")
	if got := run(nil, "tag", "--list"); got != "published/essay\n" {
		t.Fatalf("tags = %q, want published/essay only", got)
	}
	if subj := run(nil, "log", "-1", "--format=%s", "published/essay"); !strings.Contains(subj, "v1.r0") {
		t.Fatalf("the tag names %q, want the published v1.r0", subj)
	}
	if n := strings.Count(run(nil, "log", "--format=%s", "main"), "\n"); n != 3 {
		t.Fatalf("main has %d commits, want 3 (published refs add no commits)", n)
	}
}
