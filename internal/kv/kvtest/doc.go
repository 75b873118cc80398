// Package kvtest is the conformance suite of the storage engine contract:
// what every engine behind kv.DB must do, run against each of them (the
// Pebble engine on disk and the in-memory engine today; a PostgreSQL
// engine must pass it too).
//
// The contract it checks: a batch commits atomically (a reader sees all
// of it or none, under real concurrent writers); scans run in byte order
// both ways within their bounds; an indexed batch reads its own writes
// over the committed state; range deletes remove exactly [start, end) and
// apply in order with the batch's other writes; Batch.Lock makes a
// check-then-write (compare-and-swap) safe under racing goroutines, one
// winner per expected value; a synced write survives a close and reopen,
// and (Crash) a crash loses no synced write and tears no batch.
//
// An engine's test calls Run with an Opener; Crash takes a function that
// opens a store on a given filesystem.
package kvtest
