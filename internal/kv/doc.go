// Package kv owns Folio's Pebble keyspace and the canonical msgpack codec.
//
// One Pebble database per data directory holds everything. Keys start with
// a one-letter prefix that says which part of Folio owns them:
//
//	o/<32-byte object id>              immutable objects (package objstore)
//	r/<ref name>                       refs: named pointers (package refs)
//	l/<ref name>\x00<8-byte seq>       reflog entries (package refs)
//	e/<stream>\x00<8-byte seq>         persisted event streams
//	t/<table>/<key>                    tables of mutable records
//	x/<8-byte seq>                     outbox for the search index
//
// Invariants: a multi-key change is one Pebble batch; a change that must
// survive a crash is committed with Sync before it is acknowledged (the
// tests kill a writer with SIGKILL and find every acknowledged batch). Only
// one process opens a data directory at a time (Pebble's file lock); Open
// reports ErrLocked when another process holds it and ErrNotInitialized
// when the directory has no store (`folio init` makes one).
//
// Storage: Pebble blocks are zstd-compressed at every level. CompactAll
// rewrites the whole keyspace (for maintenance and for measuring size the
// way `git gc` does); DiskUsage reports the live files' bytes. The byte
// layout of every prefix is in docs/objects.md.
//
// The canonical codec (Marshal) encodes structs in field declaration order,
// maps with sorted keys and integers in their most compact form, so equal
// values always give equal bytes; object ids are hashes of these bytes.
// Unmarshal is bounded (package bounded): whatever Pebble returns may be
// damaged, so every declared length is checked against the bytes that
// remain before anything is allocated, and records are never decoded into
// interface values.
package kv
