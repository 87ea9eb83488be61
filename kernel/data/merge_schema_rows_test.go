package data_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// TestMergeListsRowConflictsBesideSchemaConflicts: a merge refused for a
// schema conflict on one type (Person.age renamed to two names) still
// lists the row conflicts of the types the schema conflict leaves
// comparable (Company c1's name changed on both sides), in the same
// *MergeConflictError; the conflicted type's rows are not compared (p1
// changed on both sides is not listed); a Prefer policy resolves the row
// conflicts it names, never the schema conflict; nothing is published.
func TestMergeListsRowConflictsBesideSchemaConflicts(t *testing.T) {
	for _, prefer := range []merge.Policy{{}, merge.PreferAll(merge.PreferSource)} {
		o := newOmni(t)
		o.applySchema(o.main, `node Person { name: string years: int64? } node Company { name: string } node Tag { label: string? }
edge WorksAt: Person -> Company { since: int64? }`, schema.Rename{Type: "Person", From: "age", To: "years"})
		o.applySchema(o.feature, `node Person { name: string yrs: int64? } node Company { name: string } node Tag { label: string? }
edge WorksAt: Person -> Company { since: int64? }`, schema.Rename{Type: "Person", From: "age", To: "yrs"})
		for b, name := range map[string]string{"main": "acme main", "feature": "acme feature"} { //detlint:ordered two independent branches
			ref := o.main
			if b == "feature" {
				ref = o.feature
			}
			o.commit(ref, func(tx *data.Txn) error {
				return errors.Join(tx.Update("Company", data.Row{ID: "c1", Props: map[string]any{"name": name}}),
					tx.Update("Person", data.Row{ID: "p1", Props: map[string]any{"name": name}}))
			})
		}
		before := o.head()
		res, err := o.g.Merge(t.Context(), o.feature, o.main, kernel.LineageIntent{Actor: "test", Message: "merge"}, data.MergeOptions{Prefer: prefer})
		var ce *data.MergeConflictError
		if !errors.Is(err, data.ErrSchemaConflict) || !errors.As(err, &ce) {
			t.Fatalf("merge = %v, want a schema conflict", err)
		}
		var got []string
		for _, c := range ce.Conflicts {
			got = append(got, c.Kind.String()+" "+c.Type+" "+c.ID)
		}
		want := []string{merge.DivergentUpdate.String() + " Company c1", merge.SchemaConflict.String() + " Person "} // merge.SortConflicts' order
		if prefer != (merge.Policy{}) {
			want = want[1:]
			if len(res.Resolved) != 1 || res.Resolved[0].ID != "c1" {
				t.Errorf("prefer source: resolved %v", res.Resolved)
			}
		}
		if !cmp.Equal(got, want) || !cmp.Equal(res.Conflicts, ce.Conflicts) {
			t.Fatalf("conflicts %q (result %v), want %q", got, res.Conflicts, want)
		}
		if o.head() != before {
			t.Fatal("a conflicting merge published")
		}
	}
}
