// Package index is the memory search index: one bleve scorch index in a
// directory beside the Pebble store (<data>/index), shared by every user
// and persona, holding a projection of the persona memory snapshots.
//
// Layout: <data>/index/CURRENT names the current generation directory
// (gen-000001, gen-000002, …); the generation holds a scorch index whose
// internal key "folio:mapping" records MappingVersion. Open opens the
// current generation and rebuilds into the next one when CURRENT or the
// generation is missing, the index cannot be opened (corrupt) or its
// mapping version is older; Rebuild does the same on demand (`folio
// index rebuild`): it reads the store through a Pebble snapshot into a
// new directory, replaces CURRENT durably (temp file, sync, rename, sync
// the directory), swaps the open index and removes the old directory.
// Leftover generation directories (a rebuild that crashed) are removed.
//
// Consistency: the index is a projection. A writer of memory snapshots
// adds an outbox entry (Enqueue: x/<seq> -> {k: "persona.memory", id:
// <snapshot>}) in the same Pebble batch as the snapshot's records. The
// applier (Drain, run in the background and at Open) reads the entries,
// reconciles the index with the stored state of each named snapshot —
// index its items when it exists, delete its documents when it does not
// — and deletes an entry only after the index batch that applied it
// returned, which with scorch's safe batches (unsafe_batch is never set)
// means after the segment is persisted. A crash anywhere leaves the entry
// behind and the next Open applies it again; entries are idempotent and
// independent of order, so the index converges on the store. A rebuild
// holds the applier off, so no entry is consumed while it reads.
//
// Analysis: the text field uses a CJK-aware analyzer (unicode tokenizer,
// CJK width folding, lowercase, then CJK bigrams with unigrams kept), so
// "北京大学" is found by 北京, 大学 and by the single character 京; the
// filter fields (user, persona, snapshot, status, soledoc) are exact
// keywords. Search is one conjunction of the exact filter terms with the
// text match — never a post-filter — re-ranked and budgeted (see
// Search).
package index
