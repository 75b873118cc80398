// Package docs holds Folio's specifications, as Markdown files for people
// (flowdoc.md, protocol.md, api.md, …). It has no code; its tests hold the
// specs against the code — every checked example decodes and behaves as
// written, every stated default equals the code's, every block type, mark
// and operation the code knows is documented — so that a spec that drifts
// fails the build. The annotations the tests read are described in
// internal/specdoc.
package docs
