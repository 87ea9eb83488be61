package data_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Land a feature branch on main: main and the feature edit different
// properties of one node (merged property by property), then both edit
// the same property, which is a conflict that publishes nothing.
func ExampleGraph_Merge() {
	ctx := context.Background()
	s, _ := schema.Parse([]byte(`node Person { name: string  age: int64?  city: string? }`))
	env := kernel.Env{Clock: kernel.NewManualClock(time.Unix(0, 0)), Entropy: rand.NewChaCha8([32]byte{})}
	g, _ := data.Init(ctx, sim.New(sim.Config{Seed: 1}), "graphs/merge", s, data.Options{Kernel: kernel.Options{Env: env}})
	main, _ := g.Branch(ctx, "main")
	set := func(b kernel.BranchRef, props map[string]any) {
		tx, _ := g.Begin(ctx, b)
		row, _, _ := tx.Get(ctx, "Person", "ann")
		for k, v := range props {
			row.Props[k] = v
		}
		_ = tx.Update("Person", row)
		_, _ = tx.Commit(ctx, kernel.LineageIntent{Actor: "example"})
	}
	tx, _ := g.Begin(ctx, main)
	_ = tx.Insert("Person", data.Row{ID: "ann", Props: map[string]any{"name": "Ann"}})
	_, _ = tx.Commit(ctx, kernel.LineageIntent{Actor: "example"})

	feature, _ := g.Kernel().CreateBranch(ctx, "feature", main)
	set(feature, map[string]any{"age": int64(41)})
	set(main, map[string]any{"city": "Oslo"})

	res, err := g.Merge(ctx, feature, main, kernel.LineageIntent{Actor: "example", Message: "land feature"}, data.MergeOptions{})
	fmt.Println(res.Outcome, len(res.Commit.Parents), err)
	snap, _ := g.SnapshotAt(ctx, main)
	ann, _, _ := snap.Get(ctx, "Person", "ann")
	fmt.Println(ann.Props["age"], ann.Props["city"])

	set(feature, map[string]any{"age": int64(42)})
	set(main, map[string]any{"age": int64(43)})
	_, err = g.Merge(ctx, feature, main, kernel.LineageIntent{Actor: "example"}, data.MergeOptions{})
	var mc *data.MergeConflictError
	if errors.As(err, &mc) {
		c := mc.Conflicts[0]
		fmt.Println(errors.Is(err, data.ErrMergeConflict), c.Kind, c.Type, c.ID, c.Property)
	}
	// Output:
	// merged 2 <nil>
	// 41 Oslo
	// true DivergentUpdate Person ann age
}
