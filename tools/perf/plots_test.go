package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBenchData checks that docs/perf/bench.txt (what the SVGs are drawn
// from) gives every series of every plot at least four sizes, each
// measured in at least three runs (so the error bars are a spread), and
// the soak plot at least four workloads.
func TestBenchData(t *testing.T) {
	fh, err := os.Open(filepath.Join(*svgDir, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rs, err := parse(fh)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charts(rs) {
		for _, l := range c.lines {
			if len(l.pts) < 4 {
				t.Errorf("%s: %q has %d sizes, want at least 4", c.file, l.name, len(l.pts))
			}
			for _, p := range l.pts {
				if p.runs < 3 {
					t.Errorf("%s: %q at %g has %d runs, want at least 3", c.file, l.name, p.x, p.runs)
				}
			}
		}
	}
	names, pts, _ := soakData(rs)
	if len(names) < 4 {
		t.Errorf("soak: %d workloads %q, want at least 4", len(names), names)
	}
	for i, p := range pts {
		if p.runs < 3 {
			t.Errorf("soak: %s has %d runs, want at least 3", names[i], p.runs)
		}
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		vs   []float64
		want point
	}{
		{[]float64{5}, point{x: 1, min: 5, med: 5, max: 5, runs: 1}},
		{[]float64{3, 1, 2}, point{x: 1, min: 1, med: 2, max: 3, runs: 3}},
		{[]float64{4, 1, 3, 2}, point{x: 1, min: 1, med: 2.5, max: 4, runs: 4}},
	} {
		if got := summarize(1, tc.vs); got != tc.want {
			t.Errorf("summarize(%v) = %+v, want %+v", tc.vs, got, tc.want)
		}
	}
}

// TestCoincident pins the legend's note on series drawn over each other
// (adjacency's In and Out read the same bytes).
func TestCoincident(t *testing.T) {
	a := []point{{x: 1, med: 100}, {x: 10, med: 200}}
	near := []point{{x: 1, med: 100.5}, {x: 10, med: 199}}
	far := []point{{x: 1, med: 100}, {x: 10, med: 250}}
	otherX := []point{{x: 1, med: 100}, {x: 100, med: 200}}
	drawn := []line{{"a", a}}
	for _, tc := range []struct {
		name string
		pts  []point
		want int
	}{{"within 1%", near, 0}, {"apart at one x", far, -1}, {"other xs", otherX, -1}, {"shorter", a[:1], -1}} {
		if got := coincident(line{"b", tc.pts}, drawn); got != tc.want {
			t.Errorf("%s: coincident = %d, want %d", tc.name, got, tc.want)
		}
	}
}
