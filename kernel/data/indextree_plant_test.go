//go:build simplant

package data

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// With the planted bug "page-skip", an adjacency lookup on an index tree
// skips the last ref chunk holding the node: Out of a node whose edges
// sit under a ref chunk loses them (the simulator's reads-vs-model
// catches it: every simulated handle writes trees, IndexFanout 4). The
// plant-off control reads every edge.
func TestPlantedPageSkipLosesTreeEdges(t *testing.T) {
	treeHandles(t)
	noAdjDelta(t) // the edges must sit in the tree's pages, not ride a delta
	store := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, store, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error {
		for i := range 12 {
			if err := tx.Insert("Knows", edge(fmt.Sprintf("k%02d", i+2), "p3", "p2")); err != nil {
				return err
			}
		}
		return nil
	})
	out, err := snap(t, openGraph(t, store, 2)).Out(ctx, "Knows", "p3")
	if err != nil || len(out) != 12 {
		t.Fatalf("plant off: Out(p3) = %d edges, %v; want 12", len(out), err)
	}
	if err := plant.Enable(plant.PageSkip); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	out, err = snap(t, openGraph(t, store, 3)).Out(ctx, "Knows", "p3")
	if err != nil || len(out) == 12 {
		t.Fatalf("page-skip: Out(p3) = %d edges, %v; want edges lost", len(out), err)
	}
}
