package workload

import "testing"

// TestLifetimeRestartDeletesInterruptedCycle: a changer that crashes in
// the middle of a cycle restarts with its next op, so the interrupted
// cycle's branch was never deleted: a live fork of main for the rest of
// the run, whose merge base with main every collection kept (docs/gc.md
// rule 3b), at a cost growing with main's history (lifetime-10k under
// default faults: 323 manifests kept as merge bases at 500 cycles, loads
// past the collection's time bound). The restarted changer deletes it
// first; check cycle-branch-left (lifeFinal) catches a leftover. Seed 2 of
// the default-mix form crashes changers mid-cycle.
func TestLifetimeRestartDeletesInterruptedCycle(t *testing.T) {
	r := Execute(genLifetime(2, "default", lifeCycles), testOpts)
	if r.Crashes == 0 {
		t.Fatal("vacuous: no crash")
	}
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
}
