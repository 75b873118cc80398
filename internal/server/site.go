package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/objstore"
)

// The public site: server-rendered pages over the public read API. GET / lists the published public articles newest first, /c/NAME
// and /t/NAME those of a category or tag, /a/SLUG shows one (its password
// form for a password-protected article, which POSTs the password back:
// never in a URL). Every page is made with html/template from the
// embedded site/pages.html and styled by /site.css; every answer carries
// siteHeaders. The pages read without script; an article page, when the
// reading assistant runs, loads /site.js (the "explain" popover over the
// public explain endpoint), the only script the site's policy allows. An article a visitor may not read, and every path that is
// neither the site's nor the API's, is answered by siteNotFound, whose
// status, headers and bytes never depend on what was asked.

//go:embed site/pages.html site/site.css site/site.js
var siteFiles embed.FS

var (
	siteTemplates = template.Must(template.New("site").Funcs(template.FuncMap{
		"date": func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2 January 2006") },
		"iso":  func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) },
	}).ParseFS(siteFiles, "site/pages.html"))
	siteCSS = newSiteFile("site/site.css", "text/css; charset=utf-8")
	siteJS  = newSiteFile("site/site.js", "text/javascript; charset=utf-8")
)

// siteFile is a static file of the site, served with an ETag of its bytes.
type siteFile struct {
	body        []byte
	etag, ctype string
}

func newSiteFile(name, ctype string) siteFile {
	b, err := siteFiles.ReadFile(name)
	if err != nil {
		panic(err) // the embed directive guarantees it
	}
	return siteFile{body: b, etag: `"` + strconv.FormatUint(fnv64(b), 16) + `"`, ctype: ctype}
}

// siteCSP is the policy of every site page: nothing but the site's own
// stylesheet, script (/site.js: no inline code, no eval, and under Trusted
// Types no HTML made from strings at all) and images (and images or video
// an article names by https URL), requests only to the site, no framing,
// forms only to the site.
const siteCSP = "default-src 'none'; img-src 'self' https:; media-src 'self' https:; style-src 'self'; script-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// sitePage is what the templates get.
type sitePage struct {
	Lang, Site, Author string
	Title, Summary     string // of the page (<title>, description)
	Feed               string
	// Lists.
	Heading     string
	Articles    []publish.Publication
	Next, First string
	// Articles and their password form.
	Pub   publish.Publication
	Body  template.HTML
	Slug  string
	Wrong bool
	// Explain: the article page loads the reading assistant's script.
	Explain bool
}

func (s *Server) siteRoutes(mux *routeMux) {
	mux.HandleFunc("GET /{$}", s.public(s.siteIndex))
	mux.HandleFunc("GET /c/{category}", s.public(s.siteCategory))
	mux.HandleFunc("GET /t/{tag}", s.public(s.siteTag))
	mux.HandleFunc("GET /a/{slug}", s.public(s.siteArticle))
	mux.HandleFunc("POST /a/{slug}", s.public(s.siteArticle))
	mux.HandleFunc("GET /site.css", siteCSS.serve)
	mux.HandleFunc("GET /site.js", siteJS.serve)
}

// siteNames are the site's title and author ([site] in the config).
func (s *Server) siteNames() (title, author string) {
	title, author = s.cfg.SiteTitle, s.cfg.SiteAuthor
	if title == "" {
		title = "Folio"
	}
	if author == "" {
		author = title
	}
	return title, author
}

func (s *Server) page() sitePage {
	title, author := s.siteNames()
	return sitePage{Lang: langOf(title, "en"), Site: title, Author: author, Feed: "/v1/public/feed.atom"}
}

// siteHeaders are set on every answer of the site.
func siteHeaders(h http.Header) {
	h.Set("Content-Security-Policy", siteCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("X-Frame-Options", "DENY")
}

// renderSite writes template name with p.
func (s *Server) renderSite(w http.ResponseWriter, r *http.Request, status int, cache, name string, p sitePage) {
	var b bytes.Buffer
	if err := siteTemplates.ExecuteTemplate(&b, name, p); err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	siteHeaders(h)
	h.Set("Cache-Control", cache)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b.Bytes())
	}
}

// siteNotFound answers every page that does not exist or that a visitor
// may not read: the same status, headers and bytes whatever was asked.
func (s *Server) siteNotFound(w http.ResponseWriter, r *http.Request) {
	p := s.page()
	p.Title = "Not found"
	s.renderSite(w, r, http.StatusNotFound, "no-store", "notfound", p)
}

func (s *Server) siteIndex(w http.ResponseWriter, r *http.Request) {
	s.siteList(w, r, publish.ListQuery{}, "/", "")
}

func (s *Server) siteCategory(w http.ResponseWriter, r *http.Request) {
	c := r.PathValue("category")
	s.siteList(w, r, publish.ListQuery{Category: c}, "/c/"+url.PathEscape(c), "Category: "+c)
}

func (s *Server) siteTag(w http.ResponseWriter, r *http.Request) {
	t := r.PathValue("tag")
	s.siteList(w, r, publish.ListQuery{Tag: t}, "/t/"+url.PathEscape(t), "Tag: "+t)
}

