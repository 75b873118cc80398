#!/usr/bin/env bash
# `make run`: start Folio on the embedded default (a local data directory,
# the offline model provider). Until `folio serve` exists this runs a short
# scripted tour of the CLI instead.
set -euo pipefail
BIN=${1:-bin/folio}
DATA=${2:-./folio-data}
export FOLIO_DATA="$DATA"
[ -d "$DATA" ] || "$BIN" init
if "$BIN" serve --help >/dev/null 2>&1; then
  exec "$BIN" serve --data "$DATA"
fi
echo "== a short tour of the folio CLI on $DATA"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/a.md" <<'MD'
# A walk in the park

We walked in the park today. The light was soft.

- notes
- letters
MD
id=$("$BIN" doc new --title "A walk in the park" --from "$tmp/a.md")
echo "created document $id"
sed 's/today/this morning/' "$tmp/a.md" > "$tmp/b.md"
"$BIN" doc save "$id" --from "$tmp/b.md" --checkpoint -m "morning, not today"
"$BIN" log "$id"
"$BIN" diff "$id" v1.r0 v1.r1
"$BIN" restore "$id" v1.r0
"$BIN" show "$id" --format md
"$BIN" fsck
