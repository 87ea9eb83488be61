package workload

import (
	"testing"
)

// TestGroupWorkloadCovers pins that the data-group workload exercises
// what check.CheckGroups checks: acknowledged groups of several members
// (one stored commit listing them), members failing alone beside them,
// crashes that kill the whole service (more restarted processes than
// crashes), and followers giving up (the impatient service g1): taken by
// a leader that did not report in time (ambiguous) and never taken
// (data.ErrGroupWait), all clean ("group-follower-wait" among the checks).
func TestGroupWorkloadCovers(t *testing.T) {
	w, _ := Lookup("data-group")
	var sum struct{ groups, grouped, maxSize, own, crashes, recoveries, unknown, waited int }
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
		sum.unknown, sum.waited = sum.unknown+g.Unknown, sum.waited+g.Waited
	}
	t.Logf("sum %+v", sum)
	if sum.groups == 0 || sum.grouped == 0 || sum.maxSize < 3 || sum.own == 0 || sum.crashes == 0 || sum.unknown == 0 || sum.waited == 0 ||
		sum.recoveries <= sum.crashes { // a service's crash restarts each of its actors
		t.Fatalf("the workload exercised too little: %+v", sum)
	}
}
