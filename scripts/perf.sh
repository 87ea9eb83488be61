#!/usr/bin/env bash
# Runs graphkernel's headline benchmarks and draws them as SVG plots in
# docs/perf/ (tools/perf, a separate module using gonum.org/v1/plot, so the
# library never depends on it). The raw `go test -bench` output is kept next
# to the plots (docs/perf/bench.txt). Every benchmark runs -count 3 times
# (COUNT=N to change): the plots draw the median of the runs with the
# minimum and maximum as error bars.
#
#   scripts/perf.sh              # about five minutes on 2 idle cores (the
#                                # first run also builds the local S3
#                                # server, ~2 min)
#   scripts/perf.sh --plot-only  # redraw from docs/perf/bench.txt
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/perf
mkdir -p "$out"
raw="$out/bench.txt"

if [[ "${1:-}" != "--plot-only" ]]; then
	tmp=$(mktemp)
	trap 'rm -f "$tmp"' EXIT
	bench() { # package, regex, benchtime
		echo "=== $1 $2 ($3)" >&2
		go test "$1" -run '^$' -bench "$2" -benchtime "$3" -count "${COUNT:-3}" | tee -a "$tmp" >&2
	}
	bench ./kernel '^BenchmarkCommitCost$' 200x
	bench ./kernel '^BenchmarkColdLookupDepth$' 1x
	bench ./objstore/fs '^BenchmarkPublishDepth$' 200x
	# Local S3 server (versitygw, built once into the user cache); depths
	# 10, 10^2, 10^3, 10^4 (add -s3depth.deep by hand for 10^5, minutes).
	bench ./kernel '^BenchmarkDepthS3$' 1x
	bench ./kernel/data '^BenchmarkScan$' 20x
	# Default sizes only (10^3 .. 10^5 edges and rows): add -bench-large by
	# hand for 10^6 (minutes of fixtures).
	bench ./kernel/data '^BenchmarkColdAdjacency$' 20x
	bench ./kernel/data '^BenchmarkFilteredScanBySize$' 20x
	bench ./kernel '^BenchmarkCommitThroughput$' 100x
	bench ./sim/workload '^BenchmarkMixSeed$' 10x
	bench ./sim/workload '^BenchmarkWorkloadSeed$' 3x
	cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs || true)
	{
		echo "# machine: ${cpu:-unknown cpu}, $(nproc) cores, $(go env GOOS)/$(go env GOARCH), $(go env GOVERSION)"
		echo "# date: $(date -u +%Y-%m-%d)"
		cat "$tmp"
	} >"$raw"
fi

machine=$(sed -n 's/^# machine: //p' "$raw")
date=$(sed -n 's/^# date: //p' "$raw")
(cd tools/perf && GOWORK=off go run . -in "../../$raw" -out "../../$out" -machine "$machine" -date "$date")
ls -l "$out"/*.svg
