// Package source is the text a persona learns from: a pinned, immutable
// version of a published article reduced to its blocks' plain text, with
// the sentence and span arithmetic every persona component shares.
//
// Positions are Unicode code points into one block's plain text (the same
// unit as flowdoc's operation offsets), so evidence reads the same in
// every client. A Pin names exactly one immutable version: the document
// id, the version's object id and label, and the body fingerprint; the
// persona components never read a document's current state, only pins,
// which is what makes a persona version reproducible.
//
// Evidence points at a span of one block of one pinned version and
// carries a fingerprint of the span's text (EvidenceFingerprint), so an
// auditor can check that the span still says what the claim was built
// from without trusting the claim.
//
// The package is pure: no I/O, no storage, no clock.
package source
