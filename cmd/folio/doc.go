// Command folio is Folio's single binary: `folio serve` runs the daemon and
// every other verb is the command-line interface to a data directory
// (--data) or to a running daemon (--server).
//
// Every verb that reads or changes history works on a backend: the data
// directory (localBackend) or the daemon's HTTP API (remote), which
// rebuilds the daemon's errors with their kinds, so that both modes print
// the same output and exit with the same codes. Only execute turns errors
// into exit codes (the kind's, package errs) and prints them, one line on
// stderr; notices go to stderr with "note:", progress only to a terminal.
//
// The writing assistant's verbs (assist, run, suggestion, session, preset,
// explain) use the same two backends: direct mode builds the service on the
// data directory and runs the store's task runner only while a verb waits
// for a run; through the daemon they call its API, whose runner runs
// every run. `folio serve` builds the runner, the gateway, the ledger and
// the service, starts the runner before serving and stops it after the
// servers, before the store closes.
package main
