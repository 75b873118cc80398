package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestUnknownPathIsInert: the generic 404 echoes a path as its escaped
// form, with nosniff, so a URL full of markup stays inert.
func TestUnknownPathIsInert(t *testing.T) {
	e := newEnv(t, nil)
	w := e.raw("GET", "/x/%3Cscript%3Ealert(1)%3C%2Fscript%3E%22%3E", nil, "")
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
