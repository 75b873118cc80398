// Package merge is the three-way merge of a text block's rich text that
// live sync uses when two editors change the same block from the same
// base: Runs(base, ours, theirs) is the merged rich text, or a *Conflict
// when the two edits overlap.
//
// The function is specified in docs/protocol.md ("Merging inside a
// block") so that every client computes exactly the same result; the
// shared vectors in testdata/protocol/merge.json at the repository root
// are read by this package's tests and by the web editor's.
//
// In short: rich text is a sequence of characters, one per code point
// (an inline equation is one character, U+FFFC), each carrying its marks
// and link. Each side is diffed against the base into hunks (a base
// range replaced by new characters) by a specified longest-common-
// subsequence walk, each pure insertion or deletion slid to its
// leftmost equivalent place; hunks of the two sides that cannot overlap
// wherever repeated text lets them sit are applied together, identical
// hunks once; insertions at the same point keep ours before theirs.
// Anything else is a conflict. The result is a
// plain FlowDocument value: nothing of the merge is stored.
package merge
