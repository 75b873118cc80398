#!/usr/bin/env bash
# Live editing under load, against a separate daemon: for each point
# EDITORS:PER_DOC, RUNS runs of `folio bench sync` (documents of BLOCKS
# blocks, 2 readers per document, every editor saving a one-block change
# every 1.2 s on a fixed schedule, latency from the due time) against a
# fresh `folio serve` of its own, started with the connection caps off and
# a per-connection rate that the load does not reach. Prints each run and
# the median of each figure per point.
#
# With FOLIO_BASE set to another folio binary (a previous build), every run
# of the build under test is followed by the same run against a daemon of
# FOLIO_BASE, side by side on the same machine, and the medians of both are
# printed. The load generator is always FOLIO_BIN's, so that both daemons
# get the same load from the same client.
#
#   bench/sync.sh [RUNS] [POINT...]       # default 3 2000:1 2000:10 1000:50
#   BLOCKS=200 DURATION=10s FOLIO_BIN=bin/folio FOLIO_BASE= bench/sync.sh
#
# The load generator shares the machine with the daemon; its own CPU is
# not the daemon's, which the daemon's CPU per acknowledged save shows.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
shift || true
POINTS=${*:-2000:1 2000:10 1000:50}
BLOCKS=${BLOCKS:-200}
DURATION=${DURATION:-10s}
BIN=${FOLIO_BIN:-bin/folio}
[ -x "$BIN" ] || go build -o "$BIN" ./cmd/folio
BASE=${FOLIO_BASE:-}
work=$(mktemp -d)
daemon=
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
cat >"$work/folio.toml" <<'EOF'
[server]
max_connections = 0
max_connections_per_address = 0
[limits]
messages_per_second = 1000
EOF

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { { tr -d '\n ' <"$1"; echo; } | sed -n 's/.*"'"$2"'":\([-0-9.eE+]*\).*/\1/p'; }

# run DAEMON_BIN N E OUT: one run against a fresh daemon of DAEMON_BIN.
run() {
  local bin=$1 n=$2 e=$3 out=$4 data port
  data=$(mktemp -d "$work/data.XXXX")
  port=$((20000 + RANDOM % 20000))
  "$bin" serve --data "$data" --config "$work/folio.toml" --listen "127.0.0.1:$port" >"$data.out" 2>"$data.log" &
  daemon=$!
  for _ in $(seq 200); do
    [ -f "$data/daemon.addr" ] && grep -q 'folio_' "$data.out" && break
    sleep 0.05
  done
  local token
  token=$(grep -o 'folio_[A-Za-z0-9_]*' "$data.out" | head -1)
  "$BIN" bench sync --server "http://127.0.0.1:$port" --token "$token" --pid "$daemon" \
    --editors "$n" --editors-per-doc "$e" --readers-per-doc 2 --blocks "$BLOCKS" \
    --duration "$DURATION" --format json >"$out" 2>"$data.bench"
  kill -TERM "$daemon"
  wait "$daemon" || true
  daemon=
  rm -rf "$data"
}

line() { # NAME FILE
  printf '%-6s p50 %7.2f ms  p99 %8.2f ms  p99.9 %8.2f ms  acked %6.0f/s of %6.0f/s  %5.1f KiB/conn (Go heap %4.1f, stacks %3.1f, outside Go %4.1f)  server %4.0f us/save\n' "$1" \
    "$(field "$2" ackP50Millis)" "$(field "$2" ackP99Millis)" "$(field "$2" ackP999Millis)" \
    "$(field "$2" ackedPerSecond)" "$(field "$2" offeredPerSecond)" \
    "$(awk -v b="$(field "$2" bytesPerActiveConn)" 'BEGIN {print b/1024}')" \
    "$(awk -v b="$(field "$2" heapBytesPerActiveConn)" 'BEGIN {print b/1024}')" \
    "$(awk -v b="$(field "$2" stackBytesPerActiveConn)" 'BEGIN {print b/1024}')" \
    "$(awk -v b="$(field "$2" nativeBytesPerActiveConn)" 'BEGIN {print b/1024}')" \
    "$(field "$2" serverCpuMicrosPerAck)"
}

medians() { # NAME PREFIX
  local f keys=(ackP50Millis ackP99Millis ackP999Millis ackedPerSecond offeredPerSecond bytesPerActiveConn heapBytesPerActiveConn stackBytesPerActiveConn nativeBytesPerActiveConn serverCpuMicrosPerAck)
  {
    printf '{'
    for k in "${keys[@]}"; do
      printf '"%s":%s,' "$k" "$(for f in "$2".*.json; do field "$f" "$k"; done | median)"
    done
    printf '"runs":%d}\n' "$RUNS"
  } >"$2.median"
  line "$1" "$2.median"
}

echo "folio bench sync against a separate daemon: $BLOCKS-block documents, 2 readers per document, $DURATION per run, $RUNS runs per point"
for p in $POINTS; do
  n=${p%%:*} e=${p##*:}
  echo "== $n editors, $e per document"
  for i in $(seq 1 "$RUNS"); do
    run "$BIN" "$n" "$e" "$work/new.$n.$e.$i.json"
    line "run $i" "$work/new.$n.$e.$i.json"
    if [ -n "$BASE" ]; then
      run "$BASE" "$n" "$e" "$work/base.$n.$e.$i.json"
      line "base $i" "$work/base.$n.$e.$i.json"
    fi
  done
  medians median "$work/new.$n.$e"
  [ -n "$BASE" ] && medians "base" "$work/base.$n.$e"
done
