// Package objstore holds Folio's immutable, content-addressed objects in
// Pebble: block contents, versions and edit transactions.
//
// Identity: an object's id is SHA-256("folio/<kind>\x00" + canonical
// msgpack). Ids never depend on how an object is stored.
//
// Storage: key "o/" + 32-byte id; value is one codec byte, the kind byte
// and the payload. Codecs: raw, zstd, a version as a delta against its
// first parent (a whole version every DeltaInterval versions along a chain,
// so reads apply a bounded number of deltas), and a transaction by
// reference to the version that sealed it. docs/objects.md specifies them
// byte by byte; a reader handles every codec, a writer picks the smallest
// allowed one.
//
// Invariants: objects are never modified; Put only adds to a caller's
// batch, so an object becomes visible together with whatever references
// it; Get returns exactly the canonical bytes whose hash is the id (objects
// rebuilt from a delta or a reference are checked on every read, whole ones
// by Verify); an object's stored form depends only on objects it references
// (its first parent, its sealing version), so keeping everything reachable
// keeps everything readable, and Delete refuses to break that.
//
// Decoding is bounded: objects arrive from packs and backups and may be
// damaged on disk, so every decoder here (DecodeContent, DecodeVersion,
// DecodeTxn, DecodeStored, the delta and compact-transaction codecs)
// checks each declared length against the bytes that remain before it
// allocates (package bounded, through kv.Unmarshal), and nothing rebuilds
// more than MaxObject bytes. A value that breaks a rule is ErrCorrupt.
//
// Traversal: Walk and Reachable visit what a set of roots reaches (minus
// what a stop set reaches) in reference order, for packs; ForEach lists
// every stored object, for fsck and gc; IsAncestor follows parents.
package objstore
