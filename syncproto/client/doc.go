// Package client is a Go client of the Folio sync protocol
// (docs/protocol.md): it dials /v1/sync with a token and a subprotocol,
// matches replies to requests by id, delivers stream events in order to a
// callback and keeps the last cursor of every stream so that a dropped
// connection can resume (Subscribe with the cursor) without gaps or
// duplicates. The CLI, the tests and the load generator use it.
package client
