package errs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Kind is the class of an error: what the caller can do about it. Kinds are
// a closed set; the wire and the CLI derive everything from them (see the
// table in kinds). A Kind is itself an error so that errors.Is(err,
// errs.NotFound) asks "is this a not-found error?" of any error that
// carries a kind.
type Kind uint8

// The kinds. Internal is the zero value: an error that nobody classified is
// a bug until someone does.
const (
	Internal        Kind = iota // a bug or an unexpected failure; details are logged, not sent
	Usage                       // bad flags or arguments to a command (CLI only)
	Invalid                     // a document, operation, argument or body that breaks a rule
	NotFound                    // no such thing, or one the caller may not see (answered alike)
	Conflict                    // a stale baseline or something that already exists; nothing written
	Unauthenticated             // missing, unknown or revoked credentials
	Forbidden                   // valid credentials that may not do this
	TooLarge                    // a request over a size or count limit
	RateLimited                 // too many requests or tokens for now; retry after RetryAfter
	Unavailable                 // shutting down, unreachable or busy; retry later
	Disabled                    // a feature switched off by the deployment
	StorageFull                 // the disk is full; reads work, writes resume when space is freed
	Storage                     // the store failed; the daemon stops (fail-stop)
	Corrupt                     // stored data failed an integrity check
	Canceled                    // the caller went away or gave up
	Unsupported                 // an upload of a type Folio does not store or serve
	numKinds
)

// kindInfo is one row of the table every mapping is derived from.
type kindInfo struct {
	name      string // the Kind's name and its default wire code
	status    int    // HTTP status
	exit      int    // CLI exit code (docs/cli.md)
	retryable bool   // the same request may succeed later without change
}

// Exit codes of the CLI; docs/cli.md lists them.
const (
	ExitOK          = 0
	ExitError       = 1 // internal and anything unclassified
	ExitUsage       = 2 // bad flags or arguments
	ExitNotFound    = 3
	ExitConflict    = 4
	ExitInvalid     = 5
	ExitUnavailable = 6 // store missing or locked, daemon unreachable, storage failed
	ExitProblems    = 7 // integrity problems (fsck, corrupt data)
	ExitDenied      = 8 // unauthenticated or forbidden
	ExitLimited     = 9 // rate limited, too large, disabled
)

var kinds = [numKinds]kindInfo{
	Internal:        {"internal", http.StatusInternalServerError, ExitError, false},
	Usage:           {"usage", http.StatusBadRequest, ExitUsage, false},
	Invalid:         {"invalid", http.StatusBadRequest, ExitInvalid, false},
	NotFound:        {"not_found", http.StatusNotFound, ExitNotFound, false},
	Conflict:        {"conflict", http.StatusConflict, ExitConflict, false},
	Unauthenticated: {"unauthorized", http.StatusUnauthorized, ExitDenied, false},
	Forbidden:       {"forbidden", http.StatusForbidden, ExitDenied, false},
	TooLarge:        {"too_large", http.StatusRequestEntityTooLarge, ExitLimited, false},
	RateLimited:     {"rate_limited", http.StatusTooManyRequests, ExitLimited, true},
	Unavailable:     {"unavailable", http.StatusServiceUnavailable, ExitUnavailable, true},
	Disabled:        {"disabled", http.StatusForbidden, ExitLimited, false},
	StorageFull:     {"storage_full", http.StatusInsufficientStorage, ExitUnavailable, true},
	Storage:         {"storage_failed", http.StatusServiceUnavailable, ExitUnavailable, true},
	Corrupt:         {"corrupt", http.StatusInternalServerError, ExitProblems, false},
	Canceled:        {"canceled", 499, ExitError, true},
	Unsupported:     {"unsupported", http.StatusUnsupportedMediaType, ExitInvalid, false},
}

func (k Kind) info() kindInfo {
	if k >= numKinds {
		return kinds[Internal]
	}
	return kinds[k]
}

// String is the kind's name, which is also its default wire code.
func (k Kind) String() string { return k.info().name }

// KindName is the kind's name; the errors of packages below this one
// (flowdoc) match a kind by it in their Is methods.
func (k Kind) KindName() string { return k.info().name }

// Error makes a Kind usable as a target of errors.Is.
func (k Kind) Error() string { return "errs: " + k.String() }

// HTTPStatus is the HTTP status of errors of this kind.
func (k Kind) HTTPStatus() int { return k.info().status }

// ExitCode is the CLI exit code of errors of this kind.
func (k Kind) ExitCode() int { return k.info().exit }

// Retryable says whether errors of this kind may succeed when retried
// unchanged. An *Error may override it.
func (k Kind) Retryable() bool { return k.info().retryable }

