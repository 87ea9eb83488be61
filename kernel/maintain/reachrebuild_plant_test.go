//go:build simplant

package maintain_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
)

// TestPlantedNoReachRebuildLosesMergeBases: with planted bug
// gc-no-reach-rebuild a collection takes a reach whose commit index is
// gone as unknown instead of rebuilding it, so it deletes the merge bases
// of heads whose indexes a crash lost, and the merges after it fail with
// ErrReclaimed; TestCollectKeepsMergeBasesWithoutCommitIndexes is the
// control (the same scenario, plant off, passes).
func TestPlantedNoReachRebuildLosesMergeBases(t *testing.T) {
	if err := plant.Enable(plant.GCNoReachRebuild); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
	err := collectMergeBases(t, newFixture(t), lossHooks{lose: func(f *fixture) { deleteCommitIndexes(t, f) }})
	if !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("with %s planted the merge base after the collection: %v, want ErrReclaimed", plant.GCNoReachRebuild, err)
	}
}
