#!/usr/bin/env bash
# Run every fuzz target in the module for a given time each.
#
#   scripts/fuzz.sh            # 30s per target
#   scripts/fuzz.sh 10m        # 10 minutes per target (the nightly job)
#   scripts/fuzz.sh 5s Sim     # only targets whose name contains "Sim"
#
# Targets are found by name (func FuzzXxx in *_test.go), so new ones join
# without editing this script. A failing target leaves its crasher under the
# package's testdata/fuzz/ directory; the script runs every target and exits
# non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${1:-30s}"
filter="${2:-}"
failed=()

mapfile -t targets < <(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . \
  | grep -v '/vendor/' | sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)#\1 \2#' | sort -u)

if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi

for t in "${targets[@]}"; do
  pkg="./${t% *}"
  name="${t#* }"
  if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then
    continue
  fi
  echo "=== $name ($pkg) for $fuzztime"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg"; then
    failed+=("$pkg $name")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz.sh: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz.sh: all targets passed"
