package recovery

import "testing"

// TestJudgePlanTable pins the plan statuses row by row.
func TestJudgePlanTable(t *testing.T) {
	cases := []struct {
		name     string
		manifest SlotState
		restores []SlotState
		want     PlanStatus
	}{
		{"nothing written yet", SlotFree, []SlotState{SlotFree, SlotFree}, PlanLive},
		{"no restores at all", SlotFree, nil, PlanLive},
		{"restores partly written by the plan", SlotFree, []SlotState{SlotPlan, SlotFree}, PlanLive},
		{"every restore written, commit not yet", SlotFree, []SlotState{SlotPlan, SlotPlan}, PlanLive},
		{"commit landed", SlotPlan, []SlotState{SlotPlan}, PlanLanded},
		{"commit landed, restores superseded later", SlotPlan, []SlotState{SlotTaken}, PlanLanded},
		{"slot taken by another commit", SlotTaken, []SlotState{SlotPlan}, PlanDead},
		{"a restore version taken by another writer", SlotFree, []SlotState{SlotPlan, SlotTaken}, PlanDead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := JudgePlan(tc.manifest, tc.restores); got != tc.want {
				t.Fatalf("JudgePlan(%v, %v) = %v, want %v", tc.manifest, tc.restores, got, tc.want)
			}
		})
	}
}

// TestRestoreAtFollowsNeedsRestore: a plan restores exactly the tables
// NeedsRestore selects, one above their HEAD.
func TestRestoreAtFollowsNeedsRestore(t *testing.T) {
	obs := []Observation{
		{Expected: 3, Commit: 4, Pin: 3, Head: 4, HeadOurs: true}, // dangling: restore at 5
		{Expected: 3, Commit: 4, Pin: 5, Head: 5},                 // written over: nothing
		{Expected: 0, Commit: 1, Pin: 0, Head: 0},                 // never written: fence at 1
	}
	got := RestoreAt(obs)
	want := []uint64{5, 0, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("RestoreAt = %v, want %v", got, want)
		}
	}
}
