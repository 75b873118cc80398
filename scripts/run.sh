#!/usr/bin/env bash
# `make run`: start the Folio daemon on the embedded default: a local data
# directory (./folio-data), the offline model provider, 127.0.0.1:7420.
# The first run creates the store and the admin user "admin" and prints its
# token once; only a hash of it is stored.
set -euo pipefail
BIN=${1:-bin/folio}
DATA=${2:-./folio-data}
LISTEN=${FOLIO_LISTEN:-127.0.0.1:7420}
export FOLIO_DATA="$DATA"
[ -f "$DATA/FOLIO" ] || "$BIN" --data "$DATA" init >/dev/null
cat <<MSG
== folio daemon on $DATA (Ctrl-C stops it gracefully)
   The editor: http://$LISTEN/  (sign in at /signin with the admin token)
   First run: the admin token is printed below, once; only its hash is stored.
   More users:  $BIN user add NAME [--admin]   (with FOLIO_SERVER and an admin's FOLIO_TOKEN)
   Lost token:  stop the daemon, then  $BIN --data $DATA token add admin
MSG
exec "$BIN" serve --data "$DATA" --listen "$LISTEN"
