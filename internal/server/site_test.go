package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
)

// sitePost posts a form straight to the handler.
func (e *env) sitePost(path string, form url.Values) *http.Response {
	e.t.Helper()
	w := e.raw("POST", path, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, form.Encode())
	return w.Result()
}

func (e *env) published(title, slug, category string, tags []string, visibility, password string) string {
	e.t.Helper()
	body, _ := json.Marshal(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{para("p1", "Body of "+slug+".")}})
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", e.ann, CreateRequest{Attrs: flowdoc.Attributes{Title: title, Slug: slug, Summary: "Summary of " + slug,
		Category: category, Tags: tags}, Body: body}, &v)
	if visibility != "draft" {
		e.ok("POST", "/v1/docs/"+v.Doc+"/publish", e.ann, PublishRequest{Visibility: visibility, Password: password}, nil)
	}
	return v.Doc
}

func checkSiteHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "img-src 'self'", "style-src 'self'", "script-src 'self'", "connect-src 'self'",
		"require-trusted-types-for 'script'", "trusted-types 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: CSP %q lacks %q", what, csp, d)
		}
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" {
		t.Errorf("%s: headers %v", what, h)
	}
}

func TestSitePages(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.SiteTitle, c.SiteAuthor = "Field Notes", "The editors" })
	e.ok("POST", "/v1/categories", e.admin, map[string]string{"name": "Databases"}, nil)
	e.published("Older essay", "older", "", []string{"misc"}, "public", "")
	e.published("Storage engines", "storage", "Databases", []string{"pebble", "lsm"}, "public", "")
	e.published("Secret plans", "secret", "", nil, "private", "")
	e.published("Members only", "members", "", nil, "password", "hunter2-pw")
	e.published("Work in progress", "wip", "", nil, "draft", "")

	home := e.raw("GET", "/", nil, "")
	page := home.Body.String()
	if home.Code != 200 || home.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /: %d %v", home.Code, home.Header())
	}
	checkSiteHeaders(t, "GET /", home.Header())
	for _, want := range []string{"<title>Field Notes</title>", `<a class="brand" href="/">Field Notes</a>`, "© The editors",
		`href="/a/storage"`, "Summary of storage", `href="/c/Databases"`, `href="/t/pebble"`, `href="/signin"`,
		`<link rel="alternate" type="application/atom+xml"`, `<link rel="stylesheet" href="/site.css">`} {
		if !strings.Contains(page, want) {
			t.Errorf("GET / lacks %q", want)
		}
	}
	if strings.Index(page, "Storage engines") > strings.Index(page, "Older essay") {
		t.Error("the list is not newest first")
	}
	for _, hidden := range []string{"Secret plans", "Members only", "Work in progress"} {
		if strings.Contains(page, hidden) {
			t.Errorf("GET / lists %q", hidden)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "style=") {
		t.Error("the page has a script or an inline style")
	}

	cat := e.raw("GET", "/c/Databases", nil, "").Body.String()
	if !strings.Contains(cat, "Storage engines") || strings.Contains(cat, "Older essay") {
		t.Errorf("category page: %s", cat)
	}
	tag := e.raw("GET", "/t/misc", nil, "").Body.String()
	if !strings.Contains(tag, "Older essay") || strings.Contains(tag, "Storage engines") {
		t.Errorf("tag page: %s", tag)
	}

	art := e.raw("GET", "/a/storage", nil, "")
	checkSiteHeaders(t, "article", art.Header())
	body := art.Body.String()
	if art.Code != 200 || strings.Count(body, "<h1>Storage engines</h1>") != 1 || !strings.Contains(body, `<p data-block="p1">Body of storage.</p>`) ||
		!strings.Contains(body, `<time datetime="`) || !strings.Contains(body, `href="/t/lsm"`) || !strings.Contains(body, "<title>Storage engines · Field Notes</title>") {
		t.Fatalf("article page: %d %s", art.Code, body)
	}

	if strings.Contains(body, "<script") || strings.Contains(body, "data-explain") {
		t.Error("the article page loads the reading assistant's script without a reading assistant")
	}

	css := e.raw("GET", "/site.css", nil, "")
	if css.Code != 200 || !strings.HasPrefix(css.Header().Get("Content-Type"), "text/css") || !strings.Contains(css.Body.String(), "prefers-color-scheme: dark") {
		t.Fatalf("site.css: %d %v", css.Code, css.Header())
	}

	// Paging: ten to a page.
	for i := 0; i < 10; i++ {
		e.published("Filler", "filler-"+string(rune('a'+i)), "", nil, "public", "")
	}
	first := e.raw("GET", "/", nil, "").Body.String()
	m := regexp.MustCompile(`<a rel="next" href="([^"]+)">`).FindStringSubmatch(first)
	if m == nil || strings.Contains(first, "Older essay") {
		t.Fatalf("first page has no next link or shows the oldest: %s", first)
	}
	next := e.raw("GET", strings.ReplaceAll(m[1], "&amp;", "&"), nil, "").Body.String()
	if !strings.Contains(next, "Older essay") || !strings.Contains(next, "← Newest") {
		t.Fatalf("second page: %s", next)
	}
}

