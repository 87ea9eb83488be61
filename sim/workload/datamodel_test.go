package workload

import (
	"testing"

	"github.com/graphkernel/graphkernel/sim/check"
)

// TestDataReadsVsModel: the data workloads' readers compare every graph
// read with the reference data model (check.CheckReadsVsModel), and the
// model explains the commits behind at least 90% of those reads across
// seeds (1..8; 1..4 with -short): a chain the model cannot replay must
// not pass by default.
func TestDataReadsVsModel(t *testing.T) {
	seeds := uint64(8)
	if testing.Short() {
		seeds = 4
	}
	for _, name := range []string{"data", "data-drops"} {
		w, _ := Lookup(name)
		checked, unmodelled := 0, 0
		var cov check.ModelCoverage
		for seed := uint64(1); seed <= seeds; seed++ {
			r := Execute(w.Generate(seed, "default"), testOpts)
			for _, v := range r.Violations {
				if v.Check == "reads-vs-model" {
					t.Fatalf("%s seed %d: %v", name, seed, v)
				}
				// Other checks are TestCleanRuns' and simrun's business; a
				// known kernel panic (docs/invariants.md, data-plane gaps)
				// must not hide whether the model check holds.
				t.Logf("%s seed %d: %v", name, seed, v)
			}
			checked, unmodelled = checked+r.ModelReads, unmodelled+r.ModelUnmodelled
			c := r.ModelCoverage
			cov.Commits, cov.UnmodelledCommits = cov.Commits+c.Commits, cov.UnmodelledCommits+c.UnmodelledCommits
			cov.RolledForward, cov.RolledBack = cov.RolledForward+c.RolledForward, cov.RolledBack+c.RolledBack
		}
		t.Logf("%s seeds 1..%d: %d reads compared with the model, %d at unmodelled commits; %d commits replayed "+
			"(%d recovery roll-forwards, %d roll-backs), %d unmodelled", name, seeds, checked, unmodelled,
			cov.Commits, cov.RolledForward, cov.RolledBack, cov.UnmodelledCommits)
		if checked == 0 || float64(checked) < 0.9*float64(checked+unmodelled) {
			t.Fatalf("%s: only %d of %d reads compared with the model", name, checked, checked+unmodelled)
		}
	}
}
