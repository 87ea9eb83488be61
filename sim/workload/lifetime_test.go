package workload

import (
	"strings"
	"testing"
)

// TestLifetimeDoesWhatItSays: a lifetime seed without faults is clean and
// is not vacuous: most of its cycles merge into main and delete their
// branch, collections delete, old snapshots get pinned, and the consumer
// holds a history lease that it renews; the skewed writer and collector
// (s0, s1) are refused for clock skew, and collections delete the dead
// names of deleted cycle branches within the run.
func TestLifetimeDoesWhatItSays(t *testing.T) {
	w, _ := Lookup("lifetime")
	opt := testOpts
	opt.TraceLines = 1 << 20
	r := Execute(w.Generate(1, "none"), opt)
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
	count := func(sub, suffix string) int {
		n := 0
		for _, l := range r.Trace {
			if strings.Contains(l, sub) && strings.HasSuffix(l, suffix) {
				n++
			}
		}
		return n
	}
	merged, pins, feedPins := count("lcycle ch-", "(ok)"), count(" gpin main ", "(ok)"), count("lfeed pin ->", "(ok)")
	t.Logf("cycles merged %d of %d, pins %d, feed lease pins %d", merged, lifeCycles, pins, feedPins)
	if merged < lifeCycles*9/10 || pins == 0 || feedPins < 2 || count("lease lapsed", "") > 0 {
		t.Fatalf("vacuous run: %d of %d cycles merged, %d pins, %d feed lease pins", merged, lifeCycles, pins, feedPins)
	}
	skewTx, skewCollect := count("# s0 dtx ", "(clock-skew)"), count("# s1 mcollect ", "(clock-skew)")
	deadNames := 0
	for _, l := range r.Trace {
		if strings.Contains(l, " mcollect ") && strings.HasSuffix(l, "(ok)") && !strings.Contains(l, "NameMarkers:{Deleted:0 ") {
			deadNames++
		}
	}
	t.Logf("skew refusals: %d writes, %d collections; collections deleting dead names: %d", skewTx, skewCollect, deadNames)
	if skewTx == 0 || skewCollect == 0 || deadNames == 0 {
		t.Fatalf("vacuous run: %d skewed writes and %d skewed collections refused, %d collections deleted dead names", skewTx, skewCollect, deadNames)
	}
}
