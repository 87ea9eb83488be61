package data

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestRecoveryNeverRollsForwardAcrossASchemaChange: a transaction
// validated under @card(0..*) crashes after its table versions are
// committed, before its publish; a change to @card(0..1) lands (the
// crashed write is not pinned, so the live edges allow it); recovery must
// roll the write back — rolled forward, its second edge of p2 would break
// the new bound.
func TestRecoveryNeverRollsForwardAcrossASchemaChange(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	g := evoGraph(t, store)
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("WorksAt", "w2") })
	w := crashingCounterHandle(t, store, failpoint.BeforePublish)
	tx, err := w.Begin(ctx, mainRef(t, w))
	must(t, err)
	must(t, tx.Insert("WorksAt", edge("w9", "p2", "c2")))
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "crashing"}); !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("commit = %v, want the crash", err)
	}
	if _, err := apply(t, g, withSchema(t, "-> Company {", "-> Company @card(0..1) {"), SchemaOptions{}); err != nil {
		t.Fatal(err)
	}
	r := recoverOnce(t, store, format.DecisionRollBack)
	checkCardHolds(t, r, "WorksAt")
}
