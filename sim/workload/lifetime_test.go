package workload

import (
	"strings"
	"testing"
	"time"
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

// TestLifetimeLongAttemptsEveryCycle: the long form's fault phase ends when
// every planned cycle was attempted (Workload.PhaseDone), not when a time
// budget runs out: a scaled-down long form (lifetime-10k's shape with 120
// cycles, no faults) begins every cycle, merges every one into main (a lost
// race between its two changers is retried), deletes every branch, collects beside
// them, ends its fault phase well before the bound, with 0 violations.
func TestLifetimeLongAttemptsEveryCycle(t *testing.T) {
	const cycles = 120
	s := genLifetime(1, "none", cycles)
	if w, _ := Lookup(s.Workload); w.PhaseDone == nil || !w.Long {
		t.Fatalf("%s: not the long form", s.Workload)
	}
	r := Execute(s, testOpts)
	t.Logf("begun %d, merged %d (%d retries), deleted %d, collections %d; sim %v of a %v bound", r.Cycles, r.CyclesMerged,
		r.MergeRetries, r.CyclesDeleted, r.Collections, r.SimTime, s.FaultPhase)
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
	if r.Cycles != cycles || r.CyclesMerged != cycles || r.CyclesDeleted != cycles || r.Collections == 0 {
		t.Fatalf("begun %d of %d, merged %d, deleted %d, collections %d", r.Cycles, cycles, r.CyclesMerged, r.CyclesDeleted, r.Collections)
	}
	if r.SimTime >= s.FaultPhase {
		t.Fatalf("the run took %v: its fault phase ran to the bound %v instead of ending with the cycles", r.SimTime, s.FaultPhase)
	}
}

// TestLifetimeLongBackgroundCoversPhase pins that the long form's
// collectors and reader plan ops across its whole fault-phase bound: one
// actor's MaxActorOps cap covered under half of it, so a faulty
// lifetime-10k run (which needs the bound) lost its collections halfway
// and its store grew with every cycle.
func TestLifetimeLongBackgroundCoversPhase(t *testing.T) {
	w, ok := Lookup("lifetime-10k")
	if !ok {
		t.Fatal("no lifetime-10k workload")
	}
	s := w.Generate(1, "default")
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	covered := map[string]time.Duration{}
	for _, a := range s.Actors {
		role, _, _ := strings.Cut(a.Name, "-")
		var end time.Duration
		for _, op := range a.Ops {
			end += op.Think
		}
		covered[role] = max(covered[role], end)
	}
	for _, role := range []string{"m0", "m1", "r0"} {
		// Ops are counted from the mean think, so the drawn thinks may end
		// a little short of the phase: allow 2%.
		if covered[role] < s.FaultPhase/100*98 {
			t.Errorf("%s plans ops up to %v of a %v fault phase", role, covered[role], s.FaultPhase)
		}
	}
}
