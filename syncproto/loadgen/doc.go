// Package loadgen is the sync load generator behind `folio bench sync`:
// editors that each open a document and save a one-block change every
// Interval (1.2 s, an editor's autosave rhythm), plus readers that follow
// each document, against a running sync server. It reports acknowledged
// saves per second, ack latency percentiles (measured by the client, from
// send to draft.ack) and the resident memory each idle connection costs.
//
// Wire it as a CLI verb with Run and print the Report; when the daemon
// runs in another process, pass Options.Memory = ProcessRSS(pid) so that
// the memory figure is the server's alone.
package loadgen
