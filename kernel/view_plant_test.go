//go:build simplant

package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// With the planted bug "stale-view-commit" a publish on a stale view whose
// manifest write fails is written again at the next slot, still built on
// the stale head: its first parent is not the racer, which the simulator's
// linear-chain checker must catch (the correct build re-parents:
// TestStaleViewPublishReparents).
func TestPlantedStaleViewCommitSkipsTheRacer(t *testing.T) {
	enablePlant(t, plant.StaleViewCommit)
	store := sim.New(sim.Config{Seed: 1})
	mustInit(t, store, 1)
	g, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(2)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	if _, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "g"}, nil); err != nil {
		t.Fatal(err)
	}
	racer, err := other.Publish(ctx, mustBranch(t, other, "main"), nil, kernel.LineageIntent{Actor: "other"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ours.ManifestVersion != racer.ManifestVersion+1 || len(ours.Parents) != 1 || ours.Parents[0] == racer.ID {
		t.Fatalf("stale-view-commit did not skip the racer: ours v%d parents %v, racer %s v%d", ours.ManifestVersion, ours.Parents, racer.ID, racer.ManifestVersion)
	}
}
