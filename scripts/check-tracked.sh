#!/usr/bin/env bash
# Fails when the repository tracks something that should never be committed:
#   - a file larger than 1 MiB (build output, data dumps, stores);
#   - an executable binary: ELF, Mach-O (thin or universal) or PE (Windows)
#     magic at the start of the file, whatever its mode;
#   - a file with the executable mode whose first two bytes are not "#!"
#     (scripts are fine; anything else executable is a build).
# Run by `make lint` (and so by .ci/run). Reads the checked-out copy of every
# file in the index, so it also catches a staged file before it is committed.
#   scripts/check-tracked.sh [MAX_BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-1048576}

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-tracked: not a git work tree; run it from a clone" >&2
  exit 2
fi

# hex BYTES FILE OFFSET: BYTES bytes of FILE from OFFSET as lowercase hex, no spaces.
hex() { { od -An -v -tx1 -j "$3" -N "$1" -- "$2" 2>/dev/null || true; } | tr -d ' \n'; }

problems=0
report() { echo "$1: $2" >&2; problems=$((problems + 1)); }

# Large files: one find over every tracked regular file (no fork per file).
while IFS= read -r -d '' path; do
  report "${path#./}" "$(wc -c <"$path" | tr -d ' ') bytes, over the $max-byte limit for tracked files (keep large data out of git)"
done < <(git ls-files -z | xargs -0 sh -c '
  n=$#; for f do set -- "$@" "./$f"; done; shift "$n" # ./ so no path reads as an option
  [ $# -eq 0 ] || find "$@" -maxdepth 0 -type f -size +'"$max"'c -print0' sh)

# Executables: the first bytes of each file, read by the shell itself. None of
# the magic numbers below contains a NUL byte (read stops at one).
export LC_ALL=C
elf=$'\x7fELF'
machos=($'\xfe\xed\xfa\xce' $'\xfe\xed\xfa\xcf' $'\xce\xfa\xed\xfe' $'\xcf\xfa\xed\xfe' $'\xca\xfe\xba\xbe')
what=" executable; build output is never committed (remove it and list it in .gitignore)"
while IFS= read -r -d '' entry; do
  mode=${entry%% *}
  path=${entry#*$'\t'}
  # Symlinks (120000) and submodules (160000) have no content of their own here.
  case $mode in 100644 | 100755) ;; *) continue ;; esac
  [ -f "$path" ] || continue # deleted in the work tree, not yet committed

  magic=
  IFS= read -r -n 4 -d '' magic <"$path" || true
  kind=
  if [ "$magic" = "$elf" ]; then
    kind="an ELF"
  elif [[ " ${machos[*]} " == *" $magic "* ]]; then
    kind="a Mach-O"
  elif [ "${magic:0:2}" = MZ ]; then
    # "MZ" alone is a legal start of a text file; a PE file also has
    # "PE\0\0" at the little-endian offset stored at 0x3c.
    b=$(hex 4 "$path" 60)
    if [ ${#b} -eq 8 ]; then
      off=$((16#${b:6:2}${b:4:2}${b:2:2}${b:0:2}))
      [ "$(hex 4 "$path" "$off")" = 50450000 ] && kind="a PE (Windows)"
    fi
  fi
  if [ -n "$kind" ]; then
    report "$path" "$kind$what"
  elif [ "$mode" = 100755 ] && [ "${magic:0:2}" != '#!' ]; then
    report "$path" "has the executable mode but is not a script starting with #! (git update-index --chmod=-x, or remove it)"
  fi
done < <(git ls-files -s -z)

if [ "$problems" -gt 0 ]; then
  echo "check-tracked: $problems problem(s) in tracked files" >&2
  exit 1
fi
