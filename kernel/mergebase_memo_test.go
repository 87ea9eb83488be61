package kernel_test

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
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
	g, err := kernel.Init(ctx, cs, root, schema, kernel.Options{Env: testEnv(1), ReachEntries: 2, ReachFolds: 2})
	if err != nil {
		t.Fatal(err)
	}
	main := mustBranch(t, g, "main")
	feat, err := g.CreateBranch(ctx, "feat", main)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := g.Publish(ctx, feat, nil, kernel.LineageIntent{Actor: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var head kernel.Commit
	for i := 0; i < 40; i++ { // main merges 40 changes; feat never takes main in
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
