package data_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/internal/verify"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// The Omnigraph schema cases (issue #29, rule S10), through the public API
// on the sim store: each starts from omniSchema with p1 -> c1 (w1) and p2
// on main and a feature branch forked there.

const omniSchema = `
node Person  { name: string  age: int64? }
node Company { name: string }
node Tag     { label: string? }
edge WorksAt: Person -> Company { since: int64? }
`

type omni struct {
	t             *testing.T
	store         objstore.Store
	g             *data.Graph
	main, feature kernel.BranchRef
}

var omniEpoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func omniEnv() kernel.Env {
	return kernel.Env{Clock: kernel.NewManualClock(omniEpoch), Entropy: rand.NewChaCha8([32]byte{7})}
}

// verify runs graphkernel verify's checks on the graph: every fragment
// read through the schema of a manifest that pins it.
func (o *omni) verify() {
	o.t.Helper()
	rep, err := verify.Graph(context.Background(), o.store, "omni", omniEnv(), omniEpoch, 10)
	if err != nil {
		o.t.Fatal(err)
	}
	if len(rep.Problems) > 0 {
		o.t.Fatalf("verify: %v", rep.Problems)
	}
}

func newOmni(t *testing.T) *omni {
	t.Helper()
	ctx := context.Background()
	s, err := schema.Parse([]byte(omniSchema))
	if err != nil {
		t.Fatal(err)
	}
	store := sim.New(sim.Config{Seed: 7})
	g, err := data.Init(ctx, store, "omni", s, data.Options{Kernel: kernel.Options{Env: omniEnv()}})
	if err != nil {
		t.Fatal(err)
	}
	o := &omni{t: t, store: store, g: g}
	if o.main, err = g.Branch(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	o.commit(o.main, func(tx *data.Txn) error {
		return errors.Join(
			tx.Insert("Person", data.Row{ID: "p1", Props: map[string]any{"name": "ann"}}, data.Row{ID: "p2", Props: map[string]any{"name": "bob"}}),
			tx.Insert("Company", data.Row{ID: "c1", Props: map[string]any{"name": "acme"}}, data.Row{ID: "c2", Props: map[string]any{"name": "initech"}}),
			tx.Insert("WorksAt", data.Row{ID: "w1", From: "p1", To: "c1"}))
	})
	if o.feature, err = g.Kernel().CreateBranch(ctx, "feature", o.main); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o *omni) commit(b kernel.BranchRef, stage func(*data.Txn) error) {
	o.t.Helper()
	ctx := context.Background()
	tx, err := o.g.Begin(ctx, b)
	if err != nil {
		o.t.Fatal(err)
	}
	if err := stage(tx); err != nil {
		o.t.Fatal(err)
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); err != nil {
		o.t.Fatalf("commit on %s: %v", b, err)
	}
}

func (o *omni) applySchema(b kernel.BranchRef, text string, renames ...schema.Rename) {
	o.t.Helper()
	s, err := schema.Parse([]byte(text))
	if err != nil {
		o.t.Fatal(err)
	}
	if _, err := o.g.ApplySchema(context.Background(), b, s, kernel.LineageIntent{Actor: "test", Message: "schema"}, data.SchemaOptions{Renames: renames}); err != nil {
		o.t.Fatalf("apply schema on %s: %v", b, err)
	}
}

func (o *omni) merge() (data.MergeResult, error) {
	return o.g.Merge(context.Background(), o.feature, o.main, kernel.LineageIntent{Actor: "test", Message: "merge"}, data.MergeOptions{})
}

func (o *omni) head() kernel.CommitID {
	o.t.Helper()
	c, err := o.g.Kernel().Head(context.Background(), o.main)
	if err != nil {
		o.t.Fatal(err)
	}
	return c.ID
}

func (o *omni) get(typ, id string) map[string]any {
	o.t.Helper()
	s, err := o.g.SnapshotAt(context.Background(), o.main)
	if err != nil {
		o.t.Fatal(err)
	}
	r, ok, err := s.Get(context.Background(), typ, id)
	if err != nil || !ok {
		o.t.Fatalf("get %s %s: %v, %v", typ, id, ok, err)
	}
	return r.Props
}

// TestMergeAddsPropertiesFromBothSides: a branch that adds a property
// (and fills it) merged into a main that added a different one (and filled
// it): the merge publishes one commit whose schema has both properties,
// every row keeps both sides' values, and old rows read the new columns
// as null.
func TestMergeAddsPropertiesFromBothSides(t *testing.T) {
	o := newOmni(t)
	o.applySchema(o.feature, `node Person { name: string age: int64? email: string? } node Company { name: string } node Tag { label: string? }
edge WorksAt: Person -> Company { since: int64? }`)
	o.commit(o.feature, func(tx *data.Txn) error {
		return errors.Join(tx.Update("Person", data.Row{ID: "p1", Props: map[string]any{"name": "ann", "email": "ann@x"}}),
			tx.Insert("Person", data.Row{ID: "p3", Props: map[string]any{"name": "cy", "email": "cy@x"}}))
	})
	o.applySchema(o.main, `node Person { name: string age: int64? phone: string? } node Company { name: string } node Tag { label: string? }
edge WorksAt: Person -> Company { since: int64? }`)
	o.commit(o.main, func(tx *data.Txn) error {
		return tx.Update("Person", data.Row{ID: "p2", Props: map[string]any{"name": "bob", "phone": "555"}})
	})
	res, err := o.merge()
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	if res.Outcome != data.MergeMerged || res.Schema == "" {
		t.Fatalf("merge = %v (schema %q), want merged with a new schema", res.Outcome, res.Schema)
	}
	s, err := o.g.SnapshotAt(context.Background(), o.main)
	if err != nil {
		t.Fatal(err)
	}
	sch := s.Schema()
	p, _ := sch.Node("Person")
	var names []string
	for _, prop := range p.Props {
		names = append(names, prop.Name)
	}
	if want := []string{"name", "age", "phone", "email"}; !cmp.Equal(names, want) {
		t.Fatalf("merged Person properties %v, want %v", names, want)
	}
	if s.Kernel().SchemaHash() != res.Schema {
		t.Fatalf("head schema %s, merge reported %s", s.Kernel().SchemaHash(), res.Schema)
	}
	for _, c := range []struct {
		id   string
		want map[string]any
	}{
		{"p1", map[string]any{"name": "ann", "email": "ann@x"}},
		{"p2", map[string]any{"name": "bob", "phone": "555"}},
		{"p3", map[string]any{"name": "cy", "email": "cy@x"}},
	} {
		if got := o.get("Person", c.id); !cmp.Equal(got, c.want) {
			t.Errorf("Person %s = %v, want %v", c.id, got, c.want)
		}
	}
	// A main transaction begun under the merged schema writes both columns.
	o.commit(o.main, func(tx *data.Txn) error {
		return tx.Update("Person", data.Row{ID: "p1", Props: map[string]any{"name": "ann", "email": "a@y", "phone": "1"}})
	})
	if got := o.get("Person", "p1"); got["email"] != "a@y" || got["phone"] != "1" {
		t.Fatalf("p1 after a write under the merged schema = %v", got)
	}
	// Merging again finds nothing to do.
	if res, err := o.merge(); err != nil || res.Outcome != data.MergeAlreadyUpToDate {
		t.Fatalf("second merge = %v, %v", res.Outcome, err)
	}
	o.verify()
}

// TestMergeRenameMeetsUpdate: a rename on the branch and a value change of
// that property on main merge: the value lands under the new name.
func TestMergeRenameMeetsUpdate(t *testing.T) {
	o := newOmni(t)
	o.applySchema(o.feature, `node Person { fullname: string age: int64? } node Company { name: string } node Tag { label: string? }
edge WorksAt: Person -> Company { since: int64? }`, schema.Rename{Type: "Person", From: "name", To: "fullname"})
	o.commit(o.main, func(tx *data.Txn) error {
		return tx.Update("Person", data.Row{ID: "p2", Props: map[string]any{"name": "robert"}})
	})
	if _, err := o.merge(); err != nil {
		t.Fatalf("merge: %v", err)
	}
	for id, want := range map[string]string{"p1": "ann", "p2": "robert"} { //detlint:ordered independent checks
		if got := o.get("Person", id); got["fullname"] != want || got["name"] != nil {
			t.Errorf("Person %s = %v, want fullname %q", id, got, want)
		}
	}
	o.verify()
}

// TestMergeTypeDroppedVsWritten: a type dropped on main while the branch
// wrote rows of it is a typed schema conflict (DropVsRows), and so is the
// other direction; nothing is published.
func TestMergeTypeDroppedVsWritten(t *testing.T) {
	for _, dropOnMain := range []bool{true, false} {
		o := newOmni(t)
		dropper, writer := o.main, o.feature
		if !dropOnMain {
			dropper, writer = o.feature, o.main
		}
		o.applySchema(dropper, `node Person { name: string age: int64? } node Company { name: string }
edge WorksAt: Person -> Company { since: int64? }`)
		o.commit(writer, func(tx *data.Txn) error {
			return tx.Insert("Tag", data.Row{ID: "t1", Props: map[string]any{"label": "x"}})
		})
		before := o.head()
		_, err := o.merge()
		var ce *data.MergeConflictError
		if !errors.Is(err, data.ErrSchemaConflict) || !errors.As(err, &ce) {
			t.Fatalf("drop on main %v: merge = %v, want a schema conflict", dropOnMain, err)
		}
		want := []merge.Conflict{{Kind: merge.SchemaConflict, Rule: merge.DropVsRows, Type: "Tag"}}
		got := append([]merge.Conflict(nil), ce.Conflicts...)
		for i := range got {
			got[i].Message = ""
		}
		if !cmp.Equal(got, want) {
			t.Fatalf("drop on main %v: conflicts %v, want %v", dropOnMain, ce.Conflicts, want)
		}
		if o.head() != before {
			t.Fatal("a conflicting merge published")
		}
	}
}

// TestMergeRefusesEdgeBreakingTightenedCard: @card tightened on main
// (0..1) while the branch adds a second WorksAt from p1: the merge refuses
// with a CardinalityViolation naming p1, and publishes nothing. An edge
// that keeps the bound merges (control).
func TestMergeRefusesEdgeBreakingTightenedCard(t *testing.T) {
	for _, from := range []string{"p1", "p2"} {
		o := newOmni(t)
		o.commit(o.feature, func(tx *data.Txn) error {
			return tx.Insert("WorksAt", data.Row{ID: "w2", From: from, To: "c2"})
		})
		o.applySchema(o.main, `node Person { name: string age: int64? } node Company { name: string } node Tag { label: string? }
edge WorksAt: Person -> Company @card(0..1) { since: int64? }`)
		before := o.head()
		_, err := o.merge()
		if from == "p2" {
			if err != nil {
				t.Fatalf("merge of an edge within the bound: %v", err)
			}
			continue
		}
		var ce *data.MergeConflictError
		if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Kind != merge.CardinalityViolation || ce.Conflicts[0].ID != "p1" {
			t.Fatalf("merge = %v, want one CardinalityViolation for p1", err)
		}
		if o.head() != before {
			t.Fatal("a refused merge published")
		}
	}
}

// TestMergeTakesTightenedCardFromBranch: the branch tightens @card while
// main adds an edge that breaks it: refused the same way (the merged
// bound checks main's edges too).
func TestMergeTakesTightenedCardFromBranch(t *testing.T) {
	o := newOmni(t)
	o.applySchema(o.feature, `node Person { name: string age: int64? } node Company { name: string } node Tag { label: string? }
edge WorksAt: Person -> Company @card(0..1) { since: int64? }`)
	o.commit(o.main, func(tx *data.Txn) error {
		return tx.Insert("WorksAt", data.Row{ID: "w2", From: "p1", To: "c2"})
	})
	_, err := o.merge()
	var ce *data.MergeConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Kind != merge.CardinalityViolation {
		t.Fatalf("merge = %v, want a CardinalityViolation", err)
	}
}
