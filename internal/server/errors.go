package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

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
	// "version", "block", "endpoint".
	What   string `json:"what,omitempty"`
	Name   string `json:"name,omitempty"`
	Latest string `json:"latest,omitempty"` // latest label of the document (missing versions)
	// Doc, Reason, Seq and Blocks are the server's side of a conflict
	// (Doc also names the document of a missing version or block).
	Doc    string               `json:"doc,omitempty"`
	Reason string               `json:"reason,omitempty"`
	Seq    uint64               `json:"seq,omitempty"`
	Blocks []repo.ConflictBlock `json:"blocks,omitempty"`
	// Problems are the paths and rules an invalid document breaks.
	Problems []flowdoc.Problem `json:"problems,omitempty"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Err rebuilds the error in a client: the same kind, code and message
// it had in the daemon (errs.Remote).
func (e Error) Err() error {
	re := errs.Remote(e.Kind, e.Code, e.Message)
	if e.RetryAfterMs > 0 {
		re.RetryAfter = time.Duration(e.RetryAfterMs) * time.Millisecond
	}
	return re
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
		e.What, e.Name, e.Latest, e.Doc = nf.What, nf.Name, nf.Latest, nf.Doc
	}
	var ce *repo.ConflictError
	if errors.As(err, &ce) {
		e.Doc, e.Reason, e.Seq, e.Blocks = ce.Doc, ce.Reason, ce.Seq, ce.Blocks
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
