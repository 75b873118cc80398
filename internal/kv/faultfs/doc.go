// Package faultfs wraps a Pebble filesystem (vfs.FS) so that tests can make
// chosen operations fail, or hang, the way a failing or full disk does.
//
// It is the fault seam of the storage tests. Pebble's own vfs/errorfs
// does not reach SyncData and SyncTo, which the write-ahead log uses for
// its syncs, nor can it report a chosen amount of free space; this wrapper
// does both. Nothing outside tests imports it.
//
// A Rule sees every operation that changes the disk (see Op) with the path
// it touches and returns the error to inject, or nil to let it through. A
// Rule may block to simulate a stalled disk. Rules and the reported free
// space can be changed while the filesystem is in use.
package faultfs
