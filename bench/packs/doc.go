// Command packs benchmarks Folio packs against git bundles on the same
// history: it builds a synthetic store (documents × versions, written the
// way the repository writes checkpoints), then times pack export, verify
// and import (into a fresh store, full verification, synced), and the git
// side: `folio export git` into `git fast-import`, `git bundle create
// --all` and `git bundle verify`. It prints medians and ratios.
//
//	go run ./bench/packs -docs 1000 -versions 50 -runs 3
package main
