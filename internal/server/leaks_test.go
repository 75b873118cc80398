package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo/publish"
)

// TestUnknownPathIsInert: the generic 404 echoes a path as its escaped
// form, with nosniff, so a URL full of markup stays inert.
func TestUnknownPathIsInert(t *testing.T) {
	e := newEnv(t, nil)
	w := e.raw("GET", "/v1/x/%3Cscript%3Ealert(1)%3C%2Fscript%3E%22%3E", nil, "")
	body := w.Body.String()
	if w.Code != http.StatusNotFound || strings.ContainsAny(body, "<>") || !strings.Contains(body, "%3Cscript%3E") {
		t.Fatalf("unknown path: %d %s", w.Code, body)
	}
	if w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("no nosniff: %v", w.Header())
	}
	if errOf(t, w.Body.Bytes()).Code != "not_found" {
		t.Fatalf("code: %s", body)
	}
	// Outside the API the site's 404 page answers, the same bytes for
	// every path: nothing of the URL is in it.
	page := e.raw("GET", "/x/%3Cscript%3Ealert(1)%3C%2Fscript%3E%22%3E", nil, "")
	if page.Code != http.StatusNotFound || strings.Contains(page.Body.String(), "script") ||
		page.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("site 404: %d %v %s", page.Code, page.Header(), page.Body.String())
	}
}

// TestArticleHTMLPolicy: an article's /html may not be framed, set a
// base, post a form or use inline style.
func TestArticleHTMLPolicy(t *testing.T) {
	e := newEnv(t, nil)
	e.newArticle("a", "an-article", "Text.")
	e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
	w := e.raw("GET", "/v1/public/articles/an-article/html", nil, "")
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'", "style-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || w.Code != http.StatusOK {
		t.Fatalf("CSP %q (status %d)", csp, w.Code)
	}
}

// TestTermsCountOnlyWhatTheCallerMaySee: another author sees neither the
// tags only hidden articles use nor hidden articles in any count; the
// owner sees their own; pages follow the Link header.
func TestTermsCountOnlyWhatTheCallerMaySee(t *testing.T) {
	e := newEnv(t, nil)
	e.ok("POST", "/v1/categories", e.admin, TermRequest{Name: "Notes"}, nil)
	publishAs := func(id, vis string, tags ...string) {
		t.Helper()
		body := `{"schemaVersion":1,"blocks":[{"id":"b1","type":"paragraph","richText":[{"text":"Text."}]}]}`
		e.ok("POST", "/v1/docs", e.admin, CreateRequest{ID: id, Owner: "ann", Attrs: flowdoc.Attributes{Title: id, Slug: id, Category: "Notes", Tags: tags}, Body: []byte(body)}, nil)
		req := PublishRequest{Visibility: vis}
		if vis == "password" {
			req.Password = "long enough"
		}
		e.ok("POST", "/v1/docs/"+id+"/publish", e.ann, req, nil)
	}
	publishAs("open", "public", "shared")
	publishAs("hidden", "private", "shared", "secret-plans")
	publishAs("locked", "password", "locked-tag")
	counts := func(path, token string) map[string]int {
		t.Helper()
		var ts []publish.Term
		e.ok("GET", path, token, nil, &ts)
		out := map[string]int{}
		for _, x := range ts {
			out[x.Name] = x.Articles
		}
		return out
	}
	if got := counts("/v1/tags", e.bob); len(got) != 1 || got["shared"] != 1 {
		t.Fatalf("another author's tags: %v", got)
	}
	if got := counts("/v1/tags", e.ann); got["shared"] != 2 || got["secret-plans"] != 1 || got["locked-tag"] != 1 {
		t.Fatalf("the owner's tags: %v", got)
	}
	if got := counts("/v1/categories", e.bob); got["Notes"] != 1 {
		t.Fatalf("another author's categories: %v", got)
	}
	// Pages: one tag each, following Link.
	var names []string
	path := "/v1/tags?limit=1"
	for path != "" {
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ts []publish.Term
		json.NewDecoder(resp.Body).Decode(&ts)
		resp.Body.Close()
		for _, x := range ts {
			names = append(names, x.Name)
		}
		path = ""
		if l := resp.Header.Get("Link"); l != "" {
			path = strings.TrimSuffix(strings.TrimPrefix(l, "<"), `>; rel="next"`)
		}
		if len(names) > 10 {
			t.Fatal("pages never end")
		}
	}
	if strings.Join(names, ",") != "locked-tag,secret-plans,shared" {
		t.Fatalf("paged tags: %v", names)
	}
	if st, body := e.call("GET", "/v1/tags?limit=0", e.ann, nil); st != 400 {
		t.Fatalf("limit 0: %d %s", st, body)
	}
}

// TestFeedLinksIgnoreHost: the Atom feed's links come from [site] url,
// or are relative without it; a forged Host header never appears.
func TestFeedLinksIgnoreHost(t *testing.T) {
	for _, site := range []string{"", "https://blog.example/"} {
		e := newEnv(t, func(c *Config) { c.SiteURL = site })
		e.newArticle("a", "an-article", "Text.")
		e.ok("POST", "/v1/docs/a/publish", e.ann, nil, nil)
		req := httptest.NewRequest("GET", "/v1/public/feed.atom", nil)
		req.Host = "evil.example"
		w := httptest.NewRecorder()
		e.srv.Handler().ServeHTTP(w, req)
		feed := w.Body.String()
		if w.Code != http.StatusOK || strings.Contains(feed, "evil.example") {
			t.Fatalf("site %q: %d\n%s", site, w.Code, feed)
		}
		want := `href="/a/an-article"`
		if site != "" {
			want = `href="https://blog.example/a/an-article"`
		}
		if !strings.Contains(feed, want) {
			t.Fatalf("site %q: no %s in\n%s", site, want, feed)
		}
	}
}
