//go:build simplant

package workload

import (
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/sim/check"
)

// TestPinRaceCatchesPinLeaseReadOnce pins how often the maint workload
// reaches the race of docs/gc.md rule 6 (a Pin between a collection's
// first lease listing and its plan): with pin-lease-read-once on, most of
// seeds 1..8 report pin-held (8 of 8 when gpinrace landed; 97 of seeds
// 1..100). TestPlantedBugsCaught stops at the first catch and replays the
// plant-off control. Red with r1 running gread instead of gpinrace (0 of
// 8; without gpinrace no seed below 170 caught it).
func TestPinRaceCatchesPinLeaseReadOnce(t *testing.T) {
	const seeds, want = 8, 6
	if err := plant.Enable(plant.PinLeaseReadOnce); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	w, _ := Lookup("maint")
	caught := make([]bool, seeds)
	parallelSeeds(seeds, func(int) bool { return false }, func(i int) {
		caught[i] = slices.ContainsFunc(Execute(w.Generate(uint64(i)+1, "default"), testOpts).Violations, func(v check.Violation) bool { return v.Check == "pin-held" })
	})
	n := 0
	for _, c := range caught {
		if c {
			n++
		}
	}
	t.Logf("pin-held in %d of maint seeds 1..%d: %v", n, seeds, caught)
	if n < want {
		t.Fatalf("pin-lease-read-once caught by %d of maint seeds 1..%d, want at least %d: the workload's pins race collections less often", n, seeds, want)
	}
}
