package workload

import (
	"strings"
	"testing"
)

// TestLifetimeDoesWhatItSays: a lifetime seed without faults is clean and
// is not vacuous: most of its cycles merge into main and delete their
// branch, collections delete, old snapshots get pinned, and the consumer
// holds a history lease that it renews.
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
}
