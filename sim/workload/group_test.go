package workload

import (
	"testing"
)

// TestGroupWorkloadCovers pins that the data-group workload exercises
// what check.CheckGroups checks: acknowledged groups of several members
// (one stored commit listing them), members failing alone beside them,
// and crashes that kill the whole service (more restarted processes than
// crashes), all clean.
func TestGroupWorkloadCovers(t *testing.T) {
	w, _ := Lookup("data-group")
	var sum struct{ groups, grouped, maxSize, own, crashes, recoveries int }
	for seed := uint64(1); seed <= 3; seed++ {
		r := Execute(w.Generate(seed, "default"), testOpts)
		if r.Failed() {
			t.Fatalf("seed %d: %v", seed, r.Violations)
		}
		g := r.Groups
		t.Logf("seed %d: %+v, crashes %d", seed, g, r.Crashes)
		sum.groups, sum.grouped, sum.own, sum.crashes = sum.groups+g.Groups, sum.grouped+g.Grouped, sum.own+g.OwnFailures, sum.crashes+r.Crashes
		sum.maxSize = max(sum.maxSize, g.MaxSize)
		sum.recoveries += r.Recoveries
	}
	if sum.groups == 0 || sum.grouped == 0 || sum.maxSize < 3 || sum.own == 0 || sum.crashes == 0 ||
		sum.recoveries <= sum.crashes { // a service's crash restarts each of its actors
		t.Fatalf("the workload exercised too little: %+v", sum)
	}
}
