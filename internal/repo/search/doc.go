// Package search is the full-text search over an author's own documents:
// the title, body text and tags of each document's current draft and its
// head version, analyzed with the CJK-aware analyzer of the persona
// memory index (persona/index.AddCJKAnalyzer), so a Chinese query finds
// Chinese text.
//
// Invariants:
//   - The index is a projection, never a source of truth: Rebuild makes
//     it from the repository alone, and Sync reconciles it with what the
//     repository holds (re-indexes the documents whose owner, head or
//     draft moved, drops the deleted and the gone), whatever transport
//     made the change. Two indexes built from the same repository answer
//     a query the same way.
//   - A query names its owner and returns only that owner's documents;
//     a soft-deleted document is never indexed, so never returned.
//   - The index lives in memory (bleve's in-memory index); the repository
//     is read, never written.
package search
