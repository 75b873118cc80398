// Package web holds Folio's browser editor, built and embedded.
//
// The editor's source is web/src (plain JavaScript modules over Tiptap v3;
// no framework), built by web/build.mjs with esbuild into web/dist:
// index.html, app.js, app.css and LICENSES (the bundled npm packages and
// their licences). The built files are committed and embedded here (an
// embed directive), so `go build` and `make run` need no Node on a fresh
// machine; internal/server serves them (routes, caching and the
// Content-Security-Policy are in internal/server/webapp.go).
//
// Why the bundle is committed: the binary must be buildable from the Go
// module alone (go install, make run, a release build) without a
// JavaScript toolchain or network access to the npm registry. The cost of
// committing generated files is that they can drift from their source, so
// the build is byte-reproducible (pinned exact versions in
// package-lock.json, esbuild's output has no timestamps or absolute
// paths, build.mjs sorts what it lists) and CI runs `npm ci && node
// build.mjs` in web/ and fails when `git diff --exit-code web/dist`
// shows a difference: a change to web/src lands with its rebuilt bundle,
// or CI says so.
//
// Invariants: every file of dist stays under 1 MiB
// (scripts/check-tracked.sh); index.html references app.js and app.css
// with a ?v=<content hash> query (Version) so that they may be cached as
// immutable; nothing in dist is inline script or style, so the strict CSP
// holds.
package web
