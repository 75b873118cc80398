package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/repo"
)

// noisePNG is a w×h PNG of noise (distinct per seed, incompressible).
func noisePNG(t testing.TB, w, h int, seed uint32) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	x := seed | 1
	for i := range img.Pix {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i] = uint8(x)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload POSTs data to /v1/assets as token.
func (e *env) upload(token string, data []byte, ctype, name string) *httptest.ResponseRecorder {
	e.t.Helper()
	path := AssetsPath
	if name != "" {
		path += "?name=" + url.QueryEscape(name)
	}
	h := http.Header{"Authorization": {"Bearer " + token}}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	return e.raw("POST", path, h, string(data))
}

func (e *env) uploaded(token string, data []byte, name string) repo.AssetInfo {
	e.t.Helper()
	w := e.upload(token, data, "application/octet-stream", name)
	if w.Code != http.StatusCreated {
		e.t.Fatalf("upload: %d %s", w.Code, w.Body)
	}
	var info repo.AssetInfo
	if err := json.Unmarshal(w.Body.Bytes(), &info); err != nil {
		e.t.Fatal(err)
	}
	return info
}

// authedGet is a GET with token straight to the handler.
func (e *env) authedGet(token, path string, extra ...string) *httptest.ResponseRecorder {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return e.raw("GET", path, h, "")
}

// articleWithImage makes a document of ann's titled title whose body
// starts with the title as a heading and holds an image of src.
func (e *env) articleWithImage(title, slug, src string) string {
	e.t.Helper()
	body, _ := json.Marshal(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		{ID: "h1", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 1}, RichText: []flowdoc.Run{{Text: title}}},
		para("p1", "Some words about it."),
		{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: src, Alt: "a chart"}},
	}})
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", e.ann, CreateRequest{Attrs: flowdoc.Attributes{Title: title, Slug: slug, Summary: "A short summary."}, Body: body}, &v)
	return v.Doc
}

func TestAssetUploadAndAccess(t *testing.T) {
	e := newEnv(t, nil)
	empty := newEnv(t, nil)
	data := noisePNG(t, 6, 4, 1)
	w := e.upload(e.ann, data, "image/png", "chart.png")
	if w.Code != http.StatusCreated {
		t.Fatalf("upload: %d %s", w.Code, w.Body)
	}
	var got map[string]any
	json.Unmarshal(w.Body.Bytes(), &got)
	for _, k := range []string{"hash", "url", "mime", "size", "width", "height", "name"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("upload answer %s lacks %q", w.Body, k)
		}
	}
	var info repo.AssetInfo
	json.Unmarshal(w.Body.Bytes(), &info)
	if info.MIME != "image/png" || info.Width != 6 || info.Height != 4 || info.Size != len(data) || info.Name != "chart.png" || info.URL != "folio-asset:"+info.Hash.String() {
		t.Fatalf("upload answer %+v", info)
	}
	path := AssetsPath + "/" + info.Hash.String()

	// The uploader reads it, with the headers that keep it inert.
	r := e.authedGet(e.ann, path)
	if r.Code != 200 || !bytes.Equal(r.Body.Bytes(), data) {
		t.Fatalf("uploader's GET: %d", r.Code)
	}
	for k, v := range map[string]string{
		"Content-Type": "image/png", "ETag": `"` + info.Hash.String() + `"`, "X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": "default-src 'none'; sandbox", "Cache-Control": "private, max-age=31536000, immutable",
		"Content-Disposition": `inline; filename="chart.png"; filename*=UTF-8''chart.png`,
	} {
		if r.Header().Get(k) != v {
			t.Errorf("%s = %q, want %q", k, r.Header().Get(k), v)
		}
	}
	if r := e.authedGet(e.ann, path, "If-None-Match", `"`+info.Hash.String()+`"`); r.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r.Code)
	}
	if r := e.authedGet(e.admin, path); r.Code != 200 {
		t.Errorf("admin: %d", r.Code)
	}
	// Another author, and nobody, get exactly what a store without it
	// answers.
	want := empty.authedGet(empty.bob, path)
	if want.Code != http.StatusNotFound {
		t.Fatalf("missing asset: %d", want.Code)
	}
	sameResponse(t, "another author's GET of an asset", e.authedGet(e.bob, path), want)
	if r := e.authedGet("", path); r.Code != http.StatusUnauthorized {
		t.Errorf("no token: %d", r.Code)
	}
	sameResponse(t, "a malformed hash", e.authedGet(e.bob, AssetsPath+"/NOTAHASH"), empty.authedGet(empty.bob, AssetsPath+"/NOTAHASH"))

	// Bob cannot make it his by naming it in a document.
	body, _ := json.Marshal(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		{ID: "m1", Type: flowdoc.Media, Attrs: &flowdoc.Attrs{Kind: "image", Src: info.URL}}}})
	st, msg := e.call("POST", "/v1/docs", e.bob, CreateRequest{Attrs: flowdoc.Attributes{Title: "Mine"}, Body: body})
	if st != http.StatusBadRequest || errOf(t, msg).Code != repo.CodeUnknownAsset {
		t.Fatalf("bob naming ann's asset: %d %s", st, msg)
	}
	// A document of ann's referencing it makes its readers readers.
	doc := e.articleWithImage("Charts", "charts", info.URL)
	_ = doc
	if r := e.authedGet(e.ann, path); r.Code != 200 {
		t.Fatalf("owner of a referencing document: %d", r.Code)
	}
}