// With the reading assistant, a public article's page (and only it) loads
// /site.js and names the explain endpoint; the script is served with the
// site's headers and holds no HTML made from strings.
func TestSiteExplainScript(t *testing.T) {
	e := newEnv(t, withAssistants)
	e.published("Storage engines", "storage", "", []string{"lsm"}, "public", "")
	e.published("Members only", "members", "", nil, "password", "hunter2-pw")
	art := e.raw("GET", "/a/storage", nil, "").Body.String()
	if !strings.Contains(art, `<script src="/site.js" defer></script>`) || !strings.Contains(art, `data-explain="/v1/public/articles/storage/explain"`) {
		t.Fatalf("the public article page does not load the reading assistant: %s", art)
	}
	if strings.Contains(art, "style=") || strings.Contains(art, "<script>") {
		t.Error("the article page has an inline script or style")
	}
	for _, path := range []string{"/", "/t/lsm", "/a/members"} {
		if b := e.raw("GET", path, nil, "").Body.String(); strings.Contains(b, "<script") {
			t.Errorf("%s loads a script", path)
		}
	}
	protected := e.sitePost("/a/members", url.Values{"password": {"hunter2-pw"}})
	b, _ := io.ReadAll(protected.Body)
	protected.Body.Close()
	if protected.StatusCode != 200 || strings.Contains(string(b), "<script") {
		t.Errorf("the password-protected article (%d) loads the script, which its explain endpoint would refuse", protected.StatusCode)
	}
	js := e.raw("GET", "/site.js", nil, "")
	checkSiteHeaders(t, "site.js", js.Header())
	src := js.Body.String()
	if js.Code != 200 || js.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || !strings.Contains(src, "text/event-stream") {
		t.Fatalf("site.js: %d %v", js.Code, js.Header())
	}
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "document.write"} {
		if strings.Contains(src, bad) {
			t.Errorf("site.js uses %s", bad)
		}
	}
	again := e.raw("GET", "/site.js", http.Header{"If-None-Match": {js.Header().Get("ETag")}}, "")
	if again.Code != http.StatusNotModified {
		t.Errorf("site.js with its ETag: %d", again.Code)
	}
}

func TestSitePasswordForm(t *testing.T) {
	e := newEnv(t, nil)
	e.published("Members only", "members", "", nil, "password", "hunter2-pw")
	form := e.raw("GET", "/a/members", nil, "")
	body := form.Body.String()
	if form.Code != 200 || !strings.Contains(body, `<form method="post" action="/a/members">`) || !strings.Contains(body, `type="password"`) || strings.Contains(body, "Body of members") {
		t.Fatalf("password form: %d %s", form.Code, body)
	}
	if form.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("form cache: %q", form.Header().Get("Cache-Control"))
	}
	wrong := e.sitePost("/a/members", url.Values{"password": {"nope"}})
	if wrong.StatusCode != http.StatusForbidden {
		t.Fatalf("wrong password: %d", wrong.StatusCode)
	}
	right := e.raw("POST", "/a/members", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "password=hunter2-pw")
	if right.Code != 200 || !strings.Contains(right.Body.String(), "Body of members") || right.Header().Get("Cache-Control") != "private, no-store" {
		t.Fatalf("right password: %d %v %s", right.Code, right.Header(), right.Body)
	}
	checkSiteHeaders(t, "password article", right.Header())
}

