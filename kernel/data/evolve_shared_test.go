package data

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestTxnBegunBeforeSchemaChangeOnSharedHandle: a transaction begun
// under the old schema commits after another transaction through the
// same handle (a service's goroutines share one) wrote a row under the
// new schema, so the handle's view — the live snapshot the commit
// validates on — holds a table version whose fragment carries statistics
// of the added property. The commit must fail with the retryable
// *kernel.SchemaChangedError, as when no such row exists
// (TestTxnBegunBeforeSchemaChange), not load the new version under its
// old schema and call the store corrupt (found by simrun -procs maint's
// group writer: "stats of column ...: unknown, repeated or out of order").
func TestTxnBegunBeforeSchemaChangeOnSharedHandle(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	stale := begin(t, g)
	must(t, stale.Insert("Person", person("p9", "zed")))
	ch, err := apply(t, g, withSchema(t, "age: int64? }", "age: int64?  email: string? }"), SchemaOptions{})
	must(t, err)
	commitTx(t, g, func(tx *Txn) error {
		return tx.Insert("Person", Row{ID: "p8", Props: map[string]any{"name": "amy", "email": "a@x"}})
	})
	_, err = stale.Commit(ctx, kernel.LineageIntent{Actor: "test"})
	var sc *kernel.SchemaChangedError
	if !errors.As(err, &sc) || sc.Expected != ch.From || sc.Actual != ch.To || !sc.Retryable() || errors.Is(err, kernel.ErrCorrupt) {
		t.Fatalf("stale commit = %v, want SchemaChangedError %s -> %s", err, ch.From, ch.To)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("p9", "zed")) }) // the retry lands
}
