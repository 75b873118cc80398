// Command folio is Folio's single binary: `folio serve` runs the daemon and
// every other verb is the command-line interface to a data directory
// (--data) or to a running daemon (--server).
package main
