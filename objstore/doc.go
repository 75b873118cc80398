// Package objstore holds Folio's immutable, content-addressed objects in
// Pebble: block contents, versions and edit transactions.
//
// Identity: an object's id is SHA-256("folio/<kind>\x00" + canonical
// msgpack). Ids never depend on how an object is stored.
//
// Storage: key "o/" + 32-byte id; value is one codec byte followed by the
// payload. The codecs are documented in docs/objects.md; a reader must
// handle every codec, a writer picks the smallest that is allowed.
//
// Invariants: objects are never modified; Put only adds to a caller's
// batch, so an object becomes visible together with whatever references
// it; Get returns exactly the canonical bytes whose hash is the id (Verify
// and fsck check that).
package objstore
