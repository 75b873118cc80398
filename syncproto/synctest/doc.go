// Package synctest holds in-memory implementations of the interfaces the
// sync server consumes (Docs, Authenticator, Access) and a test server
// built on them. They keep the same contracts as the real repository
// and auth service, so that protocol tests and the load generator can
// run without a data directory. The event streams are real: a Pebble
// store in memory written with package internal/stream.
package synctest
