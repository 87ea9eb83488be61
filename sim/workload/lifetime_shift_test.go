package workload

import "testing"

// TestLateShiftEndsWithThePhase: the long form plans its collectors and
// reader in shifts across the fault phase's bound (lifeShifts), each later
// shift starting with one long think; its phase ends as soon as every
// cycle was attempted (PhaseDone), usually well before the bound. A shift
// still in its starting think then must end with the phase, as every
// other actor does between ops: here a scaled-down long form (120 cycles,
// no faults) with a shift planned to start at the bound. Red before: the
// think ran to its end, past the quiet phase (check liveness), and the
// janitor gave up before its final recovery (sidecar-left); a 2000-cycle
// form of lifetime-10k, seed 1, default faults, ended so.
func TestLateShiftEndsWithThePhase(t *testing.T) {
	s := genLifetime(1, "none", 120)
	s.Actors = append(s.Actors, ActorPlan{Name: "r0-9", Ops: []Op{{Kind: "gread", Think: s.FaultPhase, Args: map[string]string{}}}})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	r := Execute(s, testOpts)
	t.Logf("sim %v of a %v bound", r.SimTime, s.FaultPhase)
	if r.SimTime >= s.FaultPhase {
		t.Fatalf("vacuous: the phase ran to its bound")
	}
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
}
