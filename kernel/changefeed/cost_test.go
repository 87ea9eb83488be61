package changefeed

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestPollCostIsFlatInDepth: polling one commit after a cursor costs the
// same requests on a cold handle whether the branch has 10 or 400 commits
// before it — the chain is walked forward from the cursor's manifest,
// never from the head back or from the beginning.
func TestPollCostIsFlatInDepth(t *testing.T) {
	var costs []uint64
	for _, depth := range []int{10, 400} {
		cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 16)
		g := initGraph(t, cs, "g")
		commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Insert("Person", person("p0", "x")) })
		for range depth {
			_, err := g.Kernel().Publish(ctx, branch(t, g, "main"), nil, kernel.LineageIntent{Actor: "t", Message: "empty"}, nil)
			must(t, err)
		}
		last, err := g.Kernel().Head(ctx, branch(t, g, "main"))
		must(t, err)
		commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Update("Person", person("p0", "y")) })
		_, cursor := pollAll(t, New(g), "main", AfterCommit(last.ID), feed.Limits{})

		commitOn(t, g, "main", func(tx *data.Txn) error { return tx.Update("Person", person("p0", "z")) })
		cold, err := data.Open(ctx, cs, "g", data.Options{Kernel: kernel.Options{Env: testEnv(7), ReadOnly: true}})
		must(t, err)
		before := cs.Counts()
		p, err := New(cold).Poll(ctx, "main", FromToken(cursor), feed.Filter{}, feed.Limits{})
		must(t, err)
		after := cs.Counts()
		if len(p.Blocks) != 1 || len(p.Blocks[0].Changes) != 1 || !p.CaughtUp {
			t.Fatalf("depth %d: %v", depth, blockIDs(p.Blocks))
		}
		costs = append(costs, after.Get.Requests+after.List.Requests+after.Head.Requests-
			before.Get.Requests-before.List.Requests-before.Head.Requests)
	}
	if costs[0] != costs[1] {
		t.Fatalf("poll of one commit after a cursor: %d requests at depth 10, %d at depth 400", costs[0], costs[1])
	}
	t.Logf("poll of one commit after a cursor, cold handle: %d requests at both depths", costs[0])
}
