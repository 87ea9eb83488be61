package kernel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// refusedIndexStore refuses every commit-index Put definitely while on.
type refusedIndexStore struct {
	objstore.Store
	on bool
}

func (s *refusedIndexStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if s.on && strings.Contains(key, "/index/commits/") {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrRejected, nil)
	}
	return s.Store.Put(ctx, key, b, c)
}

// TestFailedCommitIndexWriteIsRepaired pins a deliberate exception of the
// no-swallowed-error rule (docs/invariants.md, "Errors dropped on
// purpose"; issue #32): the commit index follows the publish, so a write
// whose index write fails has still landed and reports its commit. The
// missing index is rebuilt from the manifests by the next handle that
// needs it: a read-only handle answers MergeBase without writing; the
// next writer's publish stores it, complete, at the commit's location,
// and its own index is complete too (without the repair the reach would
// be lost for every later commit of the branch).
func TestFailedCommitIndexWriteIsRepaired(t *testing.T) {
	store := &refusedIndexStore{Store: sim.New(sim.Config{Seed: 1})}
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	store.on = true
	lost := commitTable(t, g, main, "a", "2") // landed; its index write refused
	store.on = false
	keys := format.NewKeys(root)
	if _, err := store.Get(ctx, keys.CommitIndex(lost.ID)); err == nil {
		t.Fatal("the refused index write left an index")
	}
	ro := coldHandle(t, store)
	before := store.Store.(*sim.Store).Counters().Writes()
	if mb, err := ro.MergeBaseOf(ctx, lost.ID, lost.ID); err != nil || mb.ID != lost.ID {
		t.Fatalf("read-only MergeBaseOf over a missing index: %v, %v", mb.ID, err)
	}
	if w := store.Store.(*sim.Store).Counters().Writes(); w != before {
		t.Fatalf("a read-only handle wrote %d times repairing an index", w-before)
	}
	w, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	next := commitTable(t, w, mustBranch(t, w, "main"), "a", "3")
	requireCompleteIndexes(t, store, lost, next)
}

// TestIncompleteCommitIndexIsRepaired: an index written incomplete (its
// publisher could not read its parent's reach: that index lost and past
// the repair depth, or an input manifest gone) is a location aid but no
// reach; a handle needing the reach rebuilds it like a missing one, so
// the next publish stores both complete. Red before: a present
// incomplete index was taken as final, every later commit's index was
// written incomplete too, and merge bases walked the manifests for good.
func TestIncompleteCommitIndexIsRepaired(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	partial := commitTable(t, g, main, "a", "2")
	keys := format.NewKeys(root)
	obj, err := store.Get(ctx, keys.CommitIndex(partial.ID))
	if err != nil {
		t.Fatal(err)
	}
	x, _, err := format.DecodeCommitIndex(obj.Data)
	if err != nil || !x.Complete {
		t.Fatalf("index of %s as published: complete=%v (%v)", partial.ID, x.Complete, err)
	}
	x = format.CommitIndex{ID: x.ID, At: x.At} // as a publisher that could not read its parent's reach writes it
	b, err := format.EncodeCommitIndex(&x, format.Token{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, keys.CommitIndex(partial.ID), b, objstore.Unconditional); err != nil {
		t.Fatal(err)
	}
	w, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	next := commitTable(t, w, mustBranch(t, w, "main"), "a", "3")
	requireCompleteIndexes(t, store, partial, next)
}

// requireCompleteIndexes fails t unless each commit's index is stored,
// complete, at the commit's location.
func requireCompleteIndexes(t *testing.T, store objstore.Store, commits ...kernel.Commit) {
	t.Helper()
	keys := format.NewKeys(root)
	for _, c := range commits {
		obj, err := store.Get(ctx, keys.CommitIndex(c.ID))
		if err != nil {
			t.Fatalf("index of %s: %v", c.ID, err)
		}
		x, _, err := format.DecodeCommitIndex(obj.Data)
		at := format.ManifestRef{Branch: c.Branch, Incarnation: c.Incarnation, Version: c.ManifestVersion}
		if err != nil || !x.Complete || x.At != at {
			t.Fatalf("index of %s: complete=%v at %v, want complete at %v (%v)", c.ID, x.Complete, x.At, at, err)
		}
	}
}
