// Package client is a Go client of the Folio sync protocol
// (docs/protocol.md): it dials /v1/sync with a token and a subprotocol,
// matches replies to requests by id, delivers stream events in order to a
// callback and keeps the last cursor of every stream so that a dropped
// connection can resume (Subscribe with the cursor) without gaps or
// duplicates. The CLI, the tests and the load generator use it.
//
// Editor is an editor's copy of one document kept by the client
// algorithm of docs/protocol.md: a server copy, at most one save in flight
// with an idempotency key, pending local changes resolved against other
// editors' updates, and the resend after a reconnect. Following it, an
// editor loses no acknowledged change (TestModelEditors in syncproto).
package client
