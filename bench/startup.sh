#!/usr/bin/env bash
# Start-up time of the CLI against git on the same machine: `folio
# --version`, `folio log` on a small store (one document, 3 versions) and
# `git log` on a small repository (3 commits), each run RUNS times in a
# row; the figure is the median wall time of one run, in milliseconds. It
# also sums the package initialisation GODEBUG=inittrace=1 reports for
# `folio --version` (median of the runs): what every verb pays before main.
#
#   bench/startup.sh [RUNS]      # default 30
#
# Take the figures on an idle machine: on a loaded one every process start
# is slower, git's too, and the ratio is what to read.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-30}
BIN=${FOLIO_BIN:-bin/folio}
[ -x "$BIN" ] || go build -o "$BIN" ./cmd/folio
command -v git >/dev/null || { echo "bench/startup.sh: git is needed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export FOLIO_DATA="$work/data" FOLIO_USER=bench FOLIO_SERVER= FOLIO_CONFIG=
"$BIN" init >/dev/null
printf '# Notes\n\nOne.\n' >"$work/a.md"
"$BIN" doc new --id notes --from "$work/a.md" >/dev/null 2>&1
for t in two three; do
  printf '# Notes\n\nOne.\n\n%s.\n' "$t" >"$work/a.md"
  "$BIN" doc save notes --from "$work/a.md" --checkpoint -m "$t" >/dev/null
done
git init -q "$work/git"
for t in one two three; do
  echo "$t" >>"$work/git/notes.md"
  git -C "$work/git" add notes.md
  git -C "$work/git" -c user.name=bench -c user.email=bench@example.com commit -qm "$t"
done

# median_ms CMD…: the median wall time of RUNS runs of CMD, in ms.
median_ms() {
  local times=()
  for _ in $(seq "$RUNS"); do
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    times+=($(((e - s) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

inits=()
for _ in $(seq "$RUNS"); do
  inits+=($(GODEBUG=inittrace=1 "$BIN" --version 2>&1 >/dev/null | awk '/^init / {s += $5} END {printf "%d", s * 1000}'))
done
init_ms=$(printf '%s\n' "${inits[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}')

version=$(median_ms "$BIN" --version)
log=$(median_ms "$BIN" log notes)
gitlog=$(median_ms git -C "$work/git" log)
echo "runs: $RUNS (median wall time of one run)"
echo "folio --version: $version ms (package initialisation $init_ms ms)"
echo "folio log:       $log ms"
echo "git log:         $gitlog ms"
awk -v v="$version" -v l="$log" -v g="$gitlog" 'BEGIN {printf "ratios to git log: --version %.1fx, log %.1fx\n", v / g, l / g}'
