package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/auth"
	"github.com/foliodev/folio/internal/errs"
	"github.com/foliodev/folio/internal/repo"
)

// Error codes on the wire. They are stable and append-only; docs/api.md
// lists them with their HTTP status.
const (
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict"
	CodeInvalid      = "invalid"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeTooLarge     = "too_large"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal"
	// CodeStorageFailed (503): the store failed; the daemon is stopping
	// and a supervisor restarts it. Nothing more was written.
	CodeStorageFailed = "storage_failed"
	// CodeStorageFull (507): the disk is below its free-space reserve;
	// nothing was written, reads work, writes resume once space is freed.
	CodeStorageFull = "storage_full"
)

// Error is the "error" member of every error response.
type Error struct {
	Code string `json:"code"`
	// Kind is the error's kind (errs.Kind's name) when it has one beyond
	// the codes above; it decides the status of a specific code.
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message"`
	// What and Name say what was missing (not_found): "document",
	// "version", "block", "user", "token", "endpoint".
	What   string `json:"what,omitempty"`
	Name   string `json:"name,omitempty"`
	Latest string `json:"latest,omitempty"` // latest label of the document (missing versions)
	// Doc, Reason, Seq and Blocks are the server's side of a conflict.
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

// statusOf is the HTTP status of e: its kind's when it has one.
func statusOf(e Error) int {
	if k, ok := errs.KindFromName(e.Kind); ok && e.Kind != "" {
		return k.HTTPStatus()
	}
	return Status(e.Code)
}

// Status returns the HTTP status of an error code.
func Status(code string) int {
	switch code {
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict:
		return http.StatusConflict
	case CodeInvalid:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnavailable, CodeStorageFailed:
		return http.StatusServiceUnavailable
	case CodeStorageFull:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// toError maps an error to its wire form; ok is false for internal errors,
// whose details are logged and not sent.
func toError(err error) (Error, bool) {
	var ve *flowdoc.ValidationError
	if errors.As(err, &ve) {
		ps := make([]string, len(ve.Problems))
		for i, p := range ve.Problems {
			ps[i] = p.String()
		}
		return Error{Code: CodeInvalid, Message: "invalid document: " + strings.Join(ps, "; "), Problems: ve.Problems}, true
	}
	var nf *repo.NotFoundError
	if errors.As(err, &nf) {
		return Error{Code: CodeNotFound, Message: nf.Error(), What: nf.What, Name: nf.Name, Latest: nf.Latest}, true
	}
	var ce *repo.ConflictError
	if errors.As(err, &ce) {
		return Error{Code: CodeConflict, Message: ce.Error(), Doc: ce.Doc, Reason: ce.Reason, Seq: ce.Seq, Blocks: ce.Blocks}, true
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return Error{Code: CodeTooLarge, Message: "request body is larger than the limit of " + sizeText(mb.Limit)}, true
	}
	switch errs.KindOf(err) {
	case errs.Storage, errs.StorageFull:
		return Error{Code: errs.CodeOf(err), Message: err.Error()}, true
	}
	switch {
	case errors.Is(err, repo.ErrInvalid), errors.Is(err, flowdoc.ErrInvalid):
		return Error{Code: CodeInvalid, Message: strings.TrimPrefix(err.Error(), "repo: invalid: ")}, true
	case errors.Is(err, repo.ErrConflict):
		return Error{Code: CodeConflict, Message: err.Error()}, true
	case errors.Is(err, repo.ErrNotFound):
		return Error{Code: CodeNotFound, Message: err.Error()}, true
	case errors.Is(err, auth.ErrNotFound):
		return Error{Code: CodeNotFound, Message: strings.TrimPrefix(err.Error(), "auth: not found: ") + " not found"}, true
	case errors.Is(err, auth.ErrExists):
		return Error{Code: CodeConflict, Message: strings.TrimPrefix(err.Error(), "auth: already exists: ") + " already exists"}, true
	case errors.Is(err, auth.ErrInvalid):
		return Error{Code: CodeInvalid, Message: strings.TrimPrefix(err.Error(), "auth: invalid: ")}, true
	case errors.Is(err, auth.ErrUnauthenticated):
		return errUnauthorized, true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Error{Code: CodeUnavailable, Message: "the request was cancelled"}, true
	}
	if k := errs.KindOf(err); k != errs.Internal {
		return Error{Code: errs.CodeOf(err), Kind: k.String(), Message: errs.Message(err)}, true
	}
	return Error{Code: CodeInternal, Message: "internal error"}, false
}

var errUnauthorized = Error{Code: CodeUnauthorized,
	Message: "missing, unknown or revoked token: send Authorization: Bearer <token> (create one with `folio user add NAME` or `folio token add USER`)"}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + " KiB"
	}
	return itoa(n) + " bytes"
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
