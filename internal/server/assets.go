package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/mediatype"
	"github.com/foliodev/folio/internal/repo"
	"github.com/foliodev/folio/objstore"
)

// AssetsPath is where assets are uploaded (POST) and read by
// authenticated users (GET AssetsPath + "/{hash}"); PublicAssetsPath +
// "{hash}" serves those of published public articles.
const (
	AssetsPath       = "/v1/assets"
	PublicAssetsPath = "/assets/"
)

// AssetResponse answers an upload (repo.AssetInfo).
type AssetResponse = repo.AssetInfo

func (s *Server) assetRoutes(mux *routeMux) {
	mux.HandleFunc("POST "+AssetsPath, s.authed(anyUser, s.uploadAsset))
	mux.HandleFunc("GET "+AssetsPath+"/{hash}", s.authed(anyUser, s.getAsset))
	mux.HandleFunc("GET "+PublicAssetsPath+"{hash}", s.public(s.publicAsset))
}

// uploadAsset is POST /v1/assets?name=FILE: the raw body is the file.
// The type is sniffed from the bytes (mediatype); the request's
// Content-Type is only checked not to announce a type Folio never
// serves, so that a client learns at once why an SVG is refused.
func (s *Server) uploadAsset(w http.ResponseWriter, r *http.Request) {
	limit := s.content.MaxAsset()
	if ct := r.Header.Get("Content-Type"); refusedDeclared(ct) {
		s.fail(w, r, errs.C(errs.Unsupported, mediatype.CodeUnsupported, "Content-Type %s is never stored: Folio serves no HTML, SVG or XML; allowed are PNG, JPEG, GIF, WebP and AVIF images, PDF, plain UTF-8 text and ZIP", ct))
		return
	}
	if r.ContentLength > int64(limit) {
		s.fail(w, r, errs.E(errs.TooLarge, "the file is %s, more than the asset limit of %s ([limits] asset_size)", sizeText(r.ContentLength), sizeText(int64(limit))))
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			err = tooLarge(mb)
		}
		s.fail(w, r, err)
		return
	}
	if len(data) > limit {
		s.fail(w, r, errs.E(errs.TooLarge, "the file is more than the asset limit of %s ([limits] asset_size)", sizeText(int64(limit))))
		return
	}
	p := principal(r)
	info, err := s.content.PutAsset(r.Context(), data, r.URL.Query().Get("name"), p.UserID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, info)
}

// refusedDeclared reports whether a declared Content-Type names a type
// that is refused whatever the bytes are.
func refusedDeclared(ct string) bool {
	for _, bad := range []string{"text/html", "image/svg", "application/xhtml", "text/xml", "application/xml", "application/javascript", "text/javascript"} {
		if len(ct) >= len(bad) && equalFold(ct[:len(bad)], bad) {
			return true
		}
	}
	return false
}

func equalFold(a, b string) bool { return bytes.EqualFold([]byte(a), []byte(b)) }

// getAsset is GET /v1/assets/{hash}: for an admin, the uploader, and the
// owners of documents that reference it. Every other caller, and an
// unknown or malformed hash, gets the same 404.
func (s *Server) getAsset(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	notFound := func() { s.fail(w, r, &repo.NotFoundError{What: "asset", Name: hash}) }
	id, err := objstore.ParseID(hash)
	if err != nil || id.String() != hash {
		notFound()
		return
	}
	p := principal(r)
	if !p.Admin {
		ok, err := s.content.MayReadAsset(id, p.UserID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if !ok {
			notFound()
			return
		}
	}
	a, info, err := s.content.Asset(r.Context(), id)
	if errors.Is(err, repo.ErrNotFound) {
		notFound()
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	serveAsset(w, r, a, info, "private, max-age=31536000, immutable")
}

// publicAsset is GET /assets/{hash}: served only while the published
// version of a public article references it, or with the signature a
// password-protected article's page gives its assets (signedAssetURL);
// otherwise exactly the site's 404.
func (s *Server) publicAsset(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	id, err := objstore.ParseID(hash)
	if err != nil || id.String() != hash {
		s.siteNotFound(w, r)
		return
	}
	cache := "public, max-age=31536000, immutable"
	ok, err := s.pub.PublicAsset(r.Context(), id)
	if err == nil && !ok {
		// A password-protected article's page signs its asset URLs.
		ok, err = s.protectedAsset(r, id)
		cache = "private, no-store"
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !ok {
		s.siteNotFound(w, r)
		return
	}
	a, info, err := s.content.Asset(r.Context(), id)
	if errors.Is(err, repo.ErrNotFound) {
		s.siteNotFound(w, r)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	serveAsset(w, r, a, info, cache)
}

// serveAsset writes an asset: its sniffed type, never anything a browser
// could run (nosniff, a sandboxing CSP), inline for images and as an
// attachment otherwise, with a strong ETag (the hash) and ranges.
func serveAsset(w http.ResponseWriter, r *http.Request, a *objstore.Asset, info repo.AssetInfo, cache string) {
	h := w.Header()
	h.Set("ETag", `"`+info.Hash.String()+`"`)
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Content-Type", a.MIME)
	h.Set("Content-Disposition", mediatype.Disposition(a.MIME, info.Name))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.Data))
}
