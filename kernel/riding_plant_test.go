//go:build simplant

package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// With the planted bug "riding-dropped" a publish carries a pin over from
// the head without its riding payload (format 11), so the manifest names
// a version no object holds: a reader of that table finds it reclaimed.
// TestRidingWriteWritesNoVersionObject is the control (a's pin is carried
// over whole).
func TestPlantedRidingDroppedLosesTheTable(t *testing.T) {
	if err := plant.Enable(plant.RidingDropped); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
	st := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, st, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	commitTable(t, g, main, "b", "1")
	if _, err := coldHandle(t, st).ReadPinned(ctx, headPin(t, st, "a")); !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("a after a write on b that dropped its payload: %v, want ErrReclaimed (the planted bug went unseen)", err)
	}
}

// With the planted bug "riding-unchecked" a publish skips the riding
// budget's re-check on the head it builds on, so the racing write of
// TestRidingBudgetRaceRedoesTheRound (the control) lands c riding beside
// a and b: the head carries more riding bytes than the writers' budget,
// and no round is redone.
func TestPlantedRidingUncheckedGoesOverBudget(t *testing.T) {
	if err := plant.Enable(plant.RidingUnchecked); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
	st := sim.New(sim.Config{Seed: 1})
	riders := raceOverBudget(t, st)
	if n := format.RidingBytes(headManifestPins(t, st)); n <= smallBudget.ManifestBytes || riders.Hits(failpoint.RidingRedo) != 0 {
		t.Fatalf("head riding bytes %d (budget %d), %d rounds redone: the planted bug went unseen", n, smallBudget.ManifestBytes, riders.Hits(failpoint.RidingRedo))
	}
}
