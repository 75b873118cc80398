package server

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo/publish"
	"github.com/foliodev/folio/objstore"
)

// The public read API: no token. It sees published public articles, and
// password-protected ones whose password the request presents in the
// X-Article-Password header (never in the query string, which logs and
// proxies keep). Everything else is answered by publicMissing, so that a
// private, password-protected (without the right password), draft-only,
// unpublished or unknown article is indistinguishable from a missing one:
// same status, same headers, same body.

// PasswordHeader carries the password of a password-protected article.
const PasswordHeader = "X-Article-Password"

// ArticleResponse is GET /v1/public/articles/{slug}.
type ArticleResponse struct {
	publish.Publication
	Body json.RawMessage `json:"body"` // canonical FlowDocument JSON
}

// renderCacheBytes bounds the rendered public representations kept.
const renderCacheBytes = 32 << 20

func (s *Server) publicRoutes(mux *routeMux) {
	mux.HandleFunc("GET /v1/public/articles", s.public(s.publicList))
	mux.HandleFunc("GET /v1/public/articles/{slug}", s.public(s.publicArticle("json")))
	mux.HandleFunc("GET /v1/public/articles/{slug}/html", s.public(s.publicArticle("html")))
	mux.HandleFunc("GET /v1/public/articles/{slug}/markdown", s.public(s.publicArticle("markdown")))
	mux.HandleFunc("GET /v1/public/feed.atom", s.public(s.publicFeed))
	mux.HandleFunc("GET /v1/public/search", s.public(s.publicSearch))
	mux.HandleFunc("POST /v1/public/articles/{slug}/explain", s.public(s.explain))
}

// public wraps an unauthenticated handler: fail-stop and shutdown as for
// the API, and a bounded body.
func (s *Server) public(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.content.Failure(); err != nil {
			s.fail(w, r, err)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		}
		h(w, r)
	}
}

// publicMissing answers every article a visitor may not read. Its
// status, headers and body depend on the requested slug alone.
func (s *Server) publicMissing(w http.ResponseWriter, slug string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", PasswordHeader)
	h.Set("X-Content-Type-Options", "nosniff")
	e := publish.NotFound(slug)
	s.writeError(w, Error{Code: errs.CodeOf(e), Kind: errs.KindOf(e).String(), Message: e.Error()})
}

// failPublic answers err of a public read: not-found errors go through
// publicMissing, the rest (storage, internal) as usual.
func (s *Server) failPublic(w http.ResponseWriter, r *http.Request, slug string, err error) {
	if errs.CodeOf(err) == publish.CodeArticleNotFound {
		s.publicMissing(w, slug)
		return
	}
	s.fail(w, r, err)
}

// etag is the strong ETag of a representation of a version.
func etag(v objstore.ID, format string) string { return `"` + v.String() + "-" + format + `"` }

// notModified answers 304 when the request's If-None-Match names tag.
func notModified(w http.ResponseWriter, r *http.Request, tag string) bool {
	inm := r.Header.Get("If-None-Match")
	if inm == "" {
		return false
	}
	for _, t := range strings.Split(inm, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == tag || t == "*" {
			w.WriteHeader(http.StatusNotModified)
			return true
		}
	}
	return false
}

func (s *Server) publicArticle(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		slug := r.PathValue("slug")
		pub, vis, err := s.pub.PublicationFor(r.Context(), slug, publish.Reader{Password: r.Header.Get(PasswordHeader), Addr: requestAddr(r)})
		if err != nil {
			s.failPublic(w, r, slug, err)
			return
		}
		tag := etag(pub.Version, format)
		if vis == publish.Password && format != "json" {
			// Its asset URLs are signed with this process's key.
			tag = etag(pub.Version, format+"-"+s.assetMAC("", "", objstore.ID{})[:8])
		}
		h := w.Header()
		h.Set("ETag", tag)
		h.Add("Vary", PasswordHeader)
		h.Set("X-Content-Type-Options", "nosniff")
		if vis == publish.Public {
			h.Set("Cache-Control", "no-cache") // revalidate: an unpublish takes effect at once
		} else {
			h.Set("Cache-Control", "private, no-store")
		}
		if notModified(w, r, tag) {
			return
		}
		data, ctype, err := s.renderArticle(r, pub, vis, format)
		if err != nil {
			s.failPublic(w, r, slug, err)
			return
		}
		h.Set("Content-Type", ctype)
		if format == "html" {
			h.Set("Content-Security-Policy", articleCSP)
		}
		h.Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data)
	}
}

