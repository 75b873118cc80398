package server

import (
	"testing"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
)

// The document list carries each document's last change and its
// published marker, which follow publish, save and unpublish.
func TestDocListUpdatedAndPublished(t *testing.T) {
	e := newEnv(t, nil)
	e.newArticle("a", "alpha", "A.")
	e.newArticle("b", "beta", "B.")
	list := func() map[string]repo.DocInfo {
		var docs []repo.DocInfo
		e.ok("GET", "/v1/docs", e.ann, nil, &docs)
		out := map[string]repo.DocInfo{}
		for _, d := range docs {
			out[d.ID] = d
		}
		return out
	}
	docs := list()
	for _, id := range []string{"a", "b"} {
		if d := docs[id]; d.Published != "" || d.Visibility != "public" || d.Updated.Before(d.Created) {
			t.Fatalf("new document %s lists as %+v", id, d)
		}
	}
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
	docs = list()
	if d := docs["a"]; d.Published != "v1.r0" || d.Visibility != "public" {
		t.Fatalf("published document lists as %+v", d)
	}
	if d := docs["b"]; d.Published != "" {
		t.Fatalf("an unpublished document lists as published: %+v", d)
	}
	var one repo.DocInfo
	e.ok("GET", "/v1/docs/a", e.ann, nil, &one)
	if one.Published != "v1.r0" || !one.Updated.Equal(docs["a"].Updated) {
		t.Fatalf("GET /v1/docs/a = %+v, the list says %+v", one, docs["a"])
	}

	// A save moves updated to the draft's last change.
	var dr repo.Draft
	e.ok("GET", "/v1/docs/b/draft", e.ann, nil, &dr)
	e.ok("POST", "/v1/docs/b/draft", e.ann, SaveRequest{BaseSeq: dr.Seq, Changes: []repo.DraftChange{
		{Op: "upsert", Block: &flowdoc.Block{ID: "b0", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "B, changed."}}}}}}, nil)
	e.ok("GET", "/v1/docs/b/draft", e.ann, nil, &dr)
	if got := list()["b"].Updated; !got.Equal(time.UnixMilli(dr.LastChange).UTC()) {
		t.Fatalf("after a save updated is %v, the draft's last change %v", got, time.UnixMilli(dr.LastChange).UTC())
	}

	e.ok("POST", "/v1/docs/a/unpublish", e.ann, nil, nil)
	if d := list()["a"]; d.Published != "" || d.Visibility != "public" {
		t.Fatalf("after unpublish the document lists as %+v", d)
	}
}

// diff takes "draft" for the working copy on either side.
func TestDiffAgainstDraft(t *testing.T) {
	e := newEnv(t, nil)
	e.newArticle("a", "alpha", "Hello world.", "Second.")
	var dr repo.Draft
	e.ok("GET", "/v1/docs/a/draft", e.ann, nil, &dr)
	e.ok("POST", "/v1/docs/a/draft", e.ann, SaveRequest{BaseSeq: dr.Seq, Changes: []repo.DraftChange{
		{Op: "upsert", Block: &flowdoc.Block{ID: "b0", Type: flowdoc.Paragraph, RichText: []flowdoc.Run{{Text: "Hello there."}}}},
		{Op: "delete", BlockID: "b1"}}}, nil)
	var d DiffResponse
	e.ok("GET", "/v1/docs/a/diff?from=v1.r0&to=draft", e.ann, nil, &d)
	kinds := map[string]flowdoc.ChangeKind{}
	for _, c := range d.Changes {
		kinds[c.BlockID] = c.Kind
	}
	if d.To != "draft" || kinds["b0"] != flowdoc.Modified || kinds["b1"] != flowdoc.Deleted || len(d.Changes) != 2 {
		t.Fatalf("diff v1.r0..draft = %+v", d)
	}
	var words []string
	for _, w := range d.Changes[0].Words {
		words = append(words, w.Op+":"+w.Text)
	}
	if len(words) == 0 {
		t.Fatalf("the modified block has no word edits: %+v", d.Changes[0])
	}
	e.ok("GET", "/v1/docs/a/diff?from=draft&to=v1.r0", e.ann, nil, &d)
	if len(d.Changes) != 2 {
		t.Fatalf("diff draft..v1.r0 = %+v", d)
	}
	// The head is still v1.r0: head..v1.r0 is empty, the draft is not.
	e.ok("GET", "/v1/docs/a/diff?from=head&to=v1.r0", e.ann, nil, &d)
	if len(d.Changes) != 0 {
		t.Fatalf("diff head..v1.r0 = %+v", d)
	}
	e.wantErr("GET", "/v1/docs/a/diff?from=v9.r0&to=draft", e.ann, nil, 404, "not_found")
}
