package data_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/data/traverse"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Graph reads: a filtered scan, GetMany, degrees and a bounded traversal.
func Example_reads() {
	ctx := context.Background()
	s, _ := schema.Parse([]byte(`
node Person { name: string  age: int64? }
edge Knows: Person -> Person
`))
	env := kernel.Env{Clock: kernel.NewManualClock(time.Unix(0, 0)), Entropy: rand.NewChaCha8([32]byte{})}
	g, _ := data.Init(ctx, sim.New(sim.Config{Seed: 1}), "graphs/reads", s, data.Options{Kernel: kernel.Options{Env: env}})
	main, _ := g.Branch(ctx, "main")
	tx, _ := g.Begin(ctx, main)
	for i, name := range []string{"ann", "bob", "cy", "dee"} {
		_ = tx.Insert("Person", data.Row{ID: name, Props: map[string]any{"name": name, "age": int64(20 + 10*i)}})
	}
	_ = tx.Insert("Knows", data.Row{ID: "k1", From: "ann", To: "bob"}, data.Row{ID: "k2", From: "bob", To: "cy"},
		data.Row{ID: "k3", From: "cy", To: "dee"})
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "example"}); err != nil {
		fmt.Println(err)
		return
	}
	snap, _ := g.SnapshotAt(ctx, main)

	where, _ := pred.Parse(`age >= 30 AND name != "dee"`)
	rr, _ := snap.ScanWhere(ctx, "Person", &where, "id")
	for rr.Next() {
		fmt.Println("scan:", rr.Record().Column(0).(*array.String).ValueStr(0), rr.Record().NumRows())
	}
	rr.Release()

	rows, _ := snap.GetMany(ctx, "Person", []string{"dee", "nobody", "ann"})
	deg, _ := snap.InDegree(ctx, "Knows", "bob")
	fmt.Println("getmany:", len(rows), rows[0].ID, "in-degree of bob:", deg)

	res, _ := data.Expand(ctx, snap, []string{"ann"}, "Knows", traverse.Out, 1, 2, traverse.Limits{MaxResult: 10})
	fmt.Println("expand:", res.Nodes, res.Truncated)
	// Output:
	// scan: bob 2
	// getmany: 2 ann in-degree of bob: 1
	// expand: [{bob 1} {cy 2}] false
}
