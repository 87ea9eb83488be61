// Command perf draws graphkernel's headline benchmarks as SVG plots. It
// reads `go test -bench` output (scripts/perf.sh produces it, every
// benchmark run -count 3 times) and writes one SVG per plot into -out:
// the median of the runs of each benchmark with their minimum and maximum
// as error bars. Text is drawn as glyph outlines (pathCanvas), so the
// plots need no font on the viewer's machine. It is its own module
// (tools/perf) so that the library never depends on gonum.
//
//	go run . -in bench.txt -out ../../docs/perf -machine "..." -date 2026-12-04
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// result is one benchmark line: its name without the -GOMAXPROCS suffix and
// every metric by unit. A benchmark run -count N times has N results.
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

// point is one x of a series: the minimum, median and maximum of the
// metric over the runs measured at x, and how many runs there were.
type point struct {
	x, min, med, max float64
	runs             int
}

// series collects the metric unit of every result whose name matches re
// (its first submatch is x), times f, as one point per x in ascending x.
func series(rs []result, re, unit string, f float64) []point {
	rx := regexp.MustCompile(re)
	byX := map[float64][]float64{}
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
		byX[x] = append(byX[x], v*f)
	}
	xs := make([]float64, 0, len(byX))
	for x := range byX {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	out := make([]point, 0, len(xs))
	for _, x := range xs {
		out = append(out, summarize(x, byX[x]))
	}
	return out
}

// summarize returns the minimum, median (the mean of the middle two for an
// even count) and maximum of vs.
func summarize(x float64, vs []float64) point {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return point{x: x, min: s[0], med: med, max: s[n-1], runs: n}
}

// perX divides every value at x by x (ns per scan of x rows into ns per row).
func perX(ps []point) []point {
	out := make([]point, len(ps))
	for i, p := range ps {
		out[i] = point{x: p.x, min: p.min / p.x, med: p.med / p.x, max: p.max / p.x, runs: p.runs}
	}
	return out
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
	pending, err := drawAll(rs, *out, fmt.Sprintf("%s, %s", *machine, *date))
	if err != nil {
		fail(err)
	}
	for _, p := range pending {
		fmt.Printf("pending (no data in %s): %s\n", *in, p)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "perf:", err)
	os.Exit(1)
}
