#!/usr/bin/env bash
# Folio vs git on the same history: N checkpoints of a B-block document,
# each changing 1-3 blocks. Every comparison has its fair anchor beside the
# flattering one:
#
#   time   Folio, each checkpoint synced before the next, fed
#            (a) the changed blocks, as an editor sends them, and
#            (b) the whole document, as git gets it;
#          git, fed the whole document (docs/bench.json) per checkpoint:
#            (c) one `git commit -a` per checkpoint with core.fsync=all
#                (synced, like Folio: the fair anchor), and
#            (d) `git fast-import` of the whole history in one process,
#                not synced (the flattering one).
#   size   Folio's data directory after a full compaction, against the
#          git repository (objects/) after plain `git gc` and after
#          `git gc --aggressive`.
#
# Every figure is the median of RUNS runs; ratios are folio / git (below 1:
# Folio is faster or smaller).
#
#   bench/git_vs_folio.sh [N] [B] [RUNS]      # default 1000 200 3
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
B=${2:-200}
RUNS=${3:-3}
BIN=${FOLIO_BIN:-bin/folio}
[ -x "$BIN" ] || go build -o "$BIN" ./cmd/folio
command -v git >/dev/null || { echo "bench/git_vs_folio.sh: git is needed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gitcommits" ./bench/gitcommits
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" # no user or system git config

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# field FILE KEY: a number from a one-line JSON object.
field() { sed -n 's/.*"'"$2"'":\([-0-9.eE+]*\).*/\1/p' "$1"; }
now() { date +%s.%N; }

for i in $(seq 1 "$RUNS"); do
  "$BIN" bench history --checkpoints "$N" --blocks "$B" --input changes --git-stream "$work/stream.fi" --format json >"$work/changes.$i.json"
  "$BIN" bench history --checkpoints "$N" --blocks "$B" --input document --format json >"$work/document.$i.json"

  rm -rf "$work/commits"
  "$work/gitcommits" -stream "$work/stream.fi" -repo "$work/commits" >"$work/commits.$i.json"

  rm -rf "$work/fi" && git init -q --bare "$work/fi"
  start=$(now)
  git -C "$work/fi" fast-import --quiet <"$work/stream.fi"
  awk -v a="$start" -v b="$(now)" 'BEGIN {print b - a}' >"$work/fastimport.$i.time"

  git -C "$work/fi" gc --quiet --prune=now
  du -sb "$work/fi/objects" | cut -f1 >"$work/gc.$i.size"
  git -C "$work/fi" gc --quiet --aggressive --prune=now
  du -sb "$work/fi/objects" | cut -f1 >"$work/aggressive.$i.size"
done

# jsonmedian KEY NAME: the median of KEY over the runs' NAME.*.json.
jsonmedian() { for i in $(seq 1 "$RUNS"); do field "$work/$2.$i.json" "$1"; done | median; }
changes_t=$(jsonmedian wallSeconds changes)
document_t=$(jsonmedian wallSeconds document)
commits_t=$(jsonmedian wallSeconds commits)
folio_size=$(jsonmedian storeBytes changes)
fastimport_t=$(cat "$work"/fastimport.*.time | median)
gc_size=$(cat "$work"/gc.*.size | median)
aggressive_size=$(cat "$work"/aggressive.*.size | median)
doc_bytes=$(wc -c <"$work/commits/docs/bench.json")

printf 'history: %d checkpoints of a %d-block document (%d bytes of JSON), 1-3 blocks changed each; median of %d runs\n\n' "$N" "$B" "$doc_bytes" "$RUNS"
awk -v n="$N" -v ct="$changes_t" -v dt="$document_t" -v gt="$commits_t" -v ft="$fastimport_t" \
  -v fs="$folio_size" -v gs="$gc_size" -v as="$aggressive_size" 'BEGIN {
  t = "  %-56s %9.3f s %10.3f ms\n"; z = "  %-56s %9d B %10.0f B\n"; r = "  %-64s %7.3f\n"
  printf "%-58s %11s %13s\n", "time", "total", "per checkpoint"
  printf t, "folio, changed blocks in (editor protocol), synced", ct, 1000 * ct / n
  printf t, "folio, whole document in (as git gets it), synced", dt, 1000 * dt / n
  printf t, "git commit -a per checkpoint, core.fsync=all, synced", gt, 1000 * gt / n
  printf t, "git fast-import of the whole history, not synced", ft, 1000 * ft / n
  printf "size\n"
  printf z, "folio data directory, fully compacted", fs, fs / n
  printf z, "git objects after git gc", gs, gs / n
  printf z, "git objects after git gc --aggressive", as, as / n
  printf "ratios folio / git (below 1: folio is faster or smaller)\n"
  printf r, "time, both synced: folio (changed blocks) / git commit", ct / gt
  printf r, "time, both synced: folio (whole document) / git commit", dt / gt
  printf r, "time: folio (changed blocks, synced) / fast-import (not synced)", ct / ft
  printf r, "time: folio (whole document, synced) / fast-import (not synced)", dt / ft
  printf r, "size: folio / git gc", fs / gs
  printf r, "size: folio / git gc --aggressive", fs / as
}'
