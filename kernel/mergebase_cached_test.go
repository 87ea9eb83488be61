package kernel_test

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// TestMergeBaseOverACachedCollectedManifest: a handle's answer does not
// depend on what its manifest cache still holds of a collected manifest.
// The merge-base search sets a collected fold aside (found=false) and
// answers when an accepted candidate reaches it (docs/gc.md rule 3b, "why
// a later merge finds what it needs"). A handle that read that manifest
// before its collection, while its commit index was missing (an OS crash
// lost it: it is written unsynced), had it from its cache: the index was
// gone and could not be rebuilt (the manifest before it was collected
// too), so the search took the reach for unknown rather than collected,
// fell back to the ancestry walk and met the collected history
// (ErrReclaimed) where a cold handle answered. simrun -workload lifetime
// -faults oscrash -seed 163 (and -seed 7 with the genesis index written
// durably): the feature branch's merge base with main, after the feature
// branch had merged main in, through a fold naming a change branch merged
// and collected long before.
func TestMergeBaseOverACachedCollectedManifest(t *testing.T) {
	mergeBaseOverCollectedChange(t, 0)
}

// TestMergeBaseDuringTheCollectionOfAFold: a search that meets a manifest
// a running collection is deleting, after the manifest before it is gone
// and before it is, with its commit index lost (an OS crash), cannot
// rebuild its reach; the ancestry walk it fell back to must follow the
// same collected manifest, so it answered ErrReclaimed where a handle a
// moment later (the manifest gone, set aside) answers. Such a manifest is
// set aside as collected (reachLoader, reachInputsGone). simrun -workload
// lifetime -faults oscrash -seed 5 (format 11): the collection's manifest
// wave deleted the change branch's v0 before its v1.
func TestMergeBaseDuringTheCollectionOfAFold(t *testing.T) {
	mergeBaseOverCollectedChange(t, 1)
}

// mergeBaseOverCollectedChange builds a feature branch whose merge base
// with main goes through a fold naming a change branch's commit whose
// index is lost, collects the change branch's manifests but the newest
// upTo of them, and checks that a warm and a cold handle answer as
// before the collection.
func mergeBaseOverCollectedChange(t *testing.T, upTo uint64) {
	eachStore(t, func(t *testing.T, store objstore.Store) {
		g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: testEnv(1), ReachEntries: 4, ReachFolds: 2})
		if err != nil {
			t.Fatal(err)
		}
		main := mustBranch(t, g, "main")
		publish := func(b kernel.BranchRef, merged *kernel.CommitID) kernel.Commit {
			t.Helper()
			c, err := g.Publish(ctx, b, nil, kernel.LineageIntent{Actor: "t", MergedParent: merged}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		// change forks a branch from main, commits on it once and merges
		// it into main.
		change := func(name string) kernel.BranchRef {
			t.Helper()
			b, err := g.CreateBranch(ctx, name, main)
			if err != nil {
				t.Fatal(err)
			}
			c := publish(b, nil)
			publish(main, &c.ID)
			return b
		}
		publish(main, nil)
		feat, err := g.CreateBranch(ctx, "feat", main)
		if err != nil {
			t.Fatal(err)
		}
		publish(feat, nil)
		ch, err := g.CreateBranch(ctx, "ch", main)
		if err != nil {
			t.Fatal(err)
		}
		c1 := publish(ch, nil) // ch#1 v1: the manifest collected below
		for i := 0; i < 3; i++ {
			change(fmt.Sprintf("x%d", i))
		}
		mc := publish(main, &c1.ID) // compacts: main's folds name ch v1
		publish(feat, &mc.ID)       // no compaction: feat inherits the fold ch v1
		for i := 0; i < 4; i++ {
			change(fmt.Sprintf("y%d", i)) // main compacts again: ch v1 leaves its explicit entries
		}
		mj := mustHead(t, g, main)
		publish(feat, &mj.ID) // compacts: feat's folds are its previous manifest and main's
		change("z")
		want, err := coldHandle(t, store).MergeBase(ctx, feat, main)
		if err != nil || want.ID != mj.ID {
			t.Fatalf("before: merge base %s %v, want main's head merged into feat %s", want.ID, err, mj.ID)
		}

		// The index of ch's commit is lost (an OS crash), and a handle
		// reads ch's head manifest meanwhile (a log page of one commit;
		// in the simulator a merge-base search's read-ahead of folds it
		// then did not expand): it caches it, not the one before it.
		keys := format.NewKeys(root)
		if err := store.Delete(ctx, keys.CommitIndex(c1.ID)); err != nil {
			t.Fatal(err)
		}
		warm := coldHandle(t, store)
		if page, err := warm.Log(ctx, ch, "", 1); err != nil || len(page.Commits) != 1 || page.Commits[0].ID != c1.ID {
			t.Fatalf("log of ch: %+v %v", page, err)
		}
		// ch is deleted and a collection takes its manifests: its
		// tombstone stays as the incarnation's top.
		if err := g.DeleteBranch(ctx, "ch"); err != nil {
			t.Fatal(err)
		}
		for v := uint64(0); v <= c1.ManifestVersion-upTo; v++ {
			if err := store.Delete(ctx, keys.Manifest("ch", c1.Incarnation, v)); err != nil {
				t.Fatal(err)
			}
		}
		cold, err := coldHandle(t, store).MergeBase(ctx, feat, main)
		if err != nil || cold.ID != want.ID {
			t.Fatalf("a cold handle after the collection: merge base %s %v, want %s", cold.ID, err, want.ID)
		}
		got, err := warm.MergeBase(ctx, feat, main)
		if err != nil || got.ID != want.ID {
			t.Fatalf("a handle that cached the collected manifest: merge base %s %v, want %s (as a cold handle answers)", got.ID, err, want.ID)
		}
	})
}

// mustHead returns b's head commit.
func mustHead(t *testing.T, g *kernel.Graph, b kernel.BranchRef) kernel.Commit {
	t.Helper()
	c, err := g.Head(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
