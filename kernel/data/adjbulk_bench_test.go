package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkSortChanges sorts 10^6 adjacency changes with keys and ids as
// a bulk load's (random endpoints "p%07d", ids "k%08d") with sortChanges
// and with the stable sort of whole changes it replaced, side by side,
// and reports both and their ratio (#28.2).
func BenchmarkSortChanges(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := rowSrc{}
	in := make([]adjChange, 1_000_000)
	for i := range in {
		in[i] = adjChange{key: fmt.Sprintf("p%07d", rng.IntN(150_000)), id: fmt.Sprintf("k%08d", i), src: &src}
	}
	var prefix, stable time.Duration
	work := make([]adjChange, len(in))
	for b.Loop() {
		copy(work, in)
		t0 := time.Now()
		sortChanges(work)
		prefix += time.Since(t0)
		copy(work, in)
		t0 = time.Now()
		slices.SortStableFunc(work, func(a, b adjChange) int { return compareKeyID(a.key, a.id, b.key, b.id) })
		stable += time.Since(t0)
	}
	b.ReportMetric(prefix.Seconds()/float64(b.N), "s-sortChanges")
	b.ReportMetric(stable.Seconds()/float64(b.N), "s-stable")
	b.ReportMetric(prefix.Seconds()/stable.Seconds(), "ratio-sortChanges/stable")
}
