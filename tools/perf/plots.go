package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// charts are the line plots of docs/perf.md, from the results rs.
func charts(rs []result) []chart {
	const us, none = 1e-3, 1.0
	return []chart{{
		file: "commit-latency.svg", title: "Commit latency by history depth",
		xLabel: "history depth (commits)", yLabel: "µs per commit (log)", logX: true, logY: true,
		lines: []line{
			{"sim: kernel commit, one table (BenchmarkCommitCost)", series(rs, `^BenchmarkCommitCost/depth=(\d+)$`, "ns/op", us)},
			{"fs: head LIST + GET + create-only PUT (BenchmarkPublishDepth)", series(rs, `^BenchmarkPublishDepth/depth=(\d+)$`, "ns/op", us)},
			{"s3 (local versitygw): kernel commit, median of 101 (BenchmarkDepthS3)", series(rs, `^BenchmarkDepthS3/depth=(\d+)/commit$`, "median-ns/commit", us)},
		},
	}, {
		file: "commit-requests.svg", title: "Store requests by history depth (counted, any backend)",
		xLabel: "history depth (commits)", yLabel: "requests", logX: true,
		lines: []line{
			{"publish one commit (BenchmarkCommitCost)", series(rs, `^BenchmarkCommitCost/depth=(\d+)$`, "requests/commit", none)},
			{"cold Commit(id) lookup (BenchmarkColdLookupDepth)", series(rs, `^BenchmarkColdLookupDepth/depth=(\d+)$`, "commit-requests", none)},
			{"cold MergeBase (BenchmarkColdLookupDepth)", series(rs, `^BenchmarkColdLookupDepth/depth=(\d+)$`, "mergebase-requests", none)},
			{"fs: directory entries read per head lookup (BenchmarkPublishDepth)", series(rs, `^BenchmarkPublishDepth/depth=(\d+)$`, "entries/lookup", none)},
			{"s3: table version + publish, one commit (BenchmarkDepthS3)", series(rs, `^BenchmarkDepthS3/depth=(\d+)/commit$`, "requests/commit", none)},
		},
	}, {
		file: "scan.svg", title: "Scan cost by table size (fs store)",
		xLabel: "rows in the table", yLabel: "ns per row (log)", logX: true, logY: true,
		lines: []line{
			{"Snapshot.Scan (BenchmarkScan/graphkernel)", perX(series(rs, `^BenchmarkScan/rows=(\d+)/graphkernel$`, "ns/op", none))},
			{"the same Arrow files read directly (BenchmarkScan/arrow-direct)", perX(series(rs, `^BenchmarkScan/rows=(\d+)/arrow-direct$`, "ns/op", none))},
		},
	}, {
		file: "filtered-scan.svg", title: "Filtered scan cost by table size (fs store)",
		notes:  []string{"perf.sh default: 10^3 to 10^5 rows (10^6 with -bench-large)"},
		xLabel: "rows in the table", yLabel: "ns per table row (log)", logX: true, logY: true,
		lines: []line{
			{"ScanWhere, no predicate (BenchmarkFilteredScanBySize/full)", series(rs, `^BenchmarkFilteredScanBySize/rows=(\d+)/full$`, "ns/row", none)},
			{"ScanWhere, a 1% qty range (range-1pct)", series(rs, `^BenchmarkFilteredScanBySize/rows=(\d+)/range-1pct$`, "ns/row", none)},
			{"every Arrow file read directly (arrow-direct)", series(rs, `^BenchmarkFilteredScanBySize/rows=(\d+)/arrow-direct$`, "ns/row", none)},
		},
	}, {
		file: "adjacency.svg", title: "Cold Out/In of one node by edge-table size (bytes read, counted)",
		notes:  []string{"perf.sh default: 10^3 to 10^5 edges (10^6 with -bench-large)"},
		xLabel: "edges in the table", yLabel: "bytes (log)", logX: true, logY: true,
		lines: []line{
			{"cold Out(node), degree 10 (BenchmarkColdAdjacency/out=true)", series(rs, `^BenchmarkColdAdjacency/edges=(\d+)/out=true$`, "bytes/lookup", none)},
			{"cold In(node) (out=false)", series(rs, `^BenchmarkColdAdjacency/edges=(\d+)/out=false$`, "bytes/lookup", none)},
			{"the edge table's Arrow files (read directly)", series(rs, `^BenchmarkColdAdjacency/edges=(\d+)/out=true$`, "edge-table-bytes", none)},
		},
	}, {
		file: "goodput.svg", title: "Commit goodput by number of writers (fs store, one branch)",
		xLabel: "writers", yLabel: "commits/s",
		lines: []line{
			{"writers on disjoint tables (BenchmarkCommitThroughput)", series(rs, `^BenchmarkCommitThroughput/writers=(\d+)$`, "commits/s", none)},
		},
	}}
}

// drawAll writes every plot into dir and returns the series that had no
// data.
func drawAll(rs []result, dir, stamp string) ([]string, error) {
	var pending []string
	for _, c := range charts(rs) {
		missing, err := drawChart(dir, c, stamp)
		if err != nil {
			return nil, err
		}
		pending = append(pending, missing...)
	}
	missing, err := soak(rs, filepath.Join(dir, "soak.svg"), stamp)
	return append(pending, missing...), err
}

// soakData returns the workloads of the soak plot (each workload of the
// default soak's rotation, BenchmarkWorkloadSeed, then "mix",
// BenchmarkMixSeed) with the wall seconds per seed of their runs, and the
// mix's simulated-to-wall ratios.
func soakData(rs []result) (names []string, pts []point, ratio []float64) {
	const prefix = "BenchmarkWorkloadSeed/workload="
	byName := map[string][]float64{}
	for _, r := range rs {
		ns, ok := r.metrics["ns/op"]
		switch {
		case !ok:
		case r.name == "BenchmarkMixSeed":
			byName["mix"] = append(byName["mix"], ns/1e9)
			if v, ok := r.metrics["sim-s/wall-s"]; ok {
				ratio = append(ratio, v)
			}
		case strings.HasPrefix(r.name, prefix):
			n := strings.TrimPrefix(r.name, prefix)
			byName[n] = append(byName[n], ns/1e9)
		}
	}
	for n := range byName {
		if n != "mix" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(byName["mix"]) > 0 {
		names = append(names, "mix")
	}
	for i, n := range names {
		pts = append(pts, summarize(float64(i), byName[n]))
	}
	return names, pts, ratio
}

// soak draws wall seconds per seed of each workload of the default soak's
// rotation and of the rotation itself (BenchmarkMixSeed), with the mix's
// simulated-to-wall ratio in the title.
func soak(rs []result, path, stamp string) ([]string, error) {
	names, pts, ratio := soakData(rs)
	if len(names) == 0 || len(ratio) == 0 {
		return []string{"soak speed (BenchmarkMixSeed, BenchmarkWorkloadSeed)"}, nil
	}
	r := summarize(0, ratio)
	note := fmt.Sprintf("mix (the default soak): %.0f simulated s per wall s (median of %d runs, %.0f..%.0f)", r.med, r.runs, r.min, r.max)
	return nil, bars(path, "Soak: wall seconds per seed, by workload (default faults, one core)", []string{note},
		"wall s per seed", stamp, names, pts)
}
