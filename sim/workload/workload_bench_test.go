package workload

import (
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/internal/benchsize"
)

// BenchmarkWorkloadSeed runs seeds 1..b.N of each workload of the default
// soak's rotation (default faults), one after another on one core, and
// reports each workload's simulated-to-wall time ratio: which parts of the
// mix the soak's speed (BenchmarkMixSeed) comes from. The cuts workload is
// a crash-cut sweep with no simulated clock: its sim-s/wall-s is 0 by
// construction, and wall-s/seed (reported for every workload) is its
// figure. Under -short (CI's smoke run) only migrate runs, the cheapest
// seed: every workload's seeds run in CI's soak stages, so the smoke run
// checks the benchmark, not the workloads.
func BenchmarkWorkloadSeed(b *testing.B) {
	names := slices.Clone(mixRotation)
	slices.Sort(names)
	names = slices.Compact(names)
	if benchsize.Short() {
		names = []string{"migrate"}
	}
	for _, name := range names {
		b.Run("workload="+name, func(b *testing.B) {
			w, ok := Lookup(name)
			if !ok {
				b.Fatalf("workload %q not registered", name)
			}
			var sim float64
			for i := 0; i < b.N; i++ {
				r := Execute(w.Generate(uint64(i+1), "default"), Options{})
				if r.Failed() {
					b.Fatalf("%s seed %d: %v", name, i+1, r.Violations)
				}
				sim += r.SimTime.Seconds()
			}
			b.ReportMetric(sim/b.Elapsed().Seconds(), "sim-s/wall-s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "wall-s/seed")
		})
	}
}
