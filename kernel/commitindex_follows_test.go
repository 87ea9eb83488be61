package kernel_test

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestCommitIndexFollowsThePublish: a publish's commit index is written
// deferred and synced by nothing (kernel publishWrite), so on fs a commit
// fsyncs its table version and its manifest, not the index (issue #32).
// On the simulator's deferring view (the OS-crash model) the index of a
// published commit is still volatile while its manifest is durable; an
// OS crash then loses it, and nothing else: a cold handle finds the
// commit (by walking the manifests), Maintain's RepairHeadIndex rebuilds
// the head's index, and the next commit's index is complete. Red if the
// manifest waits for the index again (the index is synced with it).
func TestCommitIndexFollowsThePublish(t *testing.T) {
	base := sim.New(sim.Config{Seed: 1})
	store := base.Deferring()
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1")
	c := commitTable(t, g, main, "a", "2")
	keys := format.NewKeys(root)
	index := keys.CommitIndex(c.ID)
	if !base.IsVolatile(index) {
		t.Fatalf("the index of a published commit is durable with its manifest: the publish waited for it")
	}
	if m := keys.Manifest(c.Branch, c.Incarnation, c.ManifestVersion); base.IsVolatile(m) {
		t.Fatalf("the manifest %s of an acknowledged commit is volatile", m)
	}
	base.MachineCrash(0, 0) // every volatile object lost
	if _, err := store.Get(ctx, index); err == nil {
		t.Fatal("the crash kept the unsynced index")
	}
	if got, err := coldHandle(t, store).Commit(ctx, c.ID); err != nil || got.ID != c.ID {
		t.Fatalf("Commit(%s) after the crash: %v %v", c.ID, got.ID, err)
	}
	w, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(3)})
	if err != nil {
		t.Fatal(err)
	}
	if repaired, err := w.RepairHeadIndex(ctx, mustBranch(t, w, "main")); err != nil || !repaired {
		t.Fatalf("RepairHeadIndex after the crash: %v %v, want repaired", repaired, err)
	}
	requireCompleteIndexes(t, store, c, commitTable(t, w, mustBranch(t, w, "main"), "a", "3"))
}

// TestEveryIndexSyncEveryThIndexIsDurable: the index of every 64th commit
// of a branch is made durable (the manifest syncs it first), so an OS
// crash leaves at most 63 commits in a row of one writer without an
// index, within what a repair rebuilds, whatever the OS wrote back. Red
// without indexDurable: every index volatile.
func TestEveryIndexSyncEveryThIndexIsDurable(t *testing.T) {
	base := sim.New(sim.Config{Seed: 1})
	store := base.Deferring()
	durable, longest := indexDurability(t, base, []*kernel.Graph{mustInit(t, store, 1)}, 200)
	if durable < 3 || longest > 63 {
		t.Fatalf("of 200 commits' indexes %d durable, longest volatile run %d; want every 64th durable (>= 3, runs <= 63)", durable, longest)
	}
}

// TestIndexSyncBoundsTheBranchNotTheHandle: the commit whose manifest
// version is a multiple of 64 has its index made durable, whichever handle
// wrote it, so an OS crash leaves at most 63 commits in a row of a branch
// without an index however many writers interleave on it (within the
// collector's rebuild depth, 256). Red with a per-handle count: five
// writers taking turns make a run of 5x63.
func TestIndexSyncBoundsTheBranchNotTheHandle(t *testing.T) {
	base := sim.New(sim.Config{Seed: 1})
	store := base.Deferring()
	writers := []*kernel.Graph{mustInit(t, store, 1)}
	for i := range 4 {
		w, err := kernel.Open(ctx, store, root, kernel.Options{Env: testEnv(uint64(10 + i))})
		if err != nil {
			t.Fatal(err)
		}
		writers = append(writers, w)
	}
	durable, longest := indexDurability(t, base, writers, 400)
	if durable < 6 || longest > 63 {
		t.Fatalf("of 400 commits by 5 interleaved writers %d indexes durable, longest volatile run %d; want every 64th commit of the branch durable (>= 6, runs <= 63)", durable, longest)
	}
}

// indexDurability commits n times on main, the writers taking turns, and
// returns how many of the commits' indexes are durable on base's
// deferring view and the longest run of commits in a row whose indexes
// are volatile.
func indexDurability(t *testing.T, base *sim.Store, writers []*kernel.Graph, n int) (durable, longest int) {
	t.Helper()
	main := mustBranch(t, writers[0], "main")
	keys := format.NewKeys(root)
	run := 0
	for i := range n {
		c := commitTable(t, writers[i%len(writers)], main, "a", fmt.Sprint(i))
		if base.IsVolatile(keys.CommitIndex(c.ID)) {
			run++
			longest = max(longest, run)
			continue
		}
		durable, run = durable+1, 0
	}
	return durable, longest
}
