package workload

import (
	"testing"
)

// BenchmarkMixSeed runs default-soak seeds (the mix rotation, default
// faults) one after another and reports the simulated-to-wall time ratio
// and seeds per minute on one core (simrun runs one seed per core).
func BenchmarkMixSeed(b *testing.B) {
	w, _ := Lookup("mix")
	var sim float64
	for i := 0; i < b.N; i++ {
		r := Execute(w.Generate(uint64(i+1), "default"), Options{})
		if r.Failed() {
			b.Fatalf("seed %d: %v", i+1, r.Violations)
		}
		sim += r.SimTime.Seconds()
	}
	wall := b.Elapsed().Seconds()
	b.ReportMetric(sim/wall, "sim-s/wall-s")
	b.ReportMetric(float64(b.N)/wall*60, "seeds/min")
}
