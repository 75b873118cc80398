package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
)

// TestPublicSearchHidesWhatVisitorsMayNotSee: a visitor's search finds
// the published version of public articles, and a site that also holds
// private, password, unpublished, never published, turned-private and
// deleted articles with the same words (and unpublished edits of a
// public one) answers every probe byte for byte as a site without them.
func TestPublicSearchHidesWhatVisitorsMayNotSee(t *testing.T) {
	e := newEnv(t, nil)
	plain := newEnv(t, nil) // the reference: the public articles alone
	for _, w := range []*env{e, plain} {
		w.newArticle("p1", "herons", "The heron waits in the reeds.", "Grey wings at dusk.")
		w.ok("POST", "/v1/docs/p1/publish", w.ann, nil, nil)
		w.newArticle("p2", "autumn", "北京的秋天，银杏叶落。")
		w.ok("POST", "/v1/docs/p2/publish", w.ann, nil, nil)
	}
	secret := "The heron keeps a secretword in the 银杏 grove."
	e.newArticle("priv", "hidden-private", secret)
	e.ok("POST", "/v1/docs/priv/publish", e.ann, PublishRequest{Visibility: "private"}, nil)
	e.newArticle("pw", "hidden-password", secret)
	e.ok("POST", "/v1/docs/pw/publish", e.ann, PublishRequest{Visibility: "password", Password: "s3cret-pw"}, nil)
	e.newArticle("draft", "hidden-draft", secret)
	e.newArticle("gone", "hidden-gone", secret)
	e.ok("POST", "/v1/docs/gone/publish", e.ann, nil, nil)
	e.ok("POST", "/v1/docs/gone/unpublish", e.ann, nil, nil)
	e.newArticle("turned", "hidden-turned", secret)
	e.ok("POST", "/v1/docs/turned/publish", e.ann, nil, nil)
	e.ok("PUT", "/v1/docs/turned/visibility", e.ann, map[string]string{"visibility": "private"}, nil)
	e.newArticle("deleted", "hidden-deleted", secret)
	e.ok("POST", "/v1/docs/deleted/publish", e.ann, nil, nil)
	e.ok("DELETE", "/v1/docs/deleted", e.ann, nil, nil)
	// Edits of a public article not yet published.
	d, err := e.repo.Draft(context.Background(), "p1")
	if err != nil {
		t.Fatal(err)
	}
	nb := flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("b0", "The heron has a secretword now.")}}
	if _, err := e.repo.SaveDraft(context.Background(), repo.SaveParams{Doc: "p1", Actor: "ann", BaseSeq: d.Seq, Body: &nb}); err != nil {
		t.Fatal(err)
	}

	// The author finds her own hidden documents; visitors never do.
	var own SearchResponse
	e.ok("GET", "/v1/search?q=secretword", e.ann, nil, &own)
	if len(own.Hits) != 6 {
		t.Fatalf("ann's search for secretword: %d hits, want her 5 hidden articles that are not deleted and p1's draft: %+v", len(own.Hits), own.Hits)
	}
	var pub PublicSearchResponse
	e.ok("GET", "/v1/public/search?q=heron", "", nil, &pub)
	if len(pub.Hits) != 1 || pub.Hits[0].Slug != "herons" || pub.Hits[0].Title != "Title p1" {
		t.Fatalf("public search heron = %+v, want the herons article", pub.Hits)
	}
	var marked []string
	for _, s := range pub.Hits[0].Snippet {
		if s.Mark {
			marked = append(marked, s.Text)
		}
	}
	if fmt.Sprint(marked) != "[heron]" {
		t.Errorf("snippet %+v marks %q, want heron", pub.Hits[0].Snippet, marked)
	}

	for _, q := range []string{"heron", "secretword", "heron secretword", "银杏", "grove", "hidden", "Title",
		"nothing-like-this", "   ", strings.Repeat("x", 2000)} {
		for _, extra := range []string{"", "&limit=1", "&limit=1000", "&limit=x"} {
			path := "/v1/public/search?q=" + url.QueryEscape(q) + extra
			got, want := e.raw("GET", path, nil, ""), plain.raw("GET", path, nil, "")
			if got.Code != want.Code || got.Body.String() != want.Body.String() || fmt.Sprint(got.Header()) != fmt.Sprint(want.Header()) {
				t.Errorf("GET %s tells the sites apart:\n with hidden: %d %v %s\n without:     %d %v %s", path,
					got.Code, got.Header(), got.Body, want.Code, want.Header(), want.Body)
			}
			if q == "heron" && extra == "" && want.Code != http.StatusOK {
				t.Fatalf("reference GET %s: %d %s", path, want.Code, want.Body)
			}
		}
	}
}
