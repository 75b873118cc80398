package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/foliodev/folio/assistant"
	"github.com/foliodev/folio/assistant/attrs"
	"github.com/foliodev/folio/assistant/reading"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/config"
	"github.com/foliodev/folio/internal/llm"
	"github.com/foliodev/folio/internal/quota"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/internal/repo/publish"
)

// withAssistants gives the server the two narrow assistants on the local
// provider.
func withAssistants(c *Config) {
	db := repoOf(c).DB()
	ledger := quota.NewLedger(db, quota.LedgerOptions{})
	a, err := attrs.New(attrs.Options{Route: assistant.Route{Provider: llm.NewLocal(""),
		Policy: quota.NewPolicy(db, quota.Attributes, quota.Limits{}, nil), Source: "compat"}, Ledger: ledger, Enabled: true})
	if err != nil {
		panic(err)
	}
	rd, err := reading.New(reading.Options{Route: assistant.Route{Provider: llm.NewLocal(""),
		Policy: quota.NewPolicy(db, quota.Reading, quota.Limits{}, nil), Source: "compat"}, Ledger: ledger, Config: config.DefaultReading()})
	if err != nil {
		panic(err)
	}
	c.Attrs, c.Reading = a, rd
}

// newArticle creates a document of ann's with a slug and a body.
func (e *env) newArticle(id, slug string, texts ...string) {
	e.t.Helper()
	var blocks []flowdoc.Block
	for i, t := range texts {
		blocks = append(blocks, para(fmt.Sprintf("b%d", i), t))
	}
	body, _ := json.Marshal(flowdoc.Document{SchemaVersion: 1, Blocks: blocks})
	// An admin chooses the id (authors get server-assigned ones) and gives
	// the article to the author.
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: id, Owner: "ann", Attrs: flowdoc.Attributes{Title: "Title " + id, Slug: slug}, Body: body}, nil)
}

var rawAddrs atomic.Uint32

// raw sends a request straight to the handler and returns the recorded
// response: no Date header, so two answers compare byte for byte.
func (e *env) raw(method, path string, header http.Header, body string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("X-Request-Id", "fixed")
	// Each request from its own address: the password guard's per-address
	// back-off is tested on its own.
	n := rawAddrs.Add(1)
	req.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1234", n>>16&255, n>>8&255, n&255)
	w := httptest.NewRecorder()
	e.srv.Handler().ServeHTTP(w, req)
	return w
}

func sameResponse(t *testing.T, what string, got, want *httptest.ResponseRecorder) {
	t.Helper()
	if got.Code != want.Code || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) || fmt.Sprint(got.Header()) != fmt.Sprint(want.Header()) {
		t.Errorf("%s is distinguishable from a missing article:\n got %d %v %q\nwant %d %v %q", what,
			got.Code, got.Header(), got.Body.String(), want.Code, want.Header(), want.Body.String())
	}
}