// articleCSP is the Content-Security-Policy of an article's /html: no
// script, style or plugin of any kind (the renderer writes no style
// attribute), images and media from the web, no <base>, no form target,
// and no framing by another site.
const articleCSP = "default-src 'none'; img-src 'self' http: https:; media-src 'self' http: https:; style-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// renderArticle makes a representation of a publication a request may
// read: from the cache for a public article; made for the request for a
// password-protected one, whose asset URLs are signed for it.
func (s *Server) renderArticle(r *http.Request, pub publish.Publication, vis, format string) ([]byte, string, error) {
	if vis == publish.Password && format != "json" {
		body, err := s.pub.Body(r.Context(), pub)
		if err != nil {
			return nil, "", err
		}
		return renderWith(pub, body, format, s.signedAssetURL(pub))
	}
	return s.rendered.get(pub, format, func() ([]byte, string, error) {
		body, err := s.pub.Body(r.Context(), pub)
		if err != nil {
			return nil, "", err
		}
		return render(pub, body, format)
	})
}

// publicAssetURL is where the public site serves an asset.
func publicAssetURL(hash string) string { return PublicAssetsPath + hash }

// render makes one representation of a published version. The title is
// shown once: the HTML and Markdown put it first, so a leading level-1
// heading that repeats it is left out (flowdoc.WithoutTitle); assets are
// the site's /assets/ URLs.
func render(pub publish.Publication, body flowdoc.Document, format string) ([]byte, string, error) {
	return renderWith(pub, body, format, publicAssetURL)
}

// renderWith is render with the URL function of assets (a password-
// protected article's are signed: Server.signedAssetURL).
func renderWith(pub publish.Publication, body flowdoc.Document, format string, publicAssetURL func(string) string) ([]byte, string, error) {
	switch format {
	case "html":
		var b bytes.Buffer
		b.WriteString("<article>\n<h1>")
		xml.EscapeText(&b, []byte(pub.Title))
		b.WriteString("</h1>\n")
		b.WriteString(flowdoc.RenderHTMLWith(flowdoc.WithoutTitle(body, pub.Title), flowdoc.HTMLOptions{AssetURL: publicAssetURL}))
		b.WriteString("</article>\n")
		return b.Bytes(), "text/html; charset=utf-8", nil
	case "site":
		// The article page's body: its template shows the title.
		return []byte(flowdoc.RenderHTMLWith(flowdoc.WithoutTitle(body, pub.Title), flowdoc.HTMLOptions{AssetURL: publicAssetURL})), "text/html; charset=utf-8", nil
	case "markdown":
		md := flowdoc.RenderMarkdown(flowdoc.MapAssets(flowdoc.WithoutTitle(body, pub.Title), publicAssetURL))
		return []byte(flowdoc.RenderMarkdownTitle(pub.Title) + md), "text/markdown; charset=utf-8", nil
	}
	pub.Visibility = "" // the JSON of a public article never varies with the reader
	data, err := json.Marshal(ArticleResponse{Publication: pub, Body: flowdoc.CanonicalJSON(body)})
	if err != nil {
		return nil, "", err
	}
	return append(data, '\n'), "application/json", nil
}

func (s *Server) listQuery(r *http.Request) (publish.ListQuery, error) {
	q := r.URL.Query()
	lq := publish.ListQuery{Category: q.Get("category"), Tag: q.Get("tag"), Cursor: q.Get("cursor")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return lq, errs.E(errs.Invalid, "limit %q is not a number", v)
		}
		lq.Limit = n
	}
	return lq, nil
}

