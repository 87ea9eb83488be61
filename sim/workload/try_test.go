package workload

import (
	"testing"
	"time"
)

func TestTryCore(t *testing.T) {
	for _, wl := range []string{"core", "contention"} {
		for seed := uint64(1); seed <= 20; seed++ {
			s, _ := Lookup(wl)
			sc := s.Generate(seed, "heavy")
			start := time.Now()
			r := Execute(sc, Options{})
			r2 := Execute(sc, Options{})
			if r.TraceHash != r2.TraceHash {
				t.Errorf("seed %d nondeterministic", seed)
			}
			t.Logf("%s seed %d: wall %v sim %v ops %d commits %d reads %d faults %d crashes %d rec %d lin %d/%d viol %d",
				wl, seed, time.Since(start)/2, r.SimTime, r.Ops, r.Commits, r.Reads, r.FaultsInjected, r.Crashes, r.Recoveries, r.LinChecks, r.LinUnknown, len(r.Violations))
			for i, v := range r.Violations {
				if i > 10 {
					break
				}
				t.Logf("  %v", v)
			}
		}
	}
}
