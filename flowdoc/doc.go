// Package flowdoc is the FlowDocument model: the only body format Folio
// stores. It is pure logic with no I/O: the document and block types,
// validation and sanitizing, canonical encoding and the body fingerprint,
// the structured operations of an edit (Apply), the complex-block guard for
// whole-document candidates, block diffs, and plain-text and Markdown
// rendering and import.
//
// A FlowDocument in JSON:
//
//	{"schemaVersion":1,"blocks":[{"id":"p1","type":"paragraph","richText":[{"text":"Hello"}]}]}
//
// Invariants kept by every function here:
//   - Block ids are unique in a document (nested blocks included) and match
//     [A-Za-z0-9_-]{1,64}.
//   - Offsets into rich text are Unicode code points; an inline equation run
//     counts as exactly one code point (U+FFFC).
//   - Canonical encodings are deterministic: equal documents give equal
//     bytes on every run and platform, so fingerprints and object ids are
//     stable.
package flowdoc
