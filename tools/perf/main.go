// Command perf draws graphkernel's headline benchmarks as SVG plots. It
// reads `go test -bench` output (scripts/perf.sh produces it) and writes one
// SVG per plot into -out. It is its own module (tools/perf) so that the
// library never depends on gonum.
//
//	go run . -in bench.txt -out ../../docs/perf -machine "..." -date 2026-12-04
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// result is one benchmark line: its name without the -GOMAXPROCS suffix and
// every metric by unit.
type result struct {
	name    string
	metrics map[string]float64
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads benchmark lines ("BenchmarkX/sub-2  N  v unit  v unit ...").
func parse(r io.Reader) ([]result, error) {
	var out []result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		res := result{name: procSuffix.ReplaceAllString(f[0], ""), metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", sc.Text(), err)
			}
			res.metrics[f[i+1]] = v
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// series collects (x, metric) for every result whose name matches re; the
// first submatch of re is x.
func series(rs []result, re, unit string) plotter.XYs {
	rx := regexp.MustCompile(re)
	var xys plotter.XYs
	for _, r := range rs {
		m := rx.FindStringSubmatch(r.name)
		v, ok := r.metrics[unit]
		if m == nil || !ok {
			continue
		}
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: v})
	}
	sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
	return xys
}

func scale(xys plotter.XYs, f float64) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	for i, p := range xys {
		out[i] = plotter.XY{X: p.X, Y: p.Y * f}
	}
	return out
}

// line is one named series of a plot.
type line struct {
	name string
	xys  plotter.XYs
}

// chart draws lines into path; it reports which lines had no data (so the
// caller can list them as pending rather than draw nothing silently).
func chart(path, title, xl, yl string, logX bool, stamp string, lines []line) ([]string, error) {
	return chartScaled(path, title, xl, yl, logX, false, stamp, lines)
}

// chartScaled is chart with an optional log Y axis.
func chartScaled(path, title, xl, yl string, logX, logY bool, stamp string, lines []line) ([]string, error) {
	p := plot.New()
	p.Title.Text = title + "\n" + stamp
	p.X.Label.Text, p.Y.Label.Text = xl, yl
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	var missing []string
	drawn := 0
	for i, l := range lines {
		if len(l.xys) == 0 {
			missing = append(missing, l.name)
			continue
		}
		lp, pts, err := plotter.NewLinePoints(l.xys)
		if err != nil {
			return nil, err
		}
		lp.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(lp, pts)
		p.Legend.Add(l.name, lp, pts)
		drawn++
	}
	if drawn == 0 {
		return missing, nil
	}
	// Headroom above the data for the legend (drawn at the top right), so
	// it never covers a line.
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Max *= 1 + 2*float64(len(lines))
	} else {
		p.Y.Min = 0
		p.Y.Max *= 1 + 0.12*float64(len(lines))
	}
	return missing, p.Save(7*vg.Inch, 4*vg.Inch, path)
}

// bars draws one bar per (label, value).
func bars(path, title, yl, stamp string, labels []string, vals []float64) error {
	p := plot.New()
	p.Title.Text = title + "\n" + stamp
	p.Y.Label.Text = yl
	b, err := plotter.NewBarChart(plotter.Values(vals), vg.Points(40))
	if err != nil {
		return err
	}
	b.Color = color.RGBA{R: 60, G: 110, B: 180, A: 255}
	p.Add(b)
	p.NominalX(labels...)
	return p.Save(5*vg.Inch, 4*vg.Inch, path)
}