func TestAssetUploadRefusals(t *testing.T) {
	e := newEnvRepo(t, repo.Options{MaxAsset: 4096}, nil)
	cases := []struct {
		name, ctype string
		data        []byte
		status      int
		code        string
	}{
		{"svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), 415, "unsupported_type"},
		{"svg sent as octets", "application/octet-stream", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 415, "unsupported_type"},
		{"html", "text/html", []byte("<!doctype html><script>alert(1)</script>"), 415, "unsupported_type"},
		{"html sent as a png", "image/png", []byte("<html><body onload=alert(1)>"), 415, "unsupported_type"},
		{"truncated png", "image/png", noisePNG(t, 4, 4, 2)[:60], 415, "unsupported_type"},
		{"too large", "image/png", noisePNG(t, 64, 64, 3), 413, "too_large"},
	}
	for _, c := range cases {
		w := e.upload(e.ann, c.data, c.ctype, c.name)
		if w.Code != c.status || errOf(t, w.Body.Bytes()).Code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, w.Code, w.Body, c.status, c.code)
		}
		if !strings.Contains(w.Body.String(), "allowed are") && c.status == 415 {
			t.Errorf("%s: the refusal %s does not say what is allowed", c.name, w.Body)
		}
	}
	// A PNG carrying an HTML payload is stored and served as a PNG, inert.
	p := noisePNG(t, 2, 2, 4)
	iend := bytes.LastIndex(p, []byte("IEND")) - 4
	var chunk bytes.Buffer
	payload := []byte("Comment\x00<html><script>alert(1)</script></html>")
	fmt.Fprintf(&chunk, "%c%c%c%ctEXt%s\x00\x00\x00\x00", 0, 0, 0, len(payload), payload)
	poly := append(append(append([]byte{}, p[:iend]...), chunk.Bytes()...), p[iend:]...)
	info := e.uploaded(e.ann, poly, "x.png")
	r := e.authedGet(e.ann, AssetsPath+"/"+info.Hash.String())
	if r.Header().Get("Content-Type") != "image/png" || r.Header().Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(r.Header().Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("polyglot served as %v", r.Header())
	}
	// A file that is not an image is an attachment.
	txt := e.uploaded(e.ann, []byte("plain notes\n"), "notes.txt")
	r = e.authedGet(e.ann, AssetsPath+"/"+txt.Hash.String())
	if r.Header().Get("Content-Type") != "text/plain; charset=utf-8" || !strings.HasPrefix(r.Header().Get("Content-Disposition"), "attachment") {
		t.Fatalf("text served as %v", r.Header())
	}
}

