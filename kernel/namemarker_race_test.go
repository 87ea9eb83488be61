package kernel_test

import (
	"context"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// vanishingMarker deletes the object at key just before the next read of
// it while armed: a collection deleting a name's marker (the name has no
// manifest) between a create-only write that found it and the writer's
// read-back (docs/gc.md rule 10).
type vanishingMarker struct {
	objstore.Store
	key   string
	armed bool
}

func (s *vanishingMarker) Get(ctx context.Context, key string) (objstore.Object, error) {
	if s.armed && key == s.key {
		s.armed = false
		if err := s.Store.Delete(ctx, key); err != nil {
			return objstore.Object{}, err
		}
	}
	return s.Store.Get(ctx, key)
}

// TestCreateBranchRewritesAMarkerDeletedMeanwhile: a branch create whose
// name marker write finds a marker (an earlier create's) that a collection
// then deletes before the read-back writes the marker again: the create
// succeeds and ListBranches lists the branch at once. Red before: the
// create failed with the create-only write's precondition error (and the
// same race on the write after the manifest left the name unlisted until
// the next collection).
func TestCreateBranchRewritesAMarkerDeletedMeanwhile(t *testing.T) {
	keys := format.NewKeys(root)
	store := &vanishingMarker{Store: sim.New(sim.Config{Seed: 1}), key: keys.NameMarker("f")}
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	if _, err := store.Store.Put(ctx, store.key, format.EncodeNameMarker("f", format.Token{7}), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	store.armed = true
	if _, err := g.CreateBranch(ctx, "f", main); err != nil {
		t.Fatalf("create with its marker deleted meanwhile: %v", err)
	}
	if store.armed {
		t.Fatal("the marker was never read back: the race was not exercised")
	}
	branches, err := g.ListBranches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, b := range branches {
		listed = listed || b.Name() == "f"
	}
	if !listed {
		t.Fatalf("ListBranches = %v right after the create, want f listed", branches)
	}
}
