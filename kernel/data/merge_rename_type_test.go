package data_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// omniRenamed is omniSchema with Person renamed to to.
func omniRenamed(to string) string {
	return `node ` + to + ` { name: string age: int64? } node Company { name: string } node Tag { label: string? }
edge WorksAt: ` + to + ` -> Company { since: int64? }`
}

func (o *omni) renameType(b kernel.BranchRef, from, to string) {
	o.t.Helper()
	s, err := schema.Parse([]byte(omniRenamed(to)))
	if err != nil {
		o.t.Fatal(err)
	}
	if _, err := o.g.ApplySchema(context.Background(), b, s, kernel.LineageIntent{Actor: "test", Message: "rename"},
		data.SchemaOptions{TypeRenames: []schema.TypeRename{{From: from, To: to}}}); err != nil {
		o.t.Fatalf("rename %s -> %s on %s: %v", from, to, b, err)
	}
}

// TestMergeTypeRenameMeetsRows: a type renamed on one side while the other
// side writes rows of it (under the old name, in the same storage table):
// the merge, either way, publishes the renamed type holding both sides'
// rows, its edges resolving, and verify is clean.
func TestMergeTypeRenameMeetsRows(t *testing.T) {
	for _, renameOnFeature := range []bool{true, false} {
		o := newOmni(t)
		renamer, writer := o.feature, o.main
		if !renameOnFeature {
			renamer, writer = o.main, o.feature
		}
		o.renameType(renamer, "Person", "Human")
		o.commit(writer, func(tx *data.Txn) error {
			return errors.Join(tx.Insert("Person", data.Row{ID: "p3", Props: map[string]any{"name": "cy"}}),
				tx.Update("Person", data.Row{ID: "p2", Props: map[string]any{"name": "robert"}}),
				tx.Insert("WorksAt", data.Row{ID: "w3", From: "p3", To: "c2"}))
		})
		if _, err := o.merge(); err != nil {
			t.Fatalf("rename on feature %v: merge: %v", renameOnFeature, err)
		}
		for id, want := range map[string]string{"p1": "ann", "p2": "robert", "p3": "cy"} { //detlint:ordered independent checks
			if got := o.get("Human", id); got["name"] != want {
				t.Errorf("rename on feature %v: Human %s = %v, want %q", renameOnFeature, id, got, want)
			}
		}
		s, err := o.g.SnapshotAt(context.Background(), o.main)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := s.Out(context.Background(), "WorksAt", "p3"); err != nil || len(out) != 1 || out[0].To != "c2" {
			t.Fatalf("rename on feature %v: Out(WorksAt, p3) = %v, %v", renameOnFeature, out, err)
		}
		if _, _, err := s.Get(context.Background(), "Person", "p1"); !errors.Is(err, data.ErrUnknownType) {
			t.Fatalf("rename on feature %v: Person still a type: %v", renameOnFeature, err)
		}
		o.verify()
	}
}

// TestMergeTypeRenamedDifferently: a type renamed to two names on the two
// sides is a typed schema conflict (DivergentTypeName); nothing is
// published.
func TestMergeTypeRenamedDifferently(t *testing.T) {
	o := newOmni(t)
	o.renameType(o.feature, "Person", "Human")
	o.renameType(o.main, "Person", "People")
	before := o.head()
	_, err := o.merge()
	var ce *data.MergeConflictError
	if !errors.Is(err, data.ErrSchemaConflict) || !errors.As(err, &ce) {
		t.Fatalf("merge = %v, want a schema conflict", err)
	}
	if len(ce.Conflicts) != 1 || ce.Conflicts[0].Kind != merge.SchemaConflict || ce.Conflicts[0].Rule != merge.DivergentTypeName || ce.Conflicts[0].Type != "Person" {
		t.Fatalf("conflicts %v, want one DivergentTypeName of Person", ce.Conflicts)
	}
	if o.head() != before {
		t.Fatal("a refused merge published")
	}
}
