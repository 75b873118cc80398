#!/bin/sh
# Pack benchmark: folio pack export / verify / import against git bundles
# of the same history, JSON-only (like for like) and Markdown+JSON (what
# `folio export git` writes), each after `git gc` and `git gc --aggressive`;
# import against a clone from the bundle with git's default syncing and
# with core.fsync=all. See bench/packs/doc.go. Prints medians and ratios.
#
#   bench/packs.sh                      # small default: 200 docs x 20 versions, 3 runs
#   bench/packs.sh -docs 1000 -versions 50 -runs 3   # the figures in docs/packs.md
#
# Then the Go micro-benchmarks (small store; FOLIO_BENCH_DOCS / FOLIO_BENCH_VERSIONS resize it).
set -eu
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "bench/packs.sh: git is needed for the comparison" >&2; exit 1; }
go run ./bench/packs "$@"
echo
go test -run '^$' -bench . -benchtime 5x -count 1 ./objstore/pack/ | grep -E '^(Benchmark|ok)'