func TestPublicAssetsOnlyForPublishedPublicArticles(t *testing.T) {
	e := newEnv(t, nil)
	empty := newEnv(t, nil)
	info := e.uploaded(e.ann, noisePNG(t, 3, 3, 5), "a.png")
	path := PublicAssetsPath + info.Hash.String()
	missing := empty.raw("GET", path, nil, "")
	if missing.Code != http.StatusNotFound {
		t.Fatalf("missing public asset: %d", missing.Code)
	}
	hidden := func(what string) {
		t.Helper()
		sameResponse(t, what, e.raw("GET", path, nil, ""), missing)
	}
	hidden("an asset no article references")
	doc := e.articleWithImage("Pictures", "pictures", info.URL)
	hidden("an asset of a draft")
	e.ok("POST", "/v1/docs/"+doc+"/publish", e.ann, PublishRequest{Visibility: "private"}, nil)
	hidden("an asset of a private article")
	e.ok("PUT", "/v1/docs/"+doc+"/visibility", e.ann, map[string]string{"visibility": "password", "password": "pw-long-enough"}, nil)
	hidden("an asset of a password-protected article")
	e.ok("PUT", "/v1/docs/"+doc+"/visibility", e.ann, map[string]string{"visibility": "public"}, nil)
	r := e.raw("GET", path, nil, "")
	if r.Code != 200 || r.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || r.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("public asset: %d %v", r.Code, r.Header())
	}
	// The article's HTML names it under /assets/.
	_, html := e.call("GET", "/v1/public/articles/pictures/html", "", nil)
	if !strings.Contains(string(html), `src="/assets/`+info.Hash.String()+`"`) {
		t.Fatalf("html does not serve the image from /assets/: %s", html)
	}
	_, md := e.call("GET", "/v1/public/articles/pictures/markdown", "", nil)
	if !strings.Contains(string(md), "](/assets/"+info.Hash.String()) {
		t.Fatalf("markdown does not point at /assets/: %s", md)
	}
	e.ok("POST", "/v1/docs/"+doc+"/unpublish", e.ann, nil, nil)
	hidden("an asset of an unpublished article")
}

// TestTitleShownOnce: a body that starts with its title as a heading
// shows the title once in every published representation.
func TestTitleShownOnce(t *testing.T) {
	e := newEnv(t, nil)
	info := e.uploaded(e.ann, noisePNG(t, 3, 3, 6), "a.png")
	doc := e.articleWithImage("Storage engines", "storage-engines", info.URL)
	e.ok("POST", "/v1/docs/"+doc+"/publish", e.ann, nil, nil)
	for _, c := range []struct{ path, title string }{
		{"/v1/public/articles/storage-engines/html", "Storage engines"},
		{"/v1/public/articles/storage-engines/markdown", "# Storage engines"},
		{"/v1/public/feed.atom", "Storage engines"},
		{"/a/storage-engines", "Storage engines"},
	} {
		_, body := e.call("GET", c.path, "", nil)
		n := strings.Count(string(body), c.title)
		want := 1
		switch c.path {
		case "/v1/public/feed.atom":
			want = 2 // the entry's <title> and its content's <h1>
		case "/a/storage-engines":
			want = 2 // <title> and the page's <h1>
		}
		if n != want {
			t.Errorf("%s shows %q %d times, want %d:\n%s", c.path, c.title, n, want, body)
		}
	}
	// A body whose first heading is something else keeps it.
	body, _ := json.Marshal(flowdoc.Document{SchemaVersion: 1, Blocks: []flowdoc.Block{
		{ID: "h1", Type: flowdoc.Heading, Attrs: &flowdoc.Attrs{Level: 1}, RichText: []flowdoc.Run{{Text: "Introduction"}}}, para("p1", "x")}})
	var v repo.VersionInfo
	e.ok("POST", "/v1/docs", e.ann, CreateRequest{Attrs: flowdoc.Attributes{Title: "Other", Slug: "other"}, Body: body}, &v)
	e.ok("POST", "/v1/docs/"+v.Doc+"/publish", e.ann, nil, nil)
	_, html := e.call("GET", "/v1/public/articles/other/html", "", nil)
	if !strings.Contains(string(html), "Introduction") {
		t.Fatalf("a first heading that is not the title was dropped: %s", html)
	}
}

// An upload may be larger than a JSON body may be: the asset limit
// bounds it.
func TestAssetUploadAboveTheBodyLimit(t *testing.T) {
	e := newEnvRepo(t, repo.Options{Limits: flowdoc.Limits{MaxBlocks: 100, MaxBytes: 64 << 10}, MaxAsset: 1 << 20}, nil)
	data := noisePNG(t, 256, 256, 9) // about 260 KiB, over the 129 KiB body limit
	if len(data) < 200<<10 {
		t.Fatalf("test image of %d bytes is too small", len(data))
	}
	if w := e.upload(e.ann, data, "image/png", "big.png"); w.Code != http.StatusCreated {
		t.Fatalf("upload of %d bytes: %d %s", len(data), w.Code, w.Body)
	}
}