// Every public route answers a private, password-protected (without the
// right password), draft-only, unpublished and unknown article exactly as
// the same slug on a site that never had it: status, headers and body,
// byte for byte.
func TestHiddenArticlesAnswerLikeMissingOnes(t *testing.T) {
	e := newEnv(t, withAssistants)
	empty := newEnv(t, withAssistants) // the reference: a site without these slugs

	e.newArticle("pub", "open", "Visible text.")
	e.ok("POST", "/v1/docs/pub/publish", e.ann, nil, nil)
	e.newArticle("priv", "hidden-private", "Private text.")
	e.ok("POST", "/v1/docs/priv/publish", e.ann, PublishRequest{Visibility: "private"}, nil)
	e.newArticle("pw", "hidden-password", "Password text.")
	e.ok("POST", "/v1/docs/pw/publish", e.ann, PublishRequest{Visibility: "password", Password: "s3cret-pw"}, nil)
	e.newArticle("draft", "hidden-draft", "Draft text.")
	e.newArticle("gone", "hidden-gone", "Unpublished text.")
	e.ok("POST", "/v1/docs/gone/publish", e.ann, nil, nil)
	e.ok("POST", "/v1/docs/gone/unpublish", e.ann, nil, nil)

	wrong := http.Header{PasswordHeader: {"wrong"}}
	right := http.Header{PasswordHeader: {"s3cret-pw"}}
	explainBody := `{"passage":"text"}`
	cases := []struct {
		slug   string
		header http.Header
	}{
		{"hidden-private", nil}, {"hidden-private", right},
		{"hidden-password", nil}, {"hidden-password", wrong},
		{"hidden-draft", nil}, {"hidden-gone", nil}, {"never-existed", nil},
	}
	for _, c := range cases {
		for _, route := range []struct{ method, suffix, body string }{
			{"GET", "", ""}, {"GET", "/html", ""}, {"GET", "/markdown", ""}, {"HEAD", "", ""},
			{"POST", "/explain", explainBody},
		} {
			path := "/v1/public/articles/" + c.slug + route.suffix
			got := e.raw(route.method, path, c.header, route.body)
			want := empty.raw(route.method, path, c.header, route.body)
			if want.Code != http.StatusNotFound {
				t.Fatalf("reference %s %s: %d", route.method, path, want.Code)
			}
			sameResponse(t, fmt.Sprintf("%s %s (%v)", route.method, path, c.header), got, want)
		}
	}
	// The password-protected article with the right password is readable,
	// but not explained: the reading assistant serves public articles only.
	if w := e.raw("GET", "/v1/public/articles/hidden-password", right, ""); w.Code != 200 {
		t.Fatalf("right password: %d %s", w.Code, w.Body)
	}
	sameResponse(t, "explain of a password article with its password",
		e.raw("POST", "/v1/public/articles/hidden-password/explain", right, explainBody),
		empty.raw("POST", "/v1/public/articles/hidden-password/explain", right, explainBody))
	// Lists and feeds show only the public article.
	var page publish.Page
	e.ok("GET", "/v1/public/articles", "", nil, &page)
	if len(page.Articles) != 1 || page.Articles[0].Slug != "open" {
		t.Fatalf("public list = %+v", page)
	}
	_, feed := e.call("GET", "/v1/public/feed.atom", "", nil)
	if !strings.Contains(string(feed), "Visible text.") || strings.Contains(string(feed), "Private text") || strings.Contains(string(feed), "Password text") {
		t.Fatalf("feed:\n%s", feed)
	}
}

func TestPublicArticleETagAndRepresentations(t *testing.T) {
	e := newEnv(t, nil)
	e.newArticle("a", "an-article", "First <b>version</b>.")
	var res publish.Result
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, &res)

	w := e.raw("GET", "/v1/public/articles/an-article", nil, "")
	tag := w.Header().Get("ETag")
	if w.Code != 200 || tag != `"`+res.Publication.Version.String()+`-json"` {
		t.Fatalf("GET: %d, ETag %q", w.Code, tag)
	}
	var art ArticleResponse
	if err := json.Unmarshal(w.Body.Bytes(), &art); err != nil || art.Title != "Title a" || art.Label != "v1.r0" {
		t.Fatalf("article = %+v, %v", art, err)
	}
	w = e.raw("GET", "/v1/public/articles/an-article", http.Header{"If-None-Match": {tag}}, "")
	if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != tag {
		t.Fatalf("If-None-Match: %d %q", w.Code, w.Body)
	}
	html := e.raw("GET", "/v1/public/articles/an-article/html", nil, "")
	if html.Code != 200 || !strings.Contains(html.Body.String(), "First &lt;b&gt;version&lt;/b&gt;.") ||
		!strings.HasPrefix(html.Header().Get("Content-Type"), "text/html") || html.Header().Get("ETag") == tag {
		t.Fatalf("html: %d %v %s", html.Code, html.Header(), html.Body)
	}
	md := e.raw("GET", "/v1/public/articles/an-article/markdown", nil, "")
	if md.Code != 200 || !strings.HasPrefix(md.Body.String(), "# Title a\n") {
		t.Fatalf("markdown: %d %s", md.Code, md.Body)
	}
	// A republish changes the ETag: the old one no longer matches.
	e.ok("POST", "/v1/docs/a/draft", e.ann, SaveRequest{BaseSeq: 1, Changes: []repo.DraftChange{{Op: "upsert", Block: ptr(para("b0", "Second version."))}}}, nil)
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
	w = e.raw("GET", "/v1/public/articles/an-article", http.Header{"If-None-Match": {tag}}, "")
	if w.Code != 200 || w.Header().Get("ETag") == tag || !strings.Contains(w.Body.String(), "Second version.") {
		t.Fatalf("after republish: %d %q %s", w.Code, w.Header().Get("ETag"), w.Body)
	}
	// Lists carry ETags too.
	l := e.raw("GET", "/v1/public/articles", nil, "")
	if l2 := e.raw("GET", "/v1/public/articles", http.Header{"If-None-Match": {l.Header().Get("ETag")}}, ""); l2.Code != 304 {
		t.Fatalf("list If-None-Match: %d", l2.Code)
	}
}

