package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/foliodev/folio/web"
)

// The editor's routes serve its one page with the strict headers, without
// a token (the page signs in itself); its static files are cached as
// immutable only under their content hash.
func TestWebAppRoutes(t *testing.T) {
	e := newEnv(t, nil)
	for _, path := range []string{"/signin", "/app", "/d/k3v7x2mqa9p4c6rt", "/personas", "/personas/pnq3k", "/admin", "/admin/usage"} {
		res, err := http.Get(e.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s, want the app's page", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'", "connect-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("GET %s: CSP allows inline code or eval: %q", path, csp)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("GET %s: headers %v", path, res.Header)
		}
	}

	hash := web.Hash("app.js")
	res, err := http.Get(e.ts.URL + "/static/app.js?v=" + hash)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") || res.Header.Get("ETag") != `"`+hash+`"` {
		t.Fatalf("app.js under its hash: %d, Cache-Control %q, ETag %q", res.StatusCode, res.Header.Get("Cache-Control"), res.Header.Get("ETag"))
	}
	req, _ := http.NewRequest("GET", e.ts.URL+"/static/app.js", nil)
	req.Header.Set("If-None-Match", `"`+hash+`"`)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotModified || strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("app.js without its hash, with its ETag: %d %q, want 304 and no immutable caching", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	for _, path := range []string{"/static/index.html", "/static/nope.js"} {
		res, err := http.Get(e.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
}