func (s *Server) publicList(w http.ResponseWriter, r *http.Request) {
	lq, err := s.listQuery(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := s.pub.PublicList(r.Context(), lq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for i := range page.Articles {
		page.Articles[i].Visibility = ""
	}
	data, err := json.Marshal(page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data = append(data, '\n')
	s.writeTagged(w, r, data, "application/json")
}

// writeTagged writes data with an ETag of its hash (lists and feeds:
// what they hold changes with every publish).
func (s *Server) writeTagged(w http.ResponseWriter, r *http.Request, data []byte, ctype string) {
	sum := sha256.Sum256(data)
	tag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	if notModified(w, r, tag) {
		return
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// Atom feed (RFC 4287).
type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Author  atomAuthor  `xml:"author"`
	Link    []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

type atomAuthor struct {
	Name string `xml:"name"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomEntry struct {
	Title     string      `xml:"title"`
	ID        string      `xml:"id"`
	Published string      `xml:"published"`
	Updated   string      `xml:"updated"`
	Link      atomLink    `xml:"link"`
	Summary   string      `xml:"summary,omitempty"`
	Category  []atomCat   `xml:"category"`
	Content   atomContent `xml:"content"`
}

type atomCat struct {
	Term string `xml:"term,attr"`
}

type atomContent struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

func rfc3339(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

// feedBase is what the Atom feed's links start with and the feed's id:
// the configured site URL, or without one links relative to the feed
// ("" + "/v1/…") and a fixed URN. The request's Host header is never used.
func feedBase(site string) (base, id string) {
	if site == "" {
		return "", "urn:folio:feed"
	}
	base = strings.TrimSuffix(site, "/")
	return base, base + "/v1/public/feed.atom"
}

func (s *Server) publicFeed(w http.ResponseWriter, r *http.Request) {
	lq, err := s.listQuery(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	lq.Cursor = ""
	page, err := s.pub.PublicList(r.Context(), lq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	base, feedID := feedBase(s.cfg.SiteURL)
	title, author := s.siteNames()
	feed := atomFeed{Title: title, ID: feedID, Author: atomAuthor{Name: author},
		Link: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: base + "/v1/public/feed.atom"}}}
	var latest int64
	for _, p := range page.Articles {
		body, _, err := s.rendered.get(p, "html", func() ([]byte, string, error) {
			b, err := s.pub.Body(r.Context(), p)
			if err != nil {
				return nil, "", err
			}
			return render(p, b, "html")
		})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		url := base + "/a/" + p.Slug
		e := atomEntry{Title: p.Title, ID: "urn:folio:" + p.Doc, Published: rfc3339(p.Published), Updated: rfc3339(p.Updated),
			Link: atomLink{Rel: "alternate", Type: "text/html", Href: url}, Summary: p.Summary,
			Content: atomContent{Type: "html", Text: string(body)}}
		if p.Category != "" {
			e.Category = append(e.Category, atomCat{Term: p.Category})
		}
		for _, t := range p.Tags {
			e.Category = append(e.Category, atomCat{Term: t})
		}
		feed.Entries = append(feed.Entries, e)
		latest = max(latest, p.Updated)
	}
	feed.Updated = rfc3339(latest)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	if err := enc.Encode(feed); err != nil {
		s.fail(w, r, err)
		return
	}
	b.WriteByte('\n')
	s.writeTagged(w, r, b.Bytes(), "application/atom+xml; charset=utf-8")
}

// renderCache keeps rendered representations of published versions, by
// version and format (versions are immutable, so an entry is never stale;
// the publication check runs on every request before the cache is read).
// It is an LRU bounded by bytes, safe for concurrent use.
type renderCache struct {
	mu     sync.Mutex // guards the fields below
	budget int64
	bytes  int64
	order  *list.List // of *renderEntry, most recent first
	byKey  map[string]*list.Element
	hits   int64
	misses int64
}

type renderEntry struct {
	key, doc, ctype string
	data            []byte
}

func newRenderCache(budget int64) *renderCache {
	return &renderCache{budget: budget, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns the representation, making it with make on a miss.
func (c *renderCache) get(p publish.Publication, format string, make func() ([]byte, string, error)) ([]byte, string, error) {
	key := p.Version.String() + "/" + format
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		c.hits++
		re := e.Value.(*renderEntry)
		c.mu.Unlock()
		return re.data, re.ctype, nil
	}
	c.misses++
	c.mu.Unlock()
	data, ctype, err := make()
	if err != nil {
		return nil, "", err
	}
	n := int64(len(data) + len(key) + 64)
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > c.budget {
		return data, ctype, nil
	}
	if _, ok := c.byKey[key]; ok {
		return data, ctype, nil
	}
	for c.bytes+n > c.budget {
		last := c.order.Back()
		re := last.Value.(*renderEntry)
		c.bytes -= int64(len(re.data) + len(re.key) + 64)
		c.order.Remove(last)
		delete(c.byKey, re.key)
	}
	c.byKey[key] = c.order.PushFront(&renderEntry{key: key, doc: p.Doc, ctype: ctype, data: data})
	c.bytes += n
	return data, ctype, nil
}

// forgetDoc drops a document's entries (after a publish or visibility
// change; not needed for correctness, only to free memory early).
func (c *renderCache) forgetDoc(doc string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.order.Front(); e != nil; {
		next := e.Next()
		if re := e.Value.(*renderEntry); re.doc == doc {
			c.bytes -= int64(len(re.data) + len(re.key) + 64)
			c.order.Remove(e)
			delete(c.byKey, re.key)
		}
		e = next
	}
}
