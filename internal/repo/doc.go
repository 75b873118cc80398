// Package repo is Folio's content service and the only writer of document
// bodies. Bodies change through exactly two commands: SaveDraft (human
// edits and attributes) and CommitChange (structured operations: accepted
// suggestions, restores). Checkpoint seals a draft into history.
//
// Invariants:
//   - Every change is one synced Pebble batch: new content objects, the
//     version and txn objects, the head ref (compare-and-swap), the
//     block-revision index, the log index and the document's stream events
//     move together or not at all.
//   - Changes to one document are serialized by its lock (one per document
//     id, so documents never wait on each other); reads never see a
//     half-written version. Work in proportion to a request's input
//     (checking, sanitizing, validating, encoding, hashing new blocks) is
//     done before the lock and the store's write pass are taken; under
//     them a save costs in proportion to its changes plus one pass over
//     the draft's block list (the fingerprint's, for a save that edits
//     blocks in place), and writes the keys of its changes: a draft is a
//     header and one key per block (draftstore.go), kept decoded in
//     memory between changes, as is the document's record (docCache).
//     A change publishes the events it appended to the stream hub after
//     its commit, under the lock, and takes the stream's head from the
//     hub (stream.Hub), so a save reads nothing from the store that the
//     previous change of the document left in memory.
//   - Every request is checked in one place (check.go) before any work:
//     the request limits (changes per save, blocks, runs: TooMany), the
//     free-text fields (sizes, no control characters) and the checkpoint
//     reasons a client may give (Checkpoint: manual, publish, ai; the
//     server's own go through Seal). HTTP, WebSocket and the CLI reach the
//     same checks and so give the same answer.
//   - A stale baseline is a conflict (ErrConflict / *ConflictError), never
//     a merge; an idempotency key that was seen returns the first result.
//
// Checkpoint policy (checkpoint.go): a draft left unsealed is sealed as an
// "idle" checkpoint CheckpointIdle after the last save that changed it, or
// as "max_duration" CheckpointMax after it became unsealed, on the
// repository's Clock (FakeClock in tests). Every SaveDraft feeds it,
// whatever the transport; transports only report editor boundaries (a
// leave is Seal with reason "leave"; an open is OpenDraft, which seals a
// draft left unsealed by an earlier process as "recovery").
//
// Packages above repo learn of document changes without repo importing
// them:
//   - Subscribe delivers an Event after every committed change — draft
//     saves, every version sealed (create, checkpoint, recovery, accept,
//     restore, import), DeleteDoc, UndeleteDoc, Chown and GC's purge — to
//     any number of subscribers, in commit order, each on its own
//     goroutine. The writer only appends to each subscriber's queue, after
//     its commit: nothing a subscriber does runs under the document lock
//     or can hold up a writer (a subscriber too far behind gets one
//     ChangeOverflow event and reads again). Projections that may lag the
//     store (the search index, caches) subscribe.
//
// Records that must commit atomically with a change use two seams that
// run under the document lock, in the change's batch:
//   - SetHook installs the one ChangeHook (the assistant's suggestion
//     records), called inside every draft save that
//     changed the draft and every version sealed, under the document lock
//     and in the change's batch (with the changed block ids, whether the
//     body fingerprint moved, the sealed version, the suggestion an
//     accept applies and the caller's ChangeParams.Value); its writes and
//     doc-stream events commit with the change, and its error aborts the
//     change. It reads only the store, never waits on anything else.
//   - Locked runs a caller's commit under the document lock with the
//     current head, draft fingerprint and a way to append doc-stream
//     events, so the caller's decision ("is this baseline still current?")
//     cannot race a change.
//
// Keys (under kv.PrefixTable unless noted):
//
//	t/doc/<id>                       document record (owner's user id, created, head)
//	t/draft/<id>                     the draft's header (draftstore.go)
//	t/dblk/<id>\x00<order key>       one block of the draft, in body order
//	t/dtomb/<id>\x00<block>          tombstone: seq of the block's delete
//	t/vlog/<id>\x00<seq8>            log entry of version seq (projection)
//	t/vlabel/<id>\x00<label>         seq of a label
//	t/bidx/<id>\x00<block>\x00<seq8> 0x01: block changed at version seq (its content id is the
//	                                   version's; older stores: the 32-byte id); empty: deleted
//	t/idem/<id>\x00<key>             version id of an idempotency key
//	r/docs/<id>/head                 head version (package refs)
//	t/meta/owner-ids                 set once owners are user ids (MigrateOwners)
//	e/doc:<id>                       version.created, draft.updated, owner.changed events
//	x/<seq8>                         {k: "repo.doc", id: <doc>}: outbox entry of a change (outbox.go),
//	                                   in the batch of every save, version, reindex, chown, delete,
//	                                   undelete and purge; the search index applies and deletes it
//
// Ownership: a document's owner is a user id (package auth), changed only
// by Chown; the authors and actors that versions and transactions record
// are history and never decide access. Document ids are random and
// unguessable (NewDocID) unless the caller chooses one; who may choose is
// the transports' rule.
package repo
