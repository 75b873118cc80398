package syncproto

import (
	"fmt"
	"time"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/flowdoc"
	"github.com/foliodev/folio/internal/errs"
)

// Code is a stable error code on the wire. The list is append-only: a code
// keeps its meaning forever and clients switch on it, never on messages.
//
// Codes are the HTTP API's (package errs, DESIGN.md §11): an error is sent
// with its kind's default code ("invalid", "not_found", …) unless the
// protocol has a specific code for the case, which then has a kind of its
// own (Code.Kind). The same error gets the same code over HTTP and over
// WebSocket; every error message also carries the kind's name.
type Code string

// The error codes shared with the HTTP API: each is the default code of
// its kind (errs.Kind.String()).
const (
	// CodeInvalid: a well-formed request whose values are not acceptable
	// (empty doc id, unknown stream kind, unknown change op), or a save
	// that would make an invalid document (Problems name the paths).
	// Nothing was stored.
	CodeInvalid Code = "invalid"
	// CodeNotFound: no such document, version or stream, or one that this
	// user may not see (both are answered alike).
	CodeNotFound Code = "not_found"
	// CodeConflict: a stale baseline outside draft saves (restore,
	// checkpoint). Draft saves answer draft.conflict instead.
	CodeConflict Code = "conflict"
	// CodeRateLimited: more messages per second than the connection's
	// limit; the message was dropped. RetryAfterMs says when to retry.
	CodeRateLimited Code = "rate_limited"
	// CodeUnavailable: the server is shutting down; retry elsewhere/later.
	CodeUnavailable Code = "unavailable"
	// CodeInternal: the server failed; the request may be retried.
	CodeInternal Code = "internal"
	// CodeStorageFailed: the server's store failed; nothing was written
	// and the server is stopping (the connection closes with
	// CloseStorageFailed). Resend after it restarts.
	CodeStorageFailed Code = "storage_failed"
	// CodeStorageFull: the server's disk is full; nothing was written.
	// Reads work; retry the save later (RetryAfterMs), the server accepts
	// writes again by itself once space is freed.
	CodeStorageFull Code = "storage_full"
)

// The protocol's specific codes, each with its kind (Code.Kind).
const (
	// CodeBadMessage (invalid): the frame is not a message (bad encoding,
	// missing or mistyped fields, wrong frame type for the subprotocol).
	CodeBadMessage Code = "bad_message"
	// CodeUnknownType (invalid): the message type is not one a client may
	// send.
	CodeUnknownType Code = "unknown_type"
	// CodeNotOpen (invalid): the document was not opened on this
	// connection.
	CodeNotOpen Code = "not_open"
	// CodeTooManySubscriptions (too_large): the connection holds its
	// maximum of subscriptions (open documents count).
	CodeTooManySubscriptions Code = "too_many_subscriptions"
	// CodeAlreadySubscribed (conflict): the stream (or document) is already
	// subscribed (opened) on this connection.
	CodeAlreadySubscribed Code = "already_subscribed"
	// CodeNotSubscribed (not_found): unsubscribe of a stream that is not
	// subscribed.
	CodeNotSubscribed Code = "not_subscribed"
	// CodeHelloRequired (unauthenticated): a request before the connection
	// authenticated.
	CodeHelloRequired Code = "hello_required"
	// CodeReadOnly (forbidden): the token may only read; saves,
	// checkpoints and restores are refused. The HTTP API answers the same
	// code.
	CodeReadOnly Code = "read_only"
	// CodeForbidden (forbidden): the token may not do this; an agent
	// token's writes other than proposals (AgentMay). The HTTP API and
	// the MCP tools answer the same code.
	CodeForbidden Code = "forbidden"
	// CodeTooManyChanges, CodeTooManyBlocks, CodeTooManyRuns (too_large):
	// a save over the request limits (changes per save, blocks, rich-text
	// runs), refused before any work. Split it. Nothing was stored. The
	// HTTP API answers the same codes.
	CodeTooManyChanges Code = "too_many_changes"
	CodeTooManyBlocks  Code = "too_many_blocks"
	CodeTooManyRuns    Code = "too_many_runs"
)

// codeKinds are the kinds of the protocol's specific codes.
var codeKinds = map[Code]errs.Kind{
	CodeBadMessage:           errs.Invalid,
	CodeUnknownType:          errs.Invalid,
	CodeNotOpen:              errs.Invalid,
	CodeTooManySubscriptions: errs.TooLarge,
	CodeAlreadySubscribed:    errs.Conflict,
	CodeNotSubscribed:        errs.NotFound,
	CodeHelloRequired:        errs.Unauthenticated,
	CodeReadOnly:             errs.Forbidden,
	CodeTooManyChanges:       errs.TooLarge,
	CodeTooManyBlocks:        errs.TooLarge,
	CodeTooManyRuns:          errs.TooLarge,
}

