package data

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
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

// TestCompactionRacingSchemaChange: a schema change (a property added)
// and a row written under it publish while a compaction planned under the
// old schema is in its round. The compaction must not read the new
// version under its old schema (which called the store corrupt, found by
// simrun -procs maint, or could drop the new column's values): it plans
// again under the new schema, and the result holds the new row whole.
func TestCompactionRacingSchemaChange(t *testing.T) {
	store := &keyHookStore{Store: sim.New(sim.Config{Seed: 1})}
	g := paging(evoGraph(t, store))
	insertPeople(t, g, 0, 15)
	other := openGraph(t, store.Store, 9)
	store.match, store.hook = "/tables/Person/", func() {
		_, err := apply(t, other, withSchema(t, "age: int64? }", "age: int64?  email: string? }"), SchemaOptions{})
		must(t, err)
		commitTx(t, other, func(tx *Txn) error {
			return tx.Insert("Person", Row{ID: "p8", Props: map[string]any{"name": "amy", "email": "a@x"}})
		})
	}
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{MinFragments: 2})
	must(t, err)
	if store.hook != nil {
		t.Fatal("the race never ran")
	}
	if len(rep.Tables) != 1 || rep.Tables[0].Table != "Person" {
		t.Fatalf("report %+v", rep)
	}
	if v := propOf(t, g, "Person", "p8", "email"); v != "a@x" {
		t.Fatalf("p8's email after the compaction: %v", v)
	}
	if tv := pinnedVersion(t, g, "Person"); !tv.ContentPreserving {
		t.Fatalf("the compaction did not publish last: %+v", tv)
	}
}
