package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/foliodev/folio"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
)

// Error is the "error" member of every error response. Code, Kind and
// Message come from package errs (docs/api.md lists every kind with its
// status); the other fields carry a typed error's details.
type Error struct {
	// Code is the stable wire code: the kind's name, or a specific code
	// of that kind (e.g. "read_only", "writing_rate_limited").
	Code string `json:"code"`
	// Kind is the error's kind (errs.Kind's name); clients rebuild the
	// error with errs.Remote(kind, code, message).
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// RetryAfterMs says when a retry may succeed (rate limits).
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// What and Name say what was missing (not_found): "document",
	// "version", "block", "endpoint"; or, "draft" (invalid), the draft
	// named where a version is needed.
	What   string `json:"what,omitempty"`
	Name   string `json:"name,omitempty"`
	Latest string `json:"latest,omitempty"` // latest label of the document (missing versions)
	Label  string `json:"label,omitempty"`  // the version a missing block was looked for in
	// Doc, Check, Reason, Seq, BaseSeq, Expected, Actual, Missing and
	// Blocks are the fields of a *folio.ConflictError, the server's side
	// of a conflict (Doc also names the document of a missing version or
	// block).
	Doc      string                `json:"doc,omitempty"`
	Check    folio.Check           `json:"check,omitempty"`
	Reason   string                `json:"reason,omitempty"`
	Seq      uint64                `json:"seq,omitempty"`
	BaseSeq  uint64                `json:"baseSeq,omitempty"`
	Expected string                `json:"expected,omitempty"`
	Actual   string                `json:"actual,omitempty"`
	Missing  string                `json:"missing,omitempty"`
	Blocks   []folio.ConflictBlock `json:"blocks,omitempty"`
	// Problems are the paths and rules an invalid document breaks.
	Problems []flowdoc.Problem `json:"problems,omitempty"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Err rebuilds the error in a client: the same kind, code and message
// it had in the daemon (errs.Remote). A missing document, version or
// block also answers errors.As for *repo.NotFoundError with the fields
// sent, so that a client points at what exists the same way in both
// modes (the CLI's hints).
func (e Error) Err() error {
	re := errs.Remote(e.Kind, e.Code, e.Message)
	if e.RetryAfterMs > 0 {
		re.RetryAfter = time.Duration(e.RetryAfterMs) * time.Millisecond
	}
	switch {
	case re.Kind == errs.NotFound && (e.What == "document" || e.What == "version" || e.What == "block"):
		return &remoteFields{remote: re, nf: &repo.NotFoundError{What: e.What, Doc: e.Doc, Name: e.Name, Label: e.Label, Latest: e.Latest}}
	case re.Kind == errs.Invalid && e.What == "draft":
		return &remoteFields{remote: re, nv: &repo.NotVersionError{Doc: e.Doc, Name: e.Name}}
	}
	return re
}

// remoteFields is a daemon's error with the fields of its typed error:
// a missing document, version or block, or the draft named as a version.
type remoteFields struct {
	remote *errs.Error // the kind, code and message sent
	nf     *repo.NotFoundError
	nv     *repo.NotVersionError
}

func (e *remoteFields) Error() string { return e.remote.Error() }

// Unwrap gives the kind, code and message to errs.KindOf and errors.Is.
func (e *remoteFields) Unwrap() error { return e.remote }

// As gives a copy of the fields to errors.As.
func (e *remoteFields) As(target any) bool {
	switch p := target.(type) {
	case **repo.NotFoundError:
		if e.nf != nil {
			nf := *e.nf
			*p = &nf
			return true
		}
	case **repo.NotVersionError:
		if e.nv != nil {
			nv := *e.nv
			*p = &nv
			return true
		}
	}
	return false
}

// toError maps an error to its wire form. Internal errors say only that
// they happened; the caller logs their details.
func toError(err error) Error {
	k := errs.KindOf(err)
	e := Error{Code: errs.CodeOf(err), Kind: k.String(), Message: errs.Message(err)}
	if d := errs.RetryAfterOf(err); d > 0 {
		e.RetryAfterMs = max(d.Milliseconds(), 1)
	}
	var ve *flowdoc.ValidationError
	if errors.As(err, &ve) {
		e.Problems = ve.Problems
	}
	var nf *repo.NotFoundError
	if errors.As(err, &nf) {
		e.What, e.Name, e.Latest, e.Doc, e.Label = nf.What, nf.Name, nf.Latest, nf.Doc, nf.Label
	}
	var nv *repo.NotVersionError
	if errors.As(err, &nv) {
		e.What, e.Name, e.Doc = "draft", nv.Name, nv.Doc
	}
	var ce *folio.ConflictError
	if errors.As(err, &ce) {
		e.Doc, e.Check, e.Reason, e.Seq, e.BaseSeq = ce.Doc, ce.Check, ce.Reason, ce.Seq, ce.BaseSeq
		e.Expected, e.Actual, e.Missing, e.Blocks = ce.Expected, ce.Actual, ce.Missing, ce.Blocks
	}
	return e
}

// tooLarge is the error of a request body over the limit.
func tooLarge(mb *http.MaxBytesError) error {
	return errs.E(errs.TooLarge, "request body is larger than the limit of %s; send less (block changes rather than whole bodies)", sizeText(mb.Limit))
}

// errReadOnly refuses a change with a read-only (backup) token, with the
// same code over HTTP and WebSocket.
func errReadOnly(kind string) error {
	return errs.C(errs.Forbidden, "read_only", "a %s token may only read; use an author's token to change documents", kind)
}

// errAgent refuses a write with an agent token: the code is the kind's
// own (forbidden), as over WebSocket (syncproto.CodeForbidden) and MCP.
func errAgent(r *http.Request) error {
	return errs.E(errs.Forbidden, "an agent token may only read and propose suggestions; %s %s is the author's to do (with a full token)",
		r.Method, r.URL.EscapedPath())
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
