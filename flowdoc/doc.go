// Package flowdoc is the FlowDocument model: the only body format Folio
// stores. It is pure logic with no I/O: the document and block types,
// validation and sanitizing, canonical encoding and the body fingerprint,
// the structured operations of an edit (Apply), the complex-block guard for
// whole-document candidates, block diffs, and plain-text and Markdown
// rendering and import (docs/markdown.md: each Markdown construct's block;
// import -> render -> import is stable and loses no text silently).
//
// A FlowDocument in JSON:
//
//	{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":"Hello"}]}]}
//
// The format is specified for implementers — every block type, rich text,
// the URL policy, limits, sanitizing, the canonical encodings and the body
// fingerprint byte by byte, offsets, operations, problem paths and rules —
// in docs/flowdoc.md at the repository root. Its examples, defaults and
// rule list are checked against this package by go test ./docs, so a
// change here that the spec does not follow fails there.
//
// # Reading outside input
//
// Parse decodes JSON strictly (unknown fields, wrong JSON types and fields
// given twice are problems with their JSON path; invalid UTF-8 and lone
// surrogate escapes are refused rather than turned into U+FFFD). It is a
// Reader, which transports also use to decode whole requests as they
// stream in: it builds values directly (never a generic tree of the
// input), and counts blocks, runs, list items and table cells against
// DecodeLimits, stopping with a *LimitError at the first one passed, so
// memory follows the limits rather than what the input claims. CheckJSON
// applies the same text rules to JSON of any schema. Normalize then sanitizes (Sanitize: merges
// adjacent runs with equal marks, link and title, drops unknown marks, orders marks
// canonically, removes empty runs and empty values) and validates (Validate:
// every problem, each as "path: rule", e.g.
// "blocks[3].attrs.level: heading level must be 1..6"). Sanitize never
// repairs meaning: an unsafe URL is a validation problem, never silently
// dropped. The URL policy (url.go) allows links to http, https, mailto and
// relative references, a media src to http, https and relative references,
// and the other resource URLs (file, bookmark, embed) to http and https only. Limits bound blocks per document and bytes of
// canonical JSON; MaxDepth and MaxListDepth bound nesting.
//
// # Operations
//
// Apply runs the operations of an edit (Op, see DESIGN.md §5) on a copy of
// a document and returns a sanitized, validated result or an *OpError
// naming the failing operation. replace_document candidates must pass
// GuardComplex: complex blocks (everything but paragraph, heading and
// quote) keep count, ids, order and canonical content. TargetBlocks names
// the top-level blocks an edit touches, for baseline checks.
//
// Invariants kept by every function here:
//   - Block ids are unique in a document (nested blocks included) and match
//     [A-Za-z0-9_-]{1,64}.
//   - Offsets into rich text are Unicode code points over PlainText; an
//     inline equation run counts as exactly one code point (U+FFFC).
//     Offsets are not grapheme clusters: a client must not place them
//     inside a combining sequence, ZWJ sequence or flag unless it means to.
//   - Canonical encodings are deterministic: equal documents give equal
//     bytes on every run and platform, so fingerprints and object ids are
//     stable.
//   - Nothing here modifies its arguments; results share no memory with
//     them.
//
// The test vectors in testdata/flowdoc at the repository root (blocks.json,
// ops.json) are shared with client implementations.
package flowdoc
