#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each.
#   scripts/fuzz.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
d=${1:-10s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for t in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sed 's/(.*//'); do
    echo "== $pkg $t"
    # Minimizing each new input for up to a minute (the default) would use
    # a short run's whole time on the decoders' large seeds.
    go test "$pkg" -run '^$' -fuzz "^$t\$" -fuzztime "$d" -fuzzminimizetime 100x
  done
done
