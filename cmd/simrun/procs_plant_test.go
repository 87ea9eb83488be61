//go:build simplant

package main

import (
	"testing"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// procsPlantCaught runs -procs -workload schema with planted bug name in
// every process (simrun passes -plant to the processes it starts) and
// checks that the run fails with a violation of one of the kinds want.
func procsPlantCaught(t *testing.T, name string, want ...string) {
	t.Cleanup(func() { _ = plant.Enable() }) // -plant switched it on in this process too
	code, out, errs := simrun(t, "-store", "fs:"+t.TempDir(), "-procs", "6", "-workload", "schema", "-plant", name, "-duration", "8s", "-json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (violations):\n%s%s", code, out, errs)
	}
	kinds, _ := decode(t, out)["violation_kinds"].(map[string]any)
	for _, k := range want {
		if n, _ := kinds[k].(float64); n > 0 {
			t.Logf("%s", out)
			return
		}
	}
	t.Fatalf("no %v violation with %s planted:\n%s", want, name, out)
}

// TestProcsSchemaPlantStaleSchemaValidate: with the schema gate removed
// (a write validated under one schema lands under another), real writer
// processes' commits land under a schema they were not staged under:
// schema-stale-commit.
func TestProcsSchemaPlantStaleSchemaValidate(t *testing.T) {
	procsPlantCaught(t, plant.StaleSchemaValidate, "schema-stale-commit")
}

// TestProcsSchemaPlantRenameAsDrop: with renames turned into a drop and
// an add, the values acknowledged writes gave their nodes are gone under
// the property's new name (schema-rename), or their nodes under the
// type's (lost-row), whichever rename came first.
func TestProcsSchemaPlantRenameAsDrop(t *testing.T) {
	procsPlantCaught(t, plant.RenameAsDrop, "schema-rename", "lost-row")
}

// TestProcsSchemaPlantCardTightenUnchecked: with a tightened @card not
// checked against the live edges, a changer's tightening lands while a
// hub has more out-edges than the new bound: the changer's read of the
// snapshot it published finds them (schema-card).
func TestProcsSchemaPlantCardTightenUnchecked(t *testing.T) {
	procsPlantCaught(t, plant.CardTightenUnchecked, "schema-card")
}
