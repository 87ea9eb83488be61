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

func Example() {
	ctx := context.Background()
	s, _ := schema.Parse([]byte(`
node Person  { name: string }
node Company { name: string }
edge WorksAt: Person -> Company @card(0..1)
`))
	env := kernel.Env{Clock: kernel.NewManualClock(time.Unix(0, 0)), Entropy: rand.NewChaCha8([32]byte{})}
	g, err := data.Init(ctx, sim.New(sim.Config{Seed: 1}), "graphs/example", s, data.Options{Kernel: kernel.Options{Env: env}})
	if err != nil {
		fmt.Println(err)
		return
	}
	main, _ := g.Branch(ctx, "main")

	tx, _ := g.Begin(ctx, main)
	_ = tx.Insert("Person", data.Row{ID: "ann", Props: map[string]any{"name": "Ann"}})
	_ = tx.Insert("Company", data.Row{ID: "acme", Props: map[string]any{"name": "Acme"}},
		data.Row{ID: "initech", Props: map[string]any{"name": "Initech"}})
	_ = tx.Insert("WorksAt", data.Row{ID: "w1", From: "ann", To: "acme"})
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "example"}); err != nil {
		fmt.Println(err)
		return
	}

	// A second job breaks WorksAt's @card(0..1): rejected, nothing written.
	tx, _ = g.Begin(ctx, main)
	_ = tx.Insert("WorksAt", data.Row{ID: "w2", From: "ann", To: "initech"})
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "example"})
	fmt.Println(errors.Is(err, data.ErrCardinality))

	snap, _ := g.SnapshotAt(ctx, main)
	out, _ := snap.Out(ctx, "WorksAt", "ann")
	n, _ := snap.Count(ctx, "Company")
	fmt.Println(out[0].To, n)
	// Output:
	// true
	// acme 2
}
