// Package search is the full-text search over an author's own documents
// (the title, body text and tags of each document's current draft and
// its head version) and, for visitors, over the published public
// articles (their published version). Text is analyzed with the
// CJK-aware analyzer of the persona memory index
// (persona/index.AddCJKAnalyzer), so a Chinese query finds Chinese text.
//
// Invariants:
//   - The index is a projection, never a source of truth, fed by the
//     repository's outbox: every change of a document (save, sealed
//     version, reindex or import, chown, delete, undelete, purge;
//     publish, unpublish, visibility) writes a repo.OutboxDoc entry in
//     its own batch. The applier (Drain: at Open, in the background
//     Settle after a repo.OutboxStream notification, so that the saves
//     of a typing editor are indexed once per Settle, and every Poll
//     for entries nobody announced) reconciles each
//     named document with what the repository holds now and deletes the
//     entries only after the index has the change (scorch's safe
//     batches: persisted). A crash between the commit and the index
//     update leaves the entry, and the next Open applies it. Rebuild
//     makes the index from the repository alone; two indexes of one
//     repository answer a query the same way.
//   - A query lists no documents: it applies first only the entries this
//     process announced and has not applied yet (at most a Settle of
//     them), so it
//     sees every change acknowledged before it began.
//   - A query names its owner and returns only that owner's documents; a
//     soft-deleted document is dropped, so never returned.
//   - The public part is a separate index holding only what visitors may
//     read (Public.PublicDoc): nothing private, password-protected,
//     unpublished or deleted is in it, so neither hits nor their order
//     nor their snippets depend on hidden articles.
//   - On disk the index lives in Options.Dir (<data>/search: CURRENT and
//     gen-NNNNNN/{own,pub}, docs/objects.md §9), rebuilt when missing,
//     unreadable or of another MappingVersion; with no Dir it is in
//     memory, built at Open.
package search