func main() {
	in := flag.String("in", "bench.txt", "go test -bench output")
	out := flag.String("out", "docs/perf", "directory for the SVGs")
	machine := flag.String("machine", "unknown machine", "machine description for every plot")
	date := flag.String("date", "unknown date", "measurement date for every plot")
	flag.Parse()
	fh, err := os.Open(*in)
	if err != nil {
		fail(err)
	}
	rs, err := parse(fh)
	fh.Close()
	if err != nil {
		fail(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	stamp := fmt.Sprintf("%s, %s", *machine, *date)
	pending, err := draw(rs, *out, stamp)
	if err != nil {
		fail(err)
	}
	for _, p := range pending {
		fmt.Printf("pending (no data in %s): %s\n", *in, p)
	}
}

// draw writes every plot and returns the series that had no data.
func draw(rs []result, dir, stamp string) ([]string, error) {
	var pending []string
	add := func(m []string, err error) error { pending = append(pending, m...); return err }
	svg := func(n string) string { return filepath.Join(dir, n) }
	if err := add(chartScaled(svg("commit-latency.svg"), "Commit latency by history depth", "history depth (commits)", "µs per commit (log)", true, true, stamp, []line{
		{"sim: kernel commit, one table (BenchmarkCommitCost)", scale(series(rs, `^BenchmarkCommitCost/depth=(\d+)$`, "ns/op"), 1e-3)},
		{"fs: head LIST + GET + create-only PUT (BenchmarkPublishDepth)", scale(series(rs, `^BenchmarkPublishDepth/depth=(\d+)$`, "ns/op"), 1e-3)},
		{"s3 (local versitygw): kernel commit, median (BenchmarkDepthS3)", scale(series(rs, `^BenchmarkDepthS3/depth=(\d+)/commit$`, "median-ns/commit"), 1e-3)},
	})); err != nil {
		return nil, err
	}
	if err := add(chart(svg("commit-requests.svg"), "Store requests by history depth (counted, any backend)", "history depth (commits)", "requests", true, stamp, []line{
		{"publish one commit (BenchmarkCommitCost)", series(rs, `^BenchmarkCommitCost/depth=(\d+)$`, "requests/commit")},
		{"cold Commit(id) lookup (BenchmarkColdLookupDepth)", series(rs, `^BenchmarkColdLookupDepth/depth=(\d+)$`, "commit-requests")},
		{"cold MergeBase (BenchmarkColdLookupDepth)", series(rs, `^BenchmarkColdLookupDepth/depth=(\d+)$`, "mergebase-requests")},
		{"fs: directory entries read per head lookup (BenchmarkPublishDepth)", series(rs, `^BenchmarkPublishDepth/depth=(\d+)$`, "entries/lookup")},
		{"s3: table version + publish, one commit (BenchmarkDepthS3)", series(rs, `^BenchmarkDepthS3/depth=(\d+)/commit$`, "requests/commit")},
	})); err != nil {
		return nil, err
	}
	if err := add(chartScaled(svg("scan.svg"), "Scan cost by table size (fs store)", "rows in the table", "ns per row (log)", true, true, stamp, []line{
		{"Snapshot.Scan (BenchmarkScan/graphkernel)", perRow(series(rs, `^BenchmarkScan/rows=(\d+)/graphkernel$`, "ns/op"))},
		{"the same Arrow files read directly (BenchmarkScan/arrow-direct)", perRow(series(rs, `^BenchmarkScan/rows=(\d+)/arrow-direct$`, "ns/op"))},
	})); err != nil {
		return nil, err
	}
	if err := add(chartScaled(svg("filtered-scan.svg"), "Filtered scan cost by table size (fs store)\nperf.sh default: 10^4 and 10^5 rows only (10^6 with -bench-large)",
		"rows in the table", "ns per table row (log)", true, true, stamp, []line{
			{"ScanWhere, no predicate (BenchmarkFilteredScanBySize)", series(rs, `^BenchmarkFilteredScanBySize/rows=(\d+)/full$`, "ns/row")},
			{"ScanWhere, a 1% qty range (range-1pct)", series(rs, `^BenchmarkFilteredScanBySize/rows=(\d+)/range-1pct$`, "ns/row")},
			{"every Arrow file read directly (arrow-direct)", series(rs, `^BenchmarkFilteredScanBySize/rows=(\d+)/arrow-direct$`, "ns/row")},
		})); err != nil {
		return nil, err
	}
	if err := add(chartScaled(svg("adjacency.svg"), "Cold Out/In of one node by edge-table size (bytes read, counted)\nperf.sh default: 10^3 and 10^5 edges only (10^6 with -bench-large)",
		"edges in the table", "bytes (log)", true, true, stamp, []line{
			{"cold Out(node), degree 10 (BenchmarkColdAdjacency)", series(rs, `^BenchmarkColdAdjacency/edges=(\d+)/out=true$`, "bytes/lookup")},
			{"cold In(node) (out=false)", series(rs, `^BenchmarkColdAdjacency/edges=(\d+)/out=false$`, "bytes/lookup")},
			{"the edge table's Arrow files (read directly)", series(rs, `^BenchmarkColdAdjacency/edges=(\d+)/out=true$`, "edge-table-bytes")},
		})); err != nil {
		return nil, err
	}
	if err := add(chart(svg("goodput.svg"), "Commit goodput by number of writers (fs store, one branch)", "writers", "commits/s", false, stamp, []line{
		{"BenchmarkCommitThroughput", series(rs, `^BenchmarkCommitThroughput/writers=(\d+)$`, "commits/s")},
	})); err != nil {
		return nil, err
	}
	soak := false
	for _, r := range rs {
		if v, ok := r.metrics["sim-s/wall-s"]; ok && r.name == "BenchmarkMixSeed" {
			if err := bars(svg("soak.svg"), "Soak: simulated seconds per wall second", "sim-s / wall-s", stamp, []string{"BenchmarkMixSeed (one core)"}, []float64{v}); err != nil {
				return nil, err
			}
			soak = true
		}
	}
	if !soak {
		pending = append(pending, "soak sim/wall ratio (BenchmarkMixSeed)")
	}
	return pending, nil
}

// perRow turns ns/op of a scan of x rows into ns per row.
func perRow(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	for i, p := range xys {
		out[i] = plotter.XY{X: p.X, Y: p.Y / p.X}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "perf:", err)
	os.Exit(1)
}
