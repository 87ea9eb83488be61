//go:build simplant

package workload

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// TestGroupSharedFailureBothVariants pins that the data-group workload
// catches both halves of the planted group-shared-failure: a member
// committed with its group although its strict expectation failed
// ("failed-commit-visible": only that half publishes a failed member) and
// a member's validation failure shared with the others ("group-isolation":
// only that half fails a sound member). TestPlantedBugsCaught stops at the
// first catch and runs the plant-off control.
func TestGroupSharedFailureBothVariants(t *testing.T) {
	if err := plant.Enable(plant.GroupSharedFailure); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	w, _ := Lookup("data-group")
	want := map[string]uint64{"failed-commit-visible": 0, "group-isolation": 0}
	for seed := uint64(1); seed <= 20; seed++ {
		for _, v := range Execute(w.Generate(seed, "default"), testOpts).Violations {
			if s, ok := want[v.Check]; ok && s == 0 {
				want[v.Check] = seed
				t.Logf("%s caught at seed %d: %s", v.Check, seed, v.Detail)
			}
		}
		if want["failed-commit-visible"] != 0 && want["group-isolation"] != 0 {
			return
		}
	}
	t.Fatalf("in 20 seeds, first catches %v (0: never)", want)
}