func TestPublishEndpointsAndTerms(t *testing.T) {
	e := newEnv(t, nil)
	e.newArticle("a", "same", "A.")
	e.newArticle("b", "same", "B.")
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
	// bob may not publish ann's document: it is missing for him.
	e.wantErr("POST", "/v1/docs/a/publish", e.bob, nil, 404, "not_found")
	er := e.wantErr("POST", "/v1/docs/b/publish", e.ann, nil, 409, publish.CodeSlugTaken)
	if !strings.Contains(er.Message, "Title a") || er.Kind != "conflict" {
		t.Fatalf("ann's conflict names her own article: %+v", er)
	}
	e.wantErr("POST", "/v1/docs/a/publish", e.ann, PublishRequest{Visibility: "secret"}, 400, "invalid")
	e.wantErr("POST", "/v1/docs/b/unpublish", e.ann, nil, 404, publish.CodeNotPublished)
	var pr PublicationResponse
	e.ok("GET", "/v1/docs/a/publication", e.ann, nil, &pr)
	if pr.Publication == nil || pr.Publication.Slug != "same" || pr.Visibility.Visibility != "public" {
		t.Fatalf("publication = %+v", pr)
	}
	var v publish.Visibility
	e.ok("PUT", "/v1/docs/a/visibility", e.ann, VisibilityRequest{Visibility: "private"}, &v)
	if v.Visibility != "private" {
		t.Fatalf("visibility = %+v", v)
	}
	e.wantErr("GET", "/v1/public/articles/same", "", nil, 404, publish.CodeArticleNotFound)
	// Categories: admins create them, anyone lists them.
	e.wantErr("POST", "/v1/categories", e.ann, TermRequest{Name: "Go"}, 403, "forbidden")
	e.ok("POST", "/v1/categories", e.admin, TermRequest{Name: "Go"}, nil)
	e.wantErr("POST", "/v1/categories", e.admin, TermRequest{Name: "go"}, 409, publish.CodeCategoryExists)
	var cats []publish.Term
	e.ok("GET", "/v1/categories", e.ann, nil, &cats)
	if len(cats) != 1 || cats[0].Name != "Go" {
		t.Fatalf("categories = %+v", cats)
	}
	e.ok("DELETE", "/v1/categories/go", e.admin, nil, nil)
	e.wantErr("DELETE", "/v1/tags/none", e.admin, nil, 404, publish.CodeTagNotFound)
}

// With every AI switch off, publishing and the public API work; the
// assistants' endpoints say they are off.
func TestPublishingWorksWithoutAI(t *testing.T) {
	e := newEnv(t, nil) // no attributes or reading assistant
	e.newArticle("a", "plain", "Text.")
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
	if st, _ := e.call("GET", "/v1/public/articles/plain/html", "", nil); st != 200 {
		t.Fatalf("public read: %d", st)
	}
	e.wantErr("POST", "/v1/public/articles/plain/explain", "", ExplainRequest{Passage: "Text"}, 403, reading.CodeDisabled)
	e.wantErr("POST", "/v1/docs/a/attrs/suggest", e.ann, nil, 403, attrs.CodeDisabled)
}

