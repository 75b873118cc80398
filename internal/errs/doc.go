// Package errs is Folio's one taxonomy of errors (DESIGN.md §11).
//
// Every error a user can see has a Kind — not found, conflict, invalid,
// unauthenticated, forbidden, too large, rate limited, unavailable,
// disabled, storage full, storage failed, corrupt, canceled, internal —
// set where the error is made, never guessed from its text later. The
// HTTP status, the wire code (HTTP and WebSocket alike) and the CLI exit
// code are derived from one table keyed by kind, so the three cannot
// disagree. Retryable is a property of the kind, which an error may
// narrow (NoRetry) and refine (RetryAfter).
//
// Errors that need fields of their own (a conflict's blocks, a validation
// error's problems, a quota refusal's category) stay typed errors in
// their packages and implement ErrKind() Kind (and ErrCode() string when
// they have a specific code); everything else is an *Error made with E or
// C. A specific code (e.g. "personalization_conflict") is stable and
// append-only and names a case clients branch on; its kind decides the
// status and exit code.
//
// A Kind is an error value: errors.Is(err, errs.NotFound) is true for any
// error whose chain carries that kind, so packages keep their sentinels as
// kinds-with-a-message and callers test kinds, never strings.
//
// Messages are written for people where the error is made ("checkpoint
// reason \"idle\" is set by the server; send manual"), so no layer edits
// error strings to present them. Internal errors are the exception: their
// text goes to the log and the wire says only "internal error" (Message).
//
// Remote rebuilds a daemon's error in a client with the same kind, code and
// message, so the CLI behaves identically in direct and daemon mode.
package errs