// Kinds returns every kind, in order, for tables in docs and tests.
func Kinds() []Kind {
	out := make([]Kind, numKinds)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// KindFromCode returns the kind whose default code is code. A specific
// code (e.g. "writing_rate_limited") is not a kind's default code; a
// remote error carries its kind on the wire for that reason.
func KindFromCode(code string) (Kind, bool) {
	for i, k := range kinds {
		if k.name == code {
			return Kind(i), true
		}
	}
	return Internal, false
}

// KindFromName parses a kind's name (its default code).
func KindFromName(name string) (Kind, bool) { return KindFromCode(name) }

// Error is an error with a kind, a stable wire code and a message meant
// for people. Err, when set, is the cause; its text is not part of Msg
// unless the maker put it there.
type Error struct {
	Kind Kind
	// Code is the stable, append-only wire code; "" means the kind's
	// default code. Specific codes name the case a client may branch on
	// (e.g. "personalization_conflict", "writing_rate_limited").
	Code string
	// Msg says what was wrong and what to do, for people.
	Msg string
	// Err is the underlying cause, for errors.Is/As and logs.
	Err error
	// RetryAfter, when > 0, says when a retry may succeed.
	RetryAfter time.Duration
	// NoRetry overrides the kind's Retryable to false.
	NoRetry bool
}

// E makes an *Error of kind k with a formatted message. A %w verb wraps
// its argument as the cause, as with fmt.Errorf.
func E(k Kind, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: k, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// C makes an *Error of kind k with a specific wire code.
func C(k Kind, code string, format string, args ...any) *Error {
	e := E(k, format, args...)
	e.Code = code
	return e
}

// Wrap gives err a kind, keeping err's message. A nil err gives nil.
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Msg: err.Error(), Err: err}
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Kind.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is this error's Kind, so that
// errors.Is(err, errs.Conflict) works through any wrapping.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// ErrKind is the error's kind.
func (e *Error) ErrKind() Kind { return e.Kind }

// ErrCode is the error's wire code.
func (e *Error) ErrCode() string {
	if e.Code != "" {
		return e.Code
	}
	return e.Kind.String()
}

// kinded is implemented by every error that carries a kind: *Error and
// the typed errors of other packages that need fields of their own
// (folio.ConflictError, flowdoc.ValidationError, quota.Error…).
type kinded interface {
	error
	ErrKind() Kind
}

// kindNamed is implemented by the errors of packages that sit below this
// one and so cannot name a Kind (flowdoc, the pure document model): they
// give their kind's name, as KindFromName reads it.
type kindNamed interface {
	error
	ErrKindName() string
}

type coded interface {
	error
	ErrCode() string
}

type retryAfter interface {
	error
	ErrRetryAfter() time.Duration
}

// KindOf returns the kind of the first error in err's chain that has
// one; context cancellation is Canceled; anything else is Internal. A nil
// error has kind Internal too; callers check err != nil first.
func KindOf(err error) Kind {
	var k kinded
	if errors.As(err, &k) {
		return k.ErrKind()
	}
	var kn kindNamed
	if errors.As(err, &kn) {
		if k, ok := KindFromName(kn.ErrKindName()); ok {
			return k
		}
		return Internal
	}
	var kk Kind
	if errors.As(err, &kk) {
		return kk
	}
	if isCanceled(err) {
		return Canceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Unavailable
	}
	return Internal
}

// CodeOf returns the wire code of err: the specific code of the first
// error in the chain that has one, else the default code of its kind.
func CodeOf(err error) string {
	var c coded
	if errors.As(err, &c) {
		return c.ErrCode()
	}
	return KindOf(err).String()
}

// RetryAfterOf returns how long to wait before retrying, 0 when unknown.
func RetryAfterOf(err error) time.Duration {
	var r retryAfter
	if errors.As(err, &r) {
		return r.ErrRetryAfter()
	}
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// retryabler is implemented by typed errors that decide retryability
// themselves (a provider error, a quota refusal).
type retryabler interface {
	error
	Retryable() bool
}

// Retryable says whether err may succeed when retried unchanged: the
// first error in the chain that decides (an *Error with NoRetry, or a
// typed error with a Retryable method) decides; otherwise the kind does.
func Retryable(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch x := e.(type) {
		case *Error:
			if x.NoRetry {
				return false
			}
		case retryabler:
			return x.Retryable()
		}
	}
	return KindOf(err).Retryable()
}

// Message is the text to show people for err: its own message for
// classified errors, a fixed text for internal ones (whose details belong
// in the log, not on the wire).
func Message(err error) string {
	if KindOf(err) == Internal {
		return "internal error"
	}
	return err.Error()
}

func isCanceled(err error) bool { return errors.Is(err, context.Canceled) }

// Remote rebuilds an error received from the daemon (HTTP or WebSocket):
// kind is the wire's "kind" member when present, else the kind whose
// default code is code, else Internal. The result has the same kind, code
// and message it had in the daemon, so callers branch on it exactly as in
// direct mode.
func Remote(kind, code, msg string) *Error {
	k, ok := KindFromName(kind)
	if !ok {
		k, _ = KindFromCode(code)
	}
	e := &Error{Kind: k, Msg: msg}
	if code != k.String() {
		e.Code = code
	}
	return e
}
