package data

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestDiffAcrossAddWithDefault: a diff across the add of a property with
// a default reads the older side's rows with the default (as the newer
// side reads the same rows, and as a consumer applying the add-property
// step holds them): rows copied into a rewritten fragment are no change,
// and an updated row's Before holds the default. Red before the older
// side's layout applied defaults (every copied row was an update from
// null).
func TestDiffAcrossAddWithDefault(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	before := snap(t, g)
	_, err := apply(t, g, withSchema(t, "age: int64? }", "age: int64?  tier: int64 @default(5) }"), SchemaOptions{})
	must(t, err)
	commitTx(t, g, func(tx *Txn) error {
		return tx.Update("Person", Row{ID: "p1", Props: map[string]any{"name": "ann", "age": int64(31), "tier": int64(9)}})
	})
	after := snap(t, g)
	var got []string
	var p1 RowChange
	must(t, TableChanges(ctx, before, after, "Person", "", func(c RowChange) error {
		got = append(got, c.Op.String()+" "+c.ID)
		if c.ID == "p1" {
			p1 = c
		}
		return nil
	}))
	if strings.Join(got, ",") != "update p1" {
		t.Fatalf("changes %v, want only update p1", got)
	}
	if p1.Before == nil || p1.Before.Props["tier"] != int64(5) || p1.After.Props["tier"] != int64(9) {
		t.Fatalf("p1 change %+v / %+v, want tier 5 -> 9", p1.Before, p1.After)
	}
}

// TestDiffBackwardsAcrossWideningIsRefused: a diff from a snapshot after
// an int32 -> int64 widening back to one before it is refused, typed
// (kernel.ErrInvalidArgument), not reported as a corrupt fragment (the
// newer int64 column has no int32 reading); forwards it works.
func TestDiffBackwardsAcrossWideningIsRefused(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	_, err := apply(t, g, withSchema(t, "age: int64? }", "age: int64?  n: int32? }"), SchemaOptions{})
	must(t, err)
	old := snap(t, g)
	_, err = apply(t, g, withSchema(t, "age: int64? }", "age: int64?  n: int64? }"), SchemaOptions{})
	must(t, err)
	commitTx(t, g, func(tx *Txn) error {
		return tx.Update("Person", Row{ID: "p2", Props: map[string]any{"name": "bob", "age": int64(42), "n": int64(1 << 40)}})
	})
	now := snap(t, g)
	none := func(RowChange) error { return nil }
	if err := TableChanges(ctx, now, old, "Person", "", none); !errors.Is(err, kernel.ErrInvalidArgument) || errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("backwards across a widening = %v, want ErrInvalidArgument (not corrupt)", err)
	}
	var got []string
	must(t, TableChanges(ctx, old, now, "Person", "", func(c RowChange) error { got = append(got, c.Op.String()+" "+c.ID); return nil }))
	if strings.Join(got, ",") != "update p2" {
		t.Fatalf("forwards: %v", got)
	}
}
