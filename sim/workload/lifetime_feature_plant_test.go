//go:build simplant

package workload

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// TestLifetimeFeatureCatchesNoMergeBase pins that check feature-merge is
// live: with rule 3b skipped (planted gc-no-merge-base), a collection
// deletes a manifest the feature branch's merge base with main needs, and
// a later merge involving it answers ErrReclaimed (lifetime seed 2, no
// faults: the final merge into main). The same seed is clean plant-off.
func TestLifetimeFeatureCatchesNoMergeBase(t *testing.T) {
	const seed = 2
	w, _ := Lookup("lifetime")
	if err := plant.Enable(plant.GCNoMergeBase); err != nil {
		t.Fatal(err)
	}
	planted := Execute(w.Generate(seed, "none"), testOpts)
	if err := plant.Enable(); err != nil {
		t.Fatal(err)
	}
	caught := false
	for _, v := range planted.Violations {
		caught = caught || v.Check == "feature-merge"
		t.Logf("planted: %s: %s", v.Check, v.Detail)
	}
	if !caught {
		t.Fatalf("seed %d: feature-merge not caught with %s planted (violations %v)", seed, plant.GCNoMergeBase, planted.Violations)
	}
	if r := Execute(w.Generate(seed, "none"), testOpts); r.Failed() {
		t.Fatalf("seed %d plant-off: violations %v", seed, r.Violations)
	}
}
