// Command publicread measures the public read API and the reading
// assistant against a separate daemon: it builds a store of published
// articles with the folio binary, starts `folio serve` as a child process,
// and drives it over loopback HTTP with keep-alive clients.
//
// It reports, for GET /v1/public/articles/{slug}/html:
//
//   - uncached: the first request for each article after the daemon
//     started (the version is read and materialized, then rendered);
//   - cached: requests over the same articles once rendered (the
//     publication check still runs: slug ref, version, records);
//   - revalidated: requests with If-None-Match answered 304;
//
// each as p50/p99 latency and requests/s at the given concurrency; and,
// for POST /v1/public/articles/{slug}/explain on the local provider, the
// latency of a first explanation (model call: the extractive engine) and
// of a cached one.
//
//	go run ./bench/publicread -folio bin/folio -articles 200 -duration 10s
//
// The machine it runs on is what it measures: on a shared machine, run it
// twice and read the figures as orders of magnitude.
package main
