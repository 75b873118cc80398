// Command gitcommits replays a `folio bench history --git-stream` history
// as real git commits: for each checkpoint it writes the document's file
// and runs one `git commit -a`, in a new repository configured with
// core.fsync=all, so that every commit is on disk before the next one
// starts, as every Folio checkpoint is. It is the fair anchor beside
// `git fast-import`, which writes one pack without syncing it.
//
// Automatic gc is off (gc.auto=0) so that the time is the commits' own;
// bench/git_vs_folio.sh measures gc separately. It prints
// {"commits":N,"wallSeconds":S} as JSON.
//
//	go run ./bench/gitcommits -stream history.fi -repo DIR
package main
