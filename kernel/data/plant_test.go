//go:build simplant

package data

import (
	"errors"
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

// With the planted bug "adj-delta-skip" index lookups ignore the table
// version's adjacency delta: edges a small commit inserted vanish from Out
// and In (the simulator's read-consistency and reads-vs-model catch it),
// and a second @card(0..1) edge of a source whose first rides the delta
// commits. The plant-off control reads every edge and refuses the second.
func TestPlantedAdjDeltaSkipLosesDeltaEdges(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, store, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error {
		return tx.Insert("Knows", edge("k2", "p3", "p2"), edge("k3", "p3", "p1"))
	})
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("WorksAt", edge("w2", "p2", "c1")) })
	second := func() error {
		tx := begin(t, openGraph(t, store, 9))
		must(t, tx.Insert("WorksAt", edge("w3", "p2", "c2")))
		_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"})
		return err
	}
	out, err := snap(t, openGraph(t, store, 2)).Out(ctx, "Knows", "p3")
	if err != nil || len(out) != 2 {
		t.Fatalf("plant off: Out(p3) = %d edges, %v; want 2", len(out), err)
	}
	if err := second(); !errors.Is(err, ErrCardinality) {
		t.Fatalf("plant off: the second WorksAt of p2: %v, want ErrCardinality", err)
	}
	if err := plant.Enable(plant.AdjDeltaSkip); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = plant.Enable() }()
	out, err = snap(t, openGraph(t, store, 3)).Out(ctx, "Knows", "p3")
	if err != nil || len(out) != 0 {
		t.Fatalf("adj-delta-skip: Out(p3) = %d edges, %v; want the delta's edges lost", len(out), err)
	}
	if err := second(); err != nil {
		t.Fatalf("adj-delta-skip: the second WorksAt of p2 was refused (%v); want it committed past @card", err)
	}
}
