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
# Minimizing a new interesting input may take up to a minute by default,
# during which the target runs no new inputs; in a 5 s CI run that stalls
# the whole run and ends it with "context deadline exceeded" and no
# crasher (seen with FuzzDecodeIDIndex). Bound it; a crasher is kept
# either way. FUZZ_MINIMIZE overrides (e.g. 60s for the nightly job).
minimize="${FUZZ_MINIMIZE:-200x}"

mapfile -t targets < <(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . \
  | grep -v '/vendor/' | sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+)#\1 \2#' | sort -u)

if [ "${#targets[@]}" -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi

# Each package's test binary is built once, instrumented for fuzzing as
# `go test -fuzz` builds it, and run once per target from the package's
# directory (where its testdata/fuzz corpus is), with the fuzz cache the go
# command would use: linking a binary per target cost more than the fuzzing.
bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
fuzzcache="$(go env GOCACHE)/fuzz"
built=""
bin=""
runtarget() {
  (cd "$pkg" && "$bin" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$fuzztime" \
    -test.fuzzminimizetime "$minimize" -test.fuzzcachedir "$fuzzcache/$importpath" \
    -test.paniconexit0 -test.timeout 10m0s)
}

for t in "${targets[@]}"; do
  pkg="./${t% *}"
  name="${t#* }"
  if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then
    continue
  fi
  if [ "$built" != "$pkg" ]; then
    built="$pkg"
    bin="$bindir/$(echo "${pkg#./}" | tr / _).test"
    importpath="$(go list -f '{{.ImportPath}}' "$pkg")"
    if ! go test -c -fuzz . -o "$bin" "$pkg"; then
      echo "fuzz.sh: building $pkg's test binary failed" >&2
      bin=""
    fi
  fi
  echo "=== $name ($pkg) for $fuzztime"
  if [ -z "$bin" ]; then
    failed+=("$pkg $name")
    continue
  fi
  corpus="${pkg#./}/testdata/fuzz/${name}"
  before="$(ls "$corpus" 2>/dev/null | sort || true)"
  if runtarget; then
    continue
  fi
  new="$(comm -13 <(echo "$before") <(ls "$corpus" 2>/dev/null | sort || true) | grep -v '^$' || true)"
  if [ -z "$new" ]; then
    # No crasher was written: the fuzzing engine itself failed (a worker
    # hung or was killed on a loaded machine). Try once more before failing.
    echo "fuzz.sh: $name failed without a crasher; retrying once" >&2
    if runtarget; then
      continue
    fi
  fi
  # Print every new crasher so a CI log on a fresh clone keeps the input.
  for f in $new; do
    echo "fuzz.sh: crasher $corpus/$f:" >&2
    cat "$corpus/$f" >&2
  done
  failed+=("$pkg $name")
done

if [ "${#failed[@]}" -gt 0 ]; then
  printf 'fuzz.sh: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz.sh: all targets passed"
