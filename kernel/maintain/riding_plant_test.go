//go:build simplant

package maintain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
)

// With the planted bug "gc-skips-riding" a collection marks the versions
// its root manifests pin but not what a version riding them names (no
// object of it is listed), so it deletes the retained head's fragments:
// its reads find them reclaimed. TestCollectMarksRidingVersions is the
// control.
func TestPlantedGCSkipsRidingLosesTheHead(t *testing.T) {
	if err := plant.Enable(plant.GCSkipsRiding); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
	withRiding(t)
	f := newObjectsFixture(t)
	cs := f.seed(f.branch("main"), 12)
	f.clock.Advance(10 * time.Minute)
	f.collect(policy)
	if _, err := f.reopenRead(cs[len(cs)-1].ID); !errors.Is(err, kernel.ErrReclaimed) {
		t.Fatalf("head after a collection that skips riding versions: %v, want ErrReclaimed (the planted bug went unseen)", err)
	}
}