// Kind is the kind of errors with this code: the kind it names for a
// kind's default code, its own for a specific code, Internal for a code
// this version does not know.
func (c Code) Kind() errs.Kind {
	if k, ok := codeKinds[c]; ok {
		return k
	}
	k, _ := errs.KindFromCode(string(c))
	return k
}

// SpecificCodes returns the protocol's specific codes with their kinds,
// for docs and tests.
func SpecificCodes() map[Code]errs.Kind {
	out := make(map[Code]errs.Kind, len(codeKinds))
	for c, k := range codeKinds {
		out[c] = k
	}
	return out
}

// Close codes (RFC 6455 §7.4: 4000-4999 are the application's). A
// resumable close means: reconnect, hello, open again and subscribe from
// the last cursor seen.
const (
	// CloseNormal: the client or server ended the session.
	CloseNormal = websocket.StatusNormalClosure // 1000
	// CloseTooLarge: a frame exceeded Limits.MaxFrame (sent by the
	// WebSocket layer).
	CloseTooLarge = websocket.StatusMessageTooBig // 1009
	// CloseAuthFailed: no hello within the timeout, or a missing or wrong
	// token. Not resumable without new credentials.
	CloseAuthFailed websocket.StatusCode = 4001
	// CloseTokenRevoked: the token (or its user) was revoked.
	CloseTokenRevoked websocket.StatusCode = 4002
	// CloseSlowConsumer: the send queue stayed full. Resumable; the reason
	// lists the last cursor sent per stream.
	CloseSlowConsumer websocket.StatusCode = 4003
	// CloseShutdown: the server is shutting down. Resumable.
	CloseShutdown websocket.StatusCode = 4004
	// CloseProtocolError: no usable subprotocol, or the connection broke
	// the protocol in a way an error reply cannot fix.
	CloseProtocolError websocket.StatusCode = 4005
	// CloseStorageFailed: the server's store failed and the server is
	// stopping (fail-stop); a supervisor restarts it. Not resumable on
	// this server process: reconnect with backoff once it is back, open
	// the documents again and resend the saves never acknowledged.
	CloseStorageFailed websocket.StatusCode = 4006
	// CloseAccessWithdrawn: a document the connection had open or
	// subscribed to was given to another user. Not resumable for that
	// document (it now answers not_found); others may be opened again on
	// a new connection.
	CloseAccessWithdrawn websocket.StatusCode = 4007
)

// Resumable reports whether a close code invites the client to reconnect
// and resume from its cursors.
func Resumable(code websocket.StatusCode) bool {
	switch code {
	case CloseSlowConsumer, CloseShutdown, websocket.StatusGoingAway, websocket.StatusAbnormalClosure:
		return true
	}
	return false
}

// Sentinels of the package.
var (
	// ErrUnauthenticated is returned by an Authenticator for a missing,
	// unknown or revoked token.
	ErrUnauthenticated error = errs.E(errs.Unauthenticated, "syncproto: unauthenticated")
	// ErrClosed: the server or connection is closed.
	ErrClosed error = errs.E(errs.Unavailable, "syncproto: closed")
)

// RemoteError is an error reply received by a client. It has the kind,
// code and message the error had in the server (errors.Is(err,
// errs.NotFound) works on it as on the server's error).
type RemoteError struct {
	Code         Code
	Kind         string // the kind's name; "" from servers before kinds were sent
	Message      string
	ID           string            // the request's id
	Problems     []flowdoc.Problem // invalid documents
	RetryAfterMs int64             // rate_limited
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("syncproto: %s: %s", e.Code, e.Message)
}

// ErrKind is the error's kind: the one the server sent, else the code's.
func (e *RemoteError) ErrKind() errs.Kind {
	if k, ok := errs.KindFromName(e.Kind); ok {
		return k
	}
	return e.Code.Kind()
}

// ErrCode is the wire code.
func (e *RemoteError) ErrCode() string { return string(e.Code) }

// ErrRetryAfter is when a retry may succeed, 0 when unknown.
func (e *RemoteError) ErrRetryAfter() time.Duration {
	return time.Duration(e.RetryAfterMs) * time.Millisecond
}

// Is makes errors.Is(err, errs.NotFound) true for a remote not-found.
func (e *RemoteError) Is(target error) bool {
	k, ok := target.(errs.Kind)
	return ok && k == e.ErrKind()
}
