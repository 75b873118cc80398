// Command packs benchmarks Folio packs against git bundles of the same
// history. It builds a synthetic store (documents × versions, written the
// way the repository writes checkpoints), then times pack export, verify
// and import (into a fresh store, full verification, synced).
//
// The git side gets the same history from `folio export git`, in two
// copies: JSON only (what a pack carries: the like-for-like one) and
// Markdown+JSON (what `folio export git` writes). Each is imported with
// `git fast-import` and packed the two ways git users pack, `git gc` and
// `git gc --aggressive`; the size compared is a bundle of everything.
// Times run on the JSON-only copy after `git gc`: `git bundle create
// --all` beside pack export, and a clone from the bundle (index-pack
// hashes every object) with git's default syncing and with
// core.fsync=all beside the verified, synced import. `folio pack verify`
// has no git counterpart (`git bundle verify` reads only the header) and
// is reported on its own. It prints medians of -runs runs and ratios.
//
//	go run ./bench/packs -docs 1000 -versions 50 -runs 3
package main
