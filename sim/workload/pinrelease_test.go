package workload

import (
	"testing"
	"time"
)

// TestExpiredPinReleasedOnce: gpinread releases a pin whose lease ran out
// once and forgets it. Here one pin, then ten gpinreads each past the
// lease's end: one release. Red before: every gpinread released every pin
// ever taken again (ten releases here; in lifetime-10k seed 1, lease
// deletes grew to 462k of the last 1,000 cycles' 1.30M requests at 4,000
// cycles, quadratic in the run's length).
func TestExpiredPinReleasedOnce(t *testing.T) {
	const reads = 10
	a := ActorPlan{Name: "r0", Ops: []Op{{Kind: "gpin", Think: time.Second, Args: map[string]string{"back": "0"}}}}
	for i := 0; i < reads; i++ {
		a.Ops = append(a.Ops, Op{Kind: "gpinread", Think: maintLeaseTTL + 5*time.Second, Args: map[string]string{}})
	}
	s := &Scenario{Workload: "maint", Seed: 1, Faults: "none", FaultPhase: time.Duration(reads+2) * (maintLeaseTTL + 5*time.Second),
		QuietPhase: maintShape.quietPhase, Actors: []ActorPlan{a}}
	r := Execute(s, testOpts)
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
	if r.PinReleases != 1 {
		t.Fatalf("%d releases of one expired pin over %d gpinreads, want 1", r.PinReleases, reads)
	}
}
