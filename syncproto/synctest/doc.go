// Package synctest runs the sync server for tests and the load
// generator: a real repository (internal/repo) in a data directory, with
// in-memory implementations of the interfaces the auth service will
// provide (Authenticator, Access), keeping the same contracts: unknown or
// revoked tokens fail with syncproto.ErrUnauthenticated; a document of
// another user is not accessible, like a missing one.
package synctest
