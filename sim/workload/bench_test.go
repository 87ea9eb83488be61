package workload

import (
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/internal/benchsize"
)

// BenchmarkMixSeed runs default-soak seeds (the mix rotation, default
// faults) one after another and reports the simulated-to-wall time ratio
// and seeds per minute on one core (simrun runs one seed per core). Under
// -short (CI's smoke run) its seeds start at the rotation's first migrate
// seed, the cheapest, instead of 1.
func BenchmarkMixSeed(b *testing.B) {
	w, _ := Lookup("mix")
	first := 1
	if benchsize.Short() {
		first = slices.Index(mixRotation, "migrate")
	}
	var sim float64
	for i := 0; i < b.N; i++ {
		r := Execute(w.Generate(uint64(first+i), "default"), Options{})
		if r.Failed() {
			b.Fatalf("seed %d: %v", first+i, r.Violations)
		}
		sim += r.SimTime.Seconds()
	}
	wall := b.Elapsed().Seconds()
	b.ReportMetric(sim/wall, "sim-s/wall-s")
	b.ReportMetric(float64(b.N)/wall*60, "seeds/min")
}