// siteList shows a page of the public list. A filter that selects
// nothing, and a cursor this site did not make, are not found.
func (s *Server) siteList(w http.ResponseWriter, r *http.Request, q publish.ListQuery, path, heading string) {
	q.Limit = 10
	q.Cursor = r.URL.Query().Get("cursor")
	page, err := s.pub.PublicList(r.Context(), q)
	if errs.KindOf(err) == errs.Invalid {
		s.siteNotFound(w, r)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if heading != "" && len(page.Articles) == 0 {
		s.siteNotFound(w, r)
		return
	}
	p := s.page()
	p.Title, p.Heading, p.Articles = heading, heading, page.Articles
	if q.Category != "" {
		p.Feed += "?category=" + url.QueryEscape(q.Category)
	}
	if q.Tag != "" {
		p.Feed += "?tag=" + url.QueryEscape(q.Tag)
	}
	if page.Next != "" {
		p.Next = path + "?cursor=" + url.QueryEscape(page.Next)
	}
	if q.Cursor != "" {
		p.First = path
	}
	s.renderSite(w, r, http.StatusOK, "no-cache", "list", p)
}

// siteArticle is GET and POST /a/{slug}. A password-protected article
// shows its form; the form POSTs the password, checked as the public
// API checks X-Article-Password. Everything a visitor may not read is
// siteNotFound.
func (s *Server) siteArticle(w http.ResponseWriter, r *http.Request) {
	slug := r.PathValue("slug")
	password := ""
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			s.siteNotFound(w, r)
			return
		}
		password = r.PostForm.Get("password")
	}
	pub, vis, err := s.pub.PublicationBySlug(r.Context(), slug, password)
	if errs.CodeOf(err) == publish.CodeArticleNotFound {
		protected, perr := s.pub.PasswordProtected(r.Context(), slug)
		if perr != nil {
			s.fail(w, r, perr)
			return
		}
		if !protected {
			s.siteNotFound(w, r)
			return
		}
		p := s.page()
		p.Title, p.Slug, p.Wrong = "Protected article", slug, password != ""
		status := http.StatusOK
		if p.Wrong {
			status = http.StatusForbidden
		}
		s.renderSite(w, r, status, "no-store", "password", p)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	body, _, err := s.renderArticle(r, pub, vis, "site")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := s.page()
	p.Lang = langOf(pub.Title+pub.Summary, p.Lang)
	p.Title, p.Summary, p.Pub = pub.Title, pub.Summary, pub
	p.Body = template.HTML(body) // flowdoc.RenderHTML escapes every text and checks every URL
	// The explain endpoint answers only for public articles.
	p.Explain = s.cfg.Reading != nil && vis == publish.Public
	cache := "no-cache"
	if vis != publish.Public {
		cache = "private, no-store"
	}
	s.renderSite(w, r, http.StatusOK, cache, "article", p)
}

func (f siteFile) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	siteHeaders(h)
	h.Set("ETag", f.etag)
	h.Set("Cache-Control", "public, max-age=3600")
	if notModified(w, r, f.etag) {
		return
	}
	h.Set("Content-Type", f.ctype)
	h.Set("Content-Length", strconv.Itoa(len(f.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(f.body)
	}
}

// langOf guesses a page's language from its text: Chinese, Japanese or
// Korean when it holds their scripts, else def.
func langOf(text, def string) string {
	han := false
	for _, c := range text {
		switch {
		case unicode.In(c, unicode.Hiragana, unicode.Katakana):
			return "ja"
		case unicode.Is(unicode.Hangul, c):
			return "ko"
		case unicode.Is(unicode.Han, c):
			han = true
		}
	}
	if han {
		return "zh"
	}
	return def
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// signedAssetURL gives the URLs under which a password-protected article's
// page names its assets: /assets/<hash>?a=<slug>&t=<mac>, the MAC (of the
// hash, the slug and the published version, under a key of this process)
// standing for the password the page was shown for, since an image
// request carries none. Such a URL serves the asset only while that
// version is the article's published one and the article is password-
// protected, and until the daemon restarts.
func (s *Server) signedAssetURL(pub publish.Publication) func(string) string {
	return func(hash string) string {
		return PublicAssetsPath + hash + "?a=" + url.QueryEscape(pub.Slug) + "&t=" + s.assetMAC(hash, pub.Slug, pub.Version)
	}
}

func (s *Server) assetMAC(hash, slug string, version objstore.ID) string {
	m := hmac.New(sha256.New, s.assetKey[:])
	m.Write([]byte("folio/asset-url\x00" + hash + "\x00" + slug + "\x00" + version.String()))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// protectedAsset reports whether r carries a valid signature for asset id
// of a password-protected article (signedAssetURL).
func (s *Server) protectedAsset(r *http.Request, id objstore.ID) (bool, error) {
	q := r.URL.Query()
	slug, tag := q.Get("a"), q.Get("t")
	if slug == "" || tag == "" {
		return false, nil
	}
	pub, ok, err := s.pub.ProtectedAsset(r.Context(), slug, id)
	if err != nil || !ok {
		return false, err
	}
	return hmac.Equal([]byte(tag), []byte(s.assetMAC(id.String(), slug, pub.Version))), nil
}
