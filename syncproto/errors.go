package syncproto

import (
	"errors"
	"fmt"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/flowdoc"
)

// Code is a stable error code on the wire. The list is append-only: a code
// keeps its meaning forever and clients switch on it, never on messages.
type Code string

// The error codes.
const (
	// CodeBadMessage: the frame is not a message (bad encoding, missing or
	// mistyped fields, wrong frame type for the subprotocol).
	CodeBadMessage Code = "bad_message"
	// CodeUnknownType: the message type is not one a client may send.
	CodeUnknownType Code = "unknown_type"
	// CodeBadRequest: a well-formed message whose values are not
	// acceptable (empty doc id, unknown stream kind, unknown change op).
	CodeBadRequest Code = "bad_request"
	// CodeNotFound: no such document, version or stream, or one that this
	// user may not see (both are answered alike).
	CodeNotFound Code = "not_found"
	// CodeNotOpen: the document was not opened on this connection.
	CodeNotOpen Code = "not_open"
	// CodeInvalidDocument: the save would make an invalid document;
	// Problems name the paths. Nothing was stored.
	CodeInvalidDocument Code = "invalid_document"
	// CodeConflict: a stale baseline outside draft saves (restore,
	// checkpoint). Draft saves answer draft.conflict instead.
	CodeConflict Code = "conflict"
	// CodeRateLimited: more messages per second than the connection's
	// limit; the message was dropped. RetryAfterMs says when to retry.
	CodeRateLimited Code = "rate_limited"
	// CodeTooManySubscriptions: the connection holds its maximum of
	// subscriptions (open documents count).
	CodeTooManySubscriptions Code = "too_many_subscriptions"
	// CodeAlreadySubscribed: the stream (or document) is already
	// subscribed (opened) on this connection.
	CodeAlreadySubscribed Code = "already_subscribed"
	// CodeNotSubscribed: unsubscribe of a stream that is not subscribed.
	CodeNotSubscribed Code = "not_subscribed"
	// CodeHelloRequired: a request before the connection authenticated.
	CodeHelloRequired Code = "hello_required"
	// CodeUnavailable: the server is shutting down; retry elsewhere/later.
	CodeUnavailable Code = "unavailable"
	// CodeInternal: the server failed; the request may be retried.
	CodeInternal Code = "internal"
	// CodeReadOnly: the token may only read; saves, checkpoints and
	// restores are refused.
	CodeReadOnly Code = "read_only"
	// CodeStorageFailed: the server's store failed; nothing was written
	// and the server is stopping (the connection closes with
	// CloseStorageFailed). Resend after it restarts.
	CodeStorageFailed Code = "storage_failed"
	// CodeStorageFull: the server's disk is full; nothing was written.
	// Reads work; retry the save later (RetryAfterMs), the server accepts
	// writes again by itself once space is freed.
	CodeStorageFull Code = "storage_full"
)

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
	ErrUnauthenticated = errors.New("syncproto: unauthenticated")
	// ErrClosed: the server or connection is closed.
	ErrClosed = errors.New("syncproto: closed")
)

// RemoteError is an error reply received by a client.
type RemoteError struct {
	Code         Code
	Message      string
	ID           string            // the request's id
	Problems     []flowdoc.Problem // invalid_document
	RetryAfterMs int64             // rate_limited
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("syncproto: %s: %s", e.Code, e.Message)
}
