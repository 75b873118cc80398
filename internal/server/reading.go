package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/foliodev/folio/assistant/reading"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// The reading assistant's endpoint: POST
// /v1/public/articles/{slug}/explain, no token. It explains a passage of a
// published public article as Server-Sent Events (docs/api.md). Any other
// article — password-protected ones included, whatever password is sent —
// is answered by publicMissing.

// ExplainRequest is the body of POST /v1/public/articles/{slug}/explain.
type ExplainRequest struct {
	Passage  string `json:"passage"`
	Block    string `json:"block,omitempty"`
	Question string `json:"question,omitempty"`
}

// Visitor identity: the X-Visitor-Id header, else the folio_visitor
// cookie; a request with neither gets a new id in a cookie.
const (
	VisitorHeader = "X-Visitor-Id"
	VisitorCookie = "folio_visitor"
)

func (s *Server) explain(w http.ResponseWriter, r *http.Request) {
	slug := r.PathValue("slug")
	// The article first: nothing about the request may make a hidden
	// article's answer differ from a missing one's.
	pub, _, err := s.pub.PublicationBySlug(r.Context(), slug, "")
	if err != nil {
		s.failPublic(w, r, slug, err)
		return
	}
	svc := s.cfg.Reading
	if svc == nil {
		s.fail(w, r, errDisabled(reading.CodeDisabled, "reading assistant"))
		return
	}
	var req ExplainRequest
	if err := decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	visitor := r.Header.Get(VisitorHeader)
	if visitor == "" {
		if c, err := r.Cookie(VisitorCookie); err == nil {
			visitor = c.Value
		}
	}
	if visitor == "" || len(visitor) > 64 {
		var b [12]byte
		_, _ = rand.Read(b[:])
		visitor = hex.EncodeToString(b[:])
		http.SetCookie(w, &http.Cookie{Name: VisitorCookie, Value: visitor, Path: "/v1/public/", MaxAge: 365 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	}
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	rr := reading.Request{Version: pub.Version.String(), Title: pub.Title, Passage: req.Passage, Block: req.Block,
		Question: req.Question, Visitor: visitor, Addr: addr}
	if err := svc.Check(rr); err != nil {
		s.fail(w, r, err)
		return
	}
	rr.LoadBody = func(ctx context.Context) (flowdoc.Document, error) { return s.pub.Body(ctx, pub) }
	started := false
	flusher, _ := w.(http.Flusher)
	emit := func(e reading.Event) error {
		if !started {
			started = true
			h := w.Header()
			h.Set("Content-Type", "text/event-stream; charset=utf-8")
			h.Set("Cache-Control", "no-store")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("X-Accel-Buffering", "no")
			w.WriteHeader(http.StatusOK)
		}
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if e.Type == "meta" {
			data, _ = json.Marshal(struct {
				reading.Event
				Version string `json:"version"`
				Label   string `json:"label"`
			}{e, pub.Version.String(), pub.Label})
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Type, data); err != nil {
			return errs.Wrap(errs.Canceled, err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	err = svc.Explain(r.Context(), rr, emit)
	if err == nil {
		return
	}
	if !started {
		s.fail(w, r, err)
		return
	}
	e := toError(err)
	if errs.KindOf(err) == errs.Internal {
		s.log.Error("reading explanation failed", "slug", slug, "err", err)
		e.Message = "internal error"
	}
	data, _ := json.Marshal(e)
	fmt.Fprintf(w, "event: error\ndata: %s\n\n", strings.TrimSpace(string(data)))
	if flusher != nil {
		flusher.Flush()
	}
}