func TestExplainStreamsServerSentEvents(t *testing.T) {
	e := newEnv(t, withAssistants)
	e.newArticle("a", "guide", "A ref is a named pointer.", "Refs move atomically.")
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
	read := func() (string, http.Header) {
		req, _ := http.NewRequest("POST", e.ts.URL+"/v1/public/articles/guide/explain", strings.NewReader(`{"passage":"Refs move","block":"b1"}`))
		req.Header.Set(VisitorHeader, "visitor-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("explain: %d %s", resp.StatusCode, data)
		}
		return string(data), resp.Header
	}
	out, h := read()
	if h.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("content type %q", h.Get("Content-Type"))
	}
	if !strings.HasPrefix(out, "event: meta\ndata: {") || !strings.Contains(out, `"extractive":true`) ||
		!strings.Contains(out, "event: delta\ndata: {\"text\":") || !strings.Contains(out, "event: done\n") ||
		!strings.Contains(out, "Extractive explanation") || strings.Contains(out, `"cached":true`) {
		t.Fatalf("stream:\n%s", out)
	}
	out, _ = read()
	if !strings.Contains(out, `"cached":true`) {
		t.Fatalf("second request not served from the cache:\n%s", out)
	}
	// Bad input is a plain JSON error before any event.
	e.wantErr("POST", "/v1/public/articles/guide/explain", "", `{"passage":""}`, 400, "invalid")
}

func TestSuggestAttrsEndpoint(t *testing.T) {
	e := newEnv(t, withAssistants)
	e.newArticle("a", "", "Pebble is a storage engine. It keeps data in sorted tables.")
	e.ok("POST", "/v1/tags", e.admin, TermRequest{Name: "storage"}, nil)
	var sug attrs.Suggestion
	e.ok("POST", "/v1/docs/a/attrs/suggest", e.ann, nil, &sug)
	if sug.Slug != "title-a" || sug.Provider != "local" || len(sug.Tags) != 1 || sug.Summary == "" {
		t.Fatalf("suggestion = %+v", sug)
	}
	e.wantErr("POST", "/v1/docs/a/attrs/suggest", e.bob, nil, 404, "not_found")
	if sug.Title != "" {
		t.Fatalf("a titled article got a title proposal %q", sug.Title)
	}
	// An untitled article gets a title (its first sentence) and the slug
	// made from it.
	e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: "u", Owner: "ann", Attrs: flowdoc.Attributes{Title: "Untitled"},
		Body: mustJSON(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("b0", "Compaction keeps reads fast. It merges tables.")}})}, nil)
	e.ok("POST", "/v1/docs/u/attrs/suggest", e.ann, nil, &sug)
	if sug.Title != "Compaction keeps reads fast" || sug.Slug != "compaction-keeps-reads-fast" {
		t.Fatalf("untitled article: title %q, slug %q", sug.Title, sug.Slug)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

// The admin usage view shows the reading meter's model calls and cache
// hits apart from the writing and attributes meters.
func TestUsageViewShowsReadingCacheHits(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		withAssistants(c)
		ledger := quota.NewLedger(repoOf(c).DB(), quota.LedgerOptions{})
		c.Usage = func(days int) (*quota.Report, error) {
			rep, err := ledger.Report(days)
			if err == nil {
				rep.Sources = map[quota.Category]string{quota.Writing: "compat", quota.Reading: "dedicated", quota.Attributes: "mixed"}
			}
			return rep, err
		}
	})
	e.newArticle("a", "guide", "A ref is a named pointer.")
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
	for i := 0; i < 3; i++ {
		w := e.raw("POST", "/v1/public/articles/guide/explain", http.Header{VisitorHeader: {fmt.Sprint("v", i)}}, `{"passage":"named pointer"}`)
		if w.Code != 200 {
			t.Fatalf("explain: %d %s", w.Code, w.Body)
		}
	}
	e.ok("POST", "/v1/docs/a/attrs/suggest", e.ann, nil, nil)
	var rep quota.Report
	e.ok("GET", "/v1/admin/usage?days=1", e.admin, nil, &rep)
	rd, wr, at := rep.Totals[quota.Reading], rep.Totals[quota.Writing], rep.Totals[quota.Attributes]
	if rd.Events != 1 || rd.CacheHits != 2 || wr.Events != 0 || wr.CacheHits != 0 || at.Events != 1 || at.CacheHits != 0 {
		t.Fatalf("totals: reading %+v, writing %+v, attributes %+v", rd, wr, at)
	}
	if rep.Health != quota.HealthOK || rep.Sources[quota.Reading] != "dedicated" || rep.Sources[quota.Attributes] != "mixed" {
		t.Fatalf("report: health %s, sources %v", rep.Health, rep.Sources)
	}
}
