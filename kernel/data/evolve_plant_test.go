//go:build simplant

package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// The schema-evolution plants. Each test switches one on and shows the
// symptom its checker looks for; the plant-off controls are the ordinary
// tests named in each comment, which assert the opposite on the same
// scenario.
func withPlant(t *testing.T, name string) {
	t.Helper()
	if err := plant.Enable(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plant.Enable() })
}

// stale-schema-validate: the transaction begun under @card(0..*) commits
// after the change to @card(0..1) and leaves p2 with two edges (control:
// TestStaleTxnCannotBreakTightenedCard).
func TestPlantedStaleSchemaValidate(t *testing.T) {
	withPlant(t, plant.StaleSchemaValidate)
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("WorksAt", "w2") })
	tx := begin(t, g)
	must(t, tx.Insert("WorksAt", edge("w9", "p2", "c2")))
	_, err := apply(t, g, withSchema(t, "-> Company {", "-> Company @card(0..1) {"), SchemaOptions{})
	must(t, err)
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); err != nil {
		t.Fatalf("stale-schema-validate: commit = %v, want it accepted on the stale schema", err)
	}
	if v := cardViolation(t, g, "WorksAt"); v == "" {
		t.Fatal("stale-schema-validate: no @card violation: the planted bug is not observable")
	}
}

// rename-as-drop: the renamed property reads null (control: the "rename
// property keeps the data" case of TestApplySchemaChanges).
func TestPlantedRenameAsDrop(t *testing.T) {
	withPlant(t, plant.RenameAsDrop)
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	_, err := apply(t, g, withSchema(t, "age: int64? }", "years: int64? }"),
		SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "age", To: "years"}}})
	must(t, err)
	if got := scanProp(t, g, "Person", "years"); got == "p1=31,p2=42,p3=null" {
		t.Fatal("rename-as-drop: the renamed data survived: the planted bug is not observable")
	}
}

// card-tighten-unchecked: @card(0..1) lands over p1's two edges (control:
// the "card tightening violated by live edges is refused" case).
func TestPlantedCardTightenUnchecked(t *testing.T) {
	withPlant(t, plant.CardTightenUnchecked)
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	if _, err := apply(t, g, withSchema(t, "-> Company {", "-> Company @card(0..1) {"), SchemaOptions{}); err != nil {
		t.Fatalf("card-tighten-unchecked: apply = %v, want it accepted unchecked", err)
	}
	if v := cardViolation(t, g, "WorksAt"); v == "" {
		t.Fatal("card-tighten-unchecked: no @card violation: the planted bug is not observable")
	}
}

// rename-as-drop, type renames: a renamed type takes a fresh table, so it
// reads empty (control: TestApplySchemaTypeRename).
func TestPlantedTypeRenameAsDrop(t *testing.T) {
	withPlant(t, plant.RenameAsDrop)
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	_, err := apply(t, g, renamedSchemaText, SchemaOptions{TypeRenames: personToHuman})
	must(t, err)
	if got := scanProp(t, g, "Human", "name"); got == "p1=ann,p2=bob,p3=cy" {
		t.Fatal("rename-as-drop: the renamed type's rows survived: the planted bug is not observable")
	}
}
