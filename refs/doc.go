// Package refs holds Folio's named pointers ("docs/<id>/head") to objects.
//
// Refs move only through Update: a compare-and-swap over one or more refs
// that commits the caller's batch (objects, indexes, the ref values and
// reflog entries) as one synced Pebble batch. Either every ref in an update
// moves and everything in the batch becomes durable, or nothing does.
// Concurrent updates of the same ref are serialized by a striped lock held
// from the compare to the commit, so of several writers starting from the
// same value exactly one wins and the others get ErrConflict. This holds
// within one process, which is all there is: the data directory is locked
// to one process (see internal/kv).
//
// Every move appends a reflog entry (old, new, time, message) so that a ref
// can be traced and gc can keep recently referenced objects; the layout is
// in docs/objects.md.
package refs
