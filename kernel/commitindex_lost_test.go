package kernel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// droppedIndexStore fails the next n commit-index Puts ambiguously without
// applying them: a store's timeout on a write that never happened.
type droppedIndexStore struct {
	objstore.Store
	n int
}

func (s *droppedIndexStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if s.n > 0 && strings.Contains(key, "/index/commits/") {
		s.n--
		return "", objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient, errors.New("timeout, not applied"))
	}
	return s.Store.Put(ctx, key, b, c)
}

// TestLostCommitIndexWriteIsReadBack: a commit-index write whose outcome
// is ambiguous is resolved by reading back (house rule 3), not guessed as
// written. Without that, the landed commit has no index, every later
// commit of the branch builds on a reach it cannot read (its index is
// incomplete for good), and MergeBase walks the whole history — which
// fails with ErrReclaimed after any collection — and a collection cannot
// keep the branch's merge bases.
func TestLostCommitIndexWriteIsReadBack(t *testing.T) {
	store := &droppedIndexStore{Store: sim.New(sim.Config{Seed: 1})}
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	f, err := g.CreateBranch(ctx, "f", main)
	if err != nil {
		t.Fatal(err)
	}
	store.n = 1
	lost := commitTable(t, g, main, "a", "2")
	later := commitTable(t, g, main, "a", "3")
	fh := commitTable(t, g, f, "b", "f1")
	keys := format.NewKeys(root)
	for _, c := range []kernel.Commit{lost, later} {
		obj, err := store.Get(ctx, keys.CommitIndex(c.ID))
		if err != nil {
			t.Fatalf("index of %s after an ambiguous write: %v", c.ID, err)
		}
		x, _, err := format.DecodeCommitIndex(obj.Data)
		if err != nil || !x.Complete {
			t.Fatalf("index of %s: complete=%v %v, want a complete index", c.ID, x.Complete, err)
		}
	}
	if _, ok, err := coldHandle(t, store).MergeBaseByReachForTest(ctx, later.ID, fh.ID); err != nil || !ok {
		t.Fatalf("merge base by reach: ok=%v %v, want answered from the reaches", ok, err)
	}
}
