package server

import (
	"bytes"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/foliodev/folio/web"
)

// AppCSP is the Content-Security-Policy of every response of the web app
// (its pages and its static files): scripts and styles only from the
// daemon's origin, no inline code and no eval, the WebSocket to the same
// origin, never framed, no <base>, forms post only here. Images may come
// from https URLs because a media block names its image by an absolute
// https URL (docs/flowdoc.md); nothing else is fetched from elsewhere.
// Trusted Types are enforced: the app's one policy ("folio") and a
// default policy that only lets ProseMirror's clipboard parser build
// inert HTML (web/src/trusted.js says why).
const AppCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: https:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; frame-src 'none'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'; " +
	"require-trusted-types-for 'script'; trusted-types folio default"

// appRoutes are the client-side routes of the editor: each serves the
// same index.html, and the app's router (web/src/router.js) shows the
// screen. The public site owns / and /a/{slug}.
var appRoutes = []string{"GET /signin", "GET /app", "GET /d/{id}", "GET /personas", "GET /personas/{id}", "GET /admin", "GET /admin/{tab}"}

// webAppRoutes mounts the editor (package web) on mux.
func (s *Server) webAppRoutes(mux *routeMux) {
	files := web.Files()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		// A build without web/dist cannot happen (go:embed fails), but a
		// broken one must not take the API down.
		index = []byte("<!doctype html><title>Folio</title><p>The editor is not built: run node build.mjs in web/.")
	}
	for _, route := range appRoutes {
		mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			appHeaders(w)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(index))
		})
	}
	mux.HandleFunc("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("file")
		if name == "index.html" || strings.HasPrefix(name, ".") {
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			appHeaders(w)
			http.Error(w, "no static file "+name, http.StatusNotFound)
			return
		}
		hash := web.Hash(name)
		appHeaders(w)
		w.Header().Set("ETag", `"`+hash+`"`)
		if r.URL.Query().Get("v") == hash {
			// Content-addressed: the URL changes whenever the bytes do.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		switch path.Ext(name) {
		case ".js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		case ".css":
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	})
}

// appHeaders sets the security headers of every web app response.
func appHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", AppCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}
