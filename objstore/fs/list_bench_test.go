package fs

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel/format"
	"golang.org/x/sys/unix"
)

// headBenchStore is one store BenchmarkListHeadDepth times: a layout and
// a history depth.
type headBenchStore struct {
	l       layout
	depth   int
	unit    string // metric suffix
	s       *Store
	samples []float64
}

// BenchmarkListHeadDepth measures the kernel's head lookup alone,
// List(incarnation prefix, limit 1), on fs at history depths 10 and 10^4,
// in the trie2 layout (new roots, one-digit chunks past byte 12) and the
// trie1 layout (roots of earlier versions, two-digit chunks), side by
// side: each
// iteration times one lookup on each of the four stores, alternating, so
// every median comes from the same moments of a shared machine. It reports
// the median ns of a lookup per layout and depth, the directory entries
// and directories one lookup reads, ratio/depth10 per layout (median at
// 10^4 over median at 10) and trie2/trie1 at each depth: the per-entry and
// per-directory costs of List are what separate them. Under -short (CI's
// smoke run) the deep side is 10^3, its metrics named @10^3.
func BenchmarkListHeadDepth(b *testing.B) {
	keys := format.NewKeys("g")
	prefix := keys.IncarnationPrefix("main", 1)
	deep, deepTag := 10000, "10^4"
	if benchsize.Short() { // CI's smoke run: 10^3, a tenth of the durable puts
		deep, deepTag = 1000, "10^3"
	}
	stores := []*headBenchStore{
		{l: layoutTrie2, depth: 10, unit: "trie2@10"},
		{l: layoutTrie2, depth: deep, unit: "trie2@" + deepTag},
		{l: layoutTrie1, depth: 10, unit: "trie1@10"},
		{l: layoutTrie1, depth: deep, unit: "trie1@" + deepTag},
	}
	for _, st := range stores {
		st.s = openLayout(b, b.TempDir(), st.l)
		putManifests(b, st.s, keys, 1, st.depth)
	}
	ctx := context.Background()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for _, st := range stores {
			start := time.Now()
			page, err := st.s.List(ctx, prefix, "", 1)
			st.samples = append(st.samples, float64(time.Since(start).Nanoseconds()))
			if want := keys.Manifest("main", 1, uint64(st.depth)); err != nil || len(page.Keys) != 1 || page.Keys[0] != want {
				b.Fatalf("%s: list %v %v", st.unit, page, err)
			}
		}
	}
	b.StopTimer()
	med := make([]float64, len(stores))
	for i, st := range stores {
		slices.Sort(st.samples)
		med[i] = st.samples[len(st.samples)/2]
		b.ReportMetric(med[i], "median-ns/lookup@"+st.unit)
	}
	b.ReportMetric(med[1]/med[0], "ratio/depth10@trie2")
	b.ReportMetric(med[3]/med[2], "ratio/depth10@trie1")
	b.ReportMetric(med[0]/med[2], "trie2/trie1@10")
	b.ReportMetric(med[1]/med[3], "trie2/trie1@"+deepTag)
	for _, st := range stores {
		root, err := st.s.openRoot()
		if err != nil {
			b.Fatal(err)
		}
		w := lister{store: st.s, root: root, prefix: prefix}
		if _, err := w.run(ctx, 2); err != nil {
			b.Fatal(err)
		}
		unix.Close(root)
		b.ReportMetric(float64(w.entries), "entries/lookup@"+st.unit)
		b.ReportMetric(float64(w.expanded), "dirs/lookup@"+st.unit)
	}
}