// Hidden articles and unknown pages answer exactly alike: the site's 404,
// the same bytes and headers whatever was asked; API paths keep JSON.
func TestSiteHiddenIsMissing(t *testing.T) {
	e := newEnv(t, nil)
	e.ok("POST", "/v1/categories", e.admin, map[string]string{"name": "Hidden"}, nil)
	e.published("Secret plans", "secret", "Hidden", []string{"hush"}, "private", "")
	e.published("Work in progress", "wip", "", nil, "draft", "")
	gone := e.published("Gone", "gone", "", nil, "public", "")
	e.ok("POST", "/v1/docs/"+gone+"/unpublish", e.ann, nil, nil)

	ref := e.raw("GET", "/a/never-existed", nil, "")
	if ref.Code != http.StatusNotFound || !strings.Contains(ref.Body.String(), "Not found") {
		t.Fatalf("missing article: %d %s", ref.Code, ref.Body)
	}
	checkSiteHeaders(t, "404", ref.Header())
	for _, path := range []string{"/a/secret", "/a/wip", "/a/gone", "/c/Hidden", "/t/hush", "/no/such/page", "/a/BAD_SLUG", "/?cursor=zz",
		PublicAssetsPath + strings.Repeat("ab", 32)} {
		sameResponse(t, "GET "+path, e.raw("GET", path, nil, ""), ref)
	}
	sameResponse(t, "POST /a/secret", e.raw("POST", "/a/secret", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "password=x"), ref)
	api := e.raw("GET", "/v1/no-such-endpoint", nil, "")
	if api.Code != http.StatusNotFound || !strings.HasPrefix(api.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("unknown API path: %d %v", api.Code, api.Header())
	}
}

// A password-protected article's page shows its images through URLs it
// signs; without the signature, or with another article's, they are
// missing like any other.
func TestSitePasswordArticleImages(t *testing.T) {
	e := newEnv(t, nil)
	info := e.uploaded(e.ann, noisePNG(t, 3, 3, 11), "a.png")
	doc := e.articleWithImage("Members", "members", info.URL)
	e.ok("POST", "/v1/docs/"+doc+"/publish", e.ann, PublishRequest{Visibility: "password", Password: "hunter2-pw"}, nil)
	page := e.raw("POST", "/a/members", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "password=hunter2-pw").Body.String()
	m := regexp.MustCompile(`<img loading="lazy" src="(/assets/` + info.Hash.String() + `\?[^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no signed image in the page: %s", page)
	}
	src := strings.ReplaceAll(m[1], "&amp;", "&")
	r := e.raw("GET", src, nil, "")
	if r.Code != 200 || r.Header().Get("Cache-Control") != "private, no-store" || r.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("signed image: %d %v", r.Code, r.Header())
	}
	missing := e.raw("GET", "/no-such-page", nil, "")
	plain := PublicAssetsPath + info.Hash.String()
	sameResponse(t, "the image without a signature", e.raw("GET", plain, nil, ""), missing)
	sameResponse(t, "a forged signature", e.raw("GET", plain+"?a=members&t="+strings.Repeat("0", 32), nil, ""), missing)
	// The signature stops working once the article is private.
	e.ok("PUT", "/v1/docs/"+doc+"/visibility", e.ann, map[string]string{"visibility": "private"}, nil)
	sameResponse(t, "a signed image of an article turned private", e.raw("GET", src, nil, ""), missing)
}
