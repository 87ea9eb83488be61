package data

import (
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestScanAfterRenameOnAWarmHandle: a Scan of every column on a handle
// that read the fragments before a property rename names the column by
// its new name (the fragment cache shared records between two layouts of
// one storage layout, labelled with the first one's property names).
func TestScanAfterRenameOnAWarmHandle(t *testing.T) {
	g := evoGraph(t, sim.New(sim.Config{Seed: 1}))
	fields := func() []string {
		rr, err := snap(t, g).Scan(ctx, "Person")
		must(t, err)
		defer rr.Release()
		var names []string
		for rr.Next() {
			for _, f := range rr.Record().Schema().Fields() {
				names = append(names, f.Name)
			}
		}
		must(t, rr.Err())
		return names
	}
	if got := fields(); !slices.Contains(got, "age") {
		t.Fatalf("before the rename: fields %v", got)
	}
	if _, err := apply(t, g, withSchema(t, "age: int64?", "years: int64?"), SchemaOptions{Renames: []schema.Rename{{Type: "Person", From: "age", To: "years"}}}); err != nil {
		t.Fatal(err)
	}
	if got := fields(); !slices.Contains(got, "years") || slices.Contains(got, "age") {
		t.Fatalf("after the rename: fields %v, want years, not age", got)
	}
}
