#!/usr/bin/env bash
# Folio vs git on the same history: N checkpoints of a B-block document
# (1-3 blocks changed each time). Folio makes each checkpoint durable (a
# synced draft save and a synced checkpoint); git imports the same history
# as JSON files through `git fast-import` and is then packed with `git gc`.
# Prints wall times and on-disk sizes, and their ratios, as the median of
# RUNS runs.
#
#   bench/git_vs_folio.sh [N] [B] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
B=${2:-200}
RUNS=${3:-3}
BIN=${FOLIO_BIN:-bin/folio}
[ -x "$BIN" ] || go build -o "$BIN" ./cmd/folio
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for i in $(seq 1 "$RUNS"); do
  "$BIN" bench history --checkpoints "$N" --blocks "$B" --git-stream "$work/stream.fi" --format json > "$work/folio.$i.json"
  rm -rf "$work/git" && git init -q --bare "$work/git"
  start=$(date +%s.%N)
  git -C "$work/git" fast-import --quiet < "$work/stream.fi"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {print b - a}' > "$work/git.$i.time"
  git -C "$work/git" gc --quiet --aggressive --prune=now
  du -sb "$work/git/objects" | cut -f1 > "$work/git.$i.size"
done

folio_time=$(for i in $(seq 1 "$RUNS"); do python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wallSeconds"])' "$work/folio.$i.json"; done | median)
folio_size=$(for i in $(seq 1 "$RUNS"); do python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["storeBytes"])' "$work/folio.$i.json"; done | median)
git_time=$(cat "$work"/git.*.time | median)
git_size=$(cat "$work"/git.*.size | median)

printf 'history: %d checkpoints of a %d-block document, median of %d runs\n' "$N" "$B" "$RUNS"
awk -v ft="$folio_time" -v fs="$folio_size" -v gt="$git_time" -v gs="$git_size" -v n="$N" 'BEGIN {
  printf "folio  checkpoints (durable): %8.3f s   store: %10d bytes (%6.0f B/checkpoint)\n", ft, fs, fs / n
  printf "git    fast-import:           %8.3f s   packed objects after gc: %10d bytes (%6.0f B/commit)\n", gt, gs, gs / n
  printf "ratio folio/git: time %.2f, size %.2f\n", ft / gt, fs / gs
}'
