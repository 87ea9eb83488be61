package fs

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"golang.org/x/sys/unix"
)

// BenchmarkListHeadDepth measures the kernel's head lookup alone,
// List(incarnation prefix, limit 1), on fs at history depths 10 and 10^4,
// side by side: each iteration times one lookup on each store, alternating,
// so both medians come from the same moments of a shared machine. It
// reports the median ns of a lookup at each depth, the directory entries
// and directories one lookup reads, and ratio/depth10 (median at 10^4 over
// median at 10): the per-entry and per-directory costs of List are what
// separate the two depths.
func BenchmarkListHeadDepth(b *testing.B) {
	keys := format.NewKeys("g")
	prefix := keys.IncarnationPrefix("main", 1)
	depths := []int{10, 10000}
	stores := make([]*Store, len(depths))
	for i, depth := range depths {
		s, err := OpenWith(b.TempDir(), Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		putManifests(b, s, keys, 1, depth)
		stores[i] = s
	}
	ctx := context.Background()
	samples := make([][]float64, len(depths))
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i, s := range stores {
			start := time.Now()
			page, err := s.List(ctx, prefix, "", 1)
			samples[i] = append(samples[i], float64(time.Since(start).Nanoseconds()))
			if want := keys.Manifest("main", 1, uint64(depths[i])); err != nil || len(page.Keys) != 1 || page.Keys[0] != want {
				b.Fatalf("depth %d: list %v %v", depths[i], page, err)
			}
		}
	}
	b.StopTimer()
	med := make([]float64, len(depths))
	for i := range depths {
		slices.Sort(samples[i])
		med[i] = samples[i][len(samples[i])/2]
	}
	b.ReportMetric(med[0], "median-ns/lookup@10")
	b.ReportMetric(med[1], "median-ns/lookup@10^4")
	b.ReportMetric(med[1]/med[0], "ratio/depth10")
	for i, s := range stores {
		root, err := s.openRoot()
		if err != nil {
			b.Fatal(err)
		}
		w := lister{store: s, root: root, prefix: prefix}
		if _, err := w.run(ctx, 2); err != nil {
			b.Fatal(err)
		}
		unix.Close(root)
		unit := []string{"@10", "@10^4"}[i]
		b.ReportMetric(float64(w.entries), "entries/lookup"+unit)
		b.ReportMetric(float64(w.expanded), "dirs/lookup"+unit)
	}
}
