//go:build simplant

package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// With the planted bug "stale-card" cardinality is counted on the
// transaction's pinned base instead of the table's live HEAD: in the
// stale-handle case (TestStaleHandleCardinality, where the correct build
// rejects B) stale handle B's second WorksAt edge of p2 commits, and p2
// ends with 2 out-edges under @card(0..1) — which the simulator's
// cardinality checker must catch.
func TestPlantedStaleCardExceedsCardinality(t *testing.T) {
	if err := plant.Enable(plant.StaleCard); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	store := sim.New(sim.Config{Seed: 1})
	a := initGraph(t, store, Limits{})
	seedGraph(t, a)
	b := openGraph(t, store, 2)
	txB := begin(t, b) // pinned before A's edge exists
	commitTx(t, a, func(tx *Txn) error { return tx.Insert("WorksAt", edge("w2", "p2", "c1")) })
	must(t, txB.Insert("WorksAt", edge("w3", "p2", "c2")))
	if _, err := txB.Commit(ctx, kernel.LineageIntent{Actor: "b"}); err != nil {
		t.Fatalf("stale-card: B's commit = %v, want it accepted on the stale count", err)
	}
	s := snap(t, a)
	out, err := s.Out(ctx, "WorksAt", "p2")
	must(t, err)
	wa, err := s.Table("WorksAt")
	must(t, err)
	if wa.Card.Allows(uint64(len(out))) {
		t.Fatalf("p2 has %d WorksAt edges (%s), within @card(%s): the planted bug is not observable", len(out), ids(out), wa.Card)
	}
}
