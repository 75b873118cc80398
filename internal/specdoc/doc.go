// Package specdoc reads the machine-checkable parts of a Markdown
// specification in docs/: its fenced code blocks (examples), its pipe
// tables and its headings, each with the line it starts on, so that a test
// can hold every example and every stated default against the code and the
// docs fail the build when they drift.
//
// A spec marks what a test must check with an annotation, an HTML comment
// (invisible when the Markdown is rendered) on the line directly before a
// fenced block or a table:
//
//	<!-- check: invalid maxBlocks=3 -->
//	```json
//	{"blocks":[…]}
//	```
//
// The first word is the kind; the rest are key=value arguments (a value
// with spaces is double-quoted). What a kind means is up to the test that
// reads the spec; this package only finds and parses. Parse refuses an
// annotation that is not directly followed by a fence or a table, an
// unclosed fence and a malformed table, so a typo cannot make an example
// silently unchecked. A test should also fail on kinds it does not know and,
// when it means to check every example, on unannotated fences of the
// languages it checks (Doc.Unannotated).
//
// The package is for tests: Load takes a testing.TB.
package specdoc
