package kernel_test

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestMergeBaseOfIsRemembered: a handle answers MergeBaseOf of a pair of
// commits it answered before without reading the lineage again, even
// after its caches of manifests and indexes lost them. The merge base of
// two commits is a function of immutable history. Before, a long-lived
// branch whose merge base walks more folds than the handle's manifest
// cache holds (4,096) read them all again on every attempt: in
// lifetime-10k seed 3 each attempt of the feature branch's final merge
// took past the grace period and every retry was refused
// (GraceExpiredError) the same way.
func TestMergeBaseOfIsRemembered(t *testing.T) {
	cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
	g, head, fc := laggingBranch(t, cs, 40)
	g.DropCachesForTest()
	before := cs.Counts()
	first, err := g.MergeBaseOf(ctx, head.ID, fc.ID)
	if err != nil {
		t.Fatal(err)
	}
	walk := diff(cs.Counts(), before)
	if walk.Get.Requests < 10 {
		t.Fatalf("the first merge base read %d objects: the history is too short to need a walk", walk.Get.Requests)
	}
	g.DropCachesForTest()
	before = cs.Counts()
	again, err := g.MergeBaseOf(ctx, head.ID, fc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID {
		t.Fatalf("merge base again %+v, first %+v", again, first)
	}
	if n := diff(cs.Counts(), before).Requests(); n != 0 {
		t.Fatalf("the same merge base again took %d requests (the first %d), want 0", n, walk.Requests())
	}
	if rev, err := g.MergeBaseOf(ctx, fc.ID, head.ID); err != nil || rev.ID != first.ID {
		t.Fatalf("merge base with the heads swapped: %+v %v, want %+v", rev, err, first)
	}
}

// laggingBranch makes, on store, a graph with the smallest reach bounds
// (2/2) whose branch feat was forked from main at the start and committed
// on once, while main merged n changes, each forked from main's head and
// committed on once; feat never takes main in, so their merge base walks
// main's folds since the fork. It returns the handle, main's head and
// feat's commit.
func laggingBranch(t *testing.T, store objstore.Store, n int) (*kernel.Graph, kernel.Commit, kernel.Commit) {
	t.Helper()
	g, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: testEnv(1), ReachEntries: 2, ReachFolds: 2})
	if err != nil {
		t.Fatal(err)
	}
	feat, err := g.CreateBranch(ctx, "feat", mustBranch(t, g, "main"))
	if err != nil {
		t.Fatal(err)
	}
	fc, err := g.Publish(ctx, feat, nil, kernel.LineageIntent{Actor: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var head kernel.Commit
	for i := 0; i < n; i++ {
		ch, err := g.CreateBranch(ctx, fmt.Sprintf("c%d", i), mustBranch(t, g, "main"))
		if err != nil {
			t.Fatal(err)
		}
		cc, err := g.Publish(ctx, ch, nil, kernel.LineageIntent{Actor: "t"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if head, err = g.Publish(ctx, mustBranch(t, g, "main"), nil, kernel.LineageIntent{Actor: "t", MergedParent: &cc.ID}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return g, head, fc
}
