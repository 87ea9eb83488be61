//go:build simplant

package maintain_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
)

// markerDeleteHookStore is listHookStore that runs after, once, when a delete (single
// or batched) of key has been forwarded.
type markerDeleteHookStore struct {
	*listHookStore
	key   string
	after func()
}

func (s *markerDeleteHookStore) Delete(ctx context.Context, key string) error {
	err := s.listHookStore.Delete(ctx, key)
	if key == s.key {
		s.fire()
	}
	return err
}

func (s *markerDeleteHookStore) DeleteMany(ctx context.Context, keys []string) []error {
	errs := objstore.DeleteMany(ctx, s.listHookStore, keys)
	if slices.Contains(keys, s.key) {
		s.fire()
	}
	return errs
}

func (s *markerDeleteHookStore) fire() {
	if h := s.after; h != nil {
		s.after = nil
		h()
	}
}

// With the planted bug "gc-marker-no-lookup" the marker sweep deletes the
// marker of a branch created after the collection listed the manifests
// without looking the name up, so between that delete and the re-check
// ListBranches misses a branch whose create was acknowledged. The correct
// build keeps the marker (TestCollectKeepsTheMarkerOfANameCreatedDuringIt,
// the control: it runs plant-off in this build too).
func TestPlantedGCMarkerNoLookupHidesANewBranch(t *testing.T) {
	if err := plant.Enable(plant.GCMarkerNoLookup); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
	f := newFixture(t)
	f.seed(f.branch("main"), 0)
	f.clock.Advance(time.Hour)
	hs := &markerDeleteHookStore{listHookStore: &listHookStore{Store: f.store, prefix: root + "/names/", suffix: "/names/late"}, key: root + "/names/late"}
	hs.hook = func() { f.fork("late", f.branch("main")) } // acknowledged before the marker sweep
	var between []string
	hs.after = func() {
		bs, err := f.reopen().Kernel().ListBranches(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			between = append(between, b.Name())
		}
	}
	m := f.maintainerOver(hs)
	rep, err := m.Collect(ctx, metaPolicy)
	if err != nil || !rep.Complete {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	if hs.after != nil {
		t.Fatalf("gc-marker-no-lookup did not delete late's marker: report %+v restored %d", rep.NameMarkers, rep.NameMarkersRestored)
	}
	if slices.Contains(between, "late") {
		t.Fatalf("ListBranches after late's marker was deleted: %v, want late missing", between)
	}
	// The re-check puts it back: the gap closes within the collection.
	if rep.NameMarkersRestored != 1 {
		t.Fatalf("restored %d markers, want late's", rep.NameMarkersRestored)
	}
	bs, err := f.reopen().Kernel().ListBranches(ctx)
	if err != nil || !slices.ContainsFunc(bs, func(b kernel.BranchRef) bool { return b.Name() == "late" }) {
		t.Fatalf("ListBranches after the collection: %v %v, want late listed again", bs, err)
	}
}
