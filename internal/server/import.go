package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
)

// ImportResponse answers POST /v1/docs/import: the new document, its first
// version, and what of the Markdown had no block (as `folio doc new
// --from` prints on stderr).
type ImportResponse struct {
	Doc     string                `json:"doc"`
	Title   string                `json:"title"`
	Version repo.VersionInfo      `json:"version"`
	Notes   []flowdoc.Unsupported `json:"notes"`
}

// importDoc creates a document from an uploaded file (multipart form
// field "file", optional field "title"): Markdown (.md, .markdown) through
// flowdoc.ImportMarkdown, or a FlowDocument (.json) read strictly, the same
// importers as `folio doc new --from`.
func (s *Server) importDoc(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			s.fail(w, r, errs.E(errs.TooLarge, "the file is larger than the %d-byte request limit", mb.Limit))
			return
		}
		s.fail(w, r, errs.E(errs.Invalid, "an import is a multipart/form-data upload with the file in the field \"file\": %v", err))
		return
	}
	defer r.MultipartForm.RemoveAll()
	f, hdr, err := r.FormFile("file")
	if err != nil {
		s.fail(w, r, errs.E(errs.Invalid, "an import needs the file in the form field \"file\""))
		return
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		s.fail(w, r, errs.E(errs.Invalid, "read the uploaded file: %v", err))
		return
	}
	name := hdr.Filename
	var body flowdoc.Document
	var notes []flowdoc.Unsupported
	switch ext := strings.ToLower(filepath.Ext(name)); {
	case ext == ".md" || ext == ".markdown" || ext == ".txt":
		if body, notes, err = flowdoc.ImportMarkdown(data); err != nil {
			s.fail(w, r, errs.E(errs.Invalid, "import %s: %v", name, err))
			return
		}
	case ext == ".json" || bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")):
		if body, err = flowdoc.Parse(data); err != nil {
			s.fail(w, r, errs.Wrap(errs.Invalid, err))
			return
		}
	default:
		s.fail(w, r, errs.E(errs.Invalid, "%s is neither a FlowDocument .json nor a Markdown .md file", name))
		return
	}
	title := strings.TrimSpace(r.FormValue("title"))
	if title == "" {
		title = titleOf(body, name)
	}
	v, err := s.content.CreateDoc(r.Context(), repo.CreateParams{Owner: p.UserID, Author: p.User,
		Attrs: flowdoc.Attributes{Title: title}, Body: body, Message: "imported from " + name})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.m.checkpoints.WithLabelValues("create").Inc()
	if notes == nil {
		notes = []flowdoc.Unsupported{}
	}
	writeJSON(w, http.StatusCreated, ImportResponse{Doc: v.Doc, Title: title, Version: v, Notes: notes})
}

// titleOf is an imported document's title: its first heading's text, else
// the file's name without its extension.
func titleOf(d flowdoc.Document, name string) string {
	for _, b := range d.Blocks {
		if b.Type != "heading" {
			continue
		}
		var s strings.Builder
		for _, run := range b.RichText {
			s.WriteString(run.Text)
		}
		if t := strings.TrimSpace(s.String()); t != "" {
			return t
		}
	}
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if base == "" || base == "." {
		return "Imported"
	}
	return base
}
