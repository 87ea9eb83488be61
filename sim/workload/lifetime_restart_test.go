package workload

import (
	"strings"
	"testing"
)

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

// TestLifetimeLongPhaseEndsAfterCrashedCycles: the long form's fault
// phase ends once every planned cycle was attempted, also when a changer
// crashed in the middle of one. A crashed process's op never returns
// before the world stops, so counting only returned cycle ops left the
// count short and the phase ran to its bound: lifetime-10k seed 1 (default
// faults, changer c2 crashed in two cycles) ran its last 1,000 cycles' mark
// at sim 12h31m instead of ~3h05m, 10 hours of collections and reads with
// no cycle left (~1M requests). A scaled-down long form (120 cycles,
// default faults) whose changers crash mid-cycle must end its phase before
// the bound.
func TestLifetimeLongPhaseEndsAfterCrashedCycles(t *testing.T) {
	s := genLifetime(3, "default", 120)
	r := Execute(s, Options{TraceLines: 1 << 20})
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
	restarts := 0
	for _, l := range r.Trace {
		if strings.Contains(l, "# spawn actor=") && strings.Contains(l, " name=c") && strings.Contains(l, "~") {
			restarts++
		}
	}
	if restarts == 0 {
		t.Fatal("vacuous: no changer restarted")
	}
	t.Logf("changer restarts %d, cycles begun %d; sim %v of a %v bound", restarts, r.Cycles, r.SimTime, s.FaultPhase)
	if r.SimTime >= s.FaultPhase {
		t.Fatalf("the run took %v: its fault phase ran to the bound %v instead of ending with the cycles", r.SimTime, s.FaultPhase)
	}
}
