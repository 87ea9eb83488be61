package kernel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// A graph is initialised, written through Write (one commit for all touched
// tables), branched, and read back through immutable snapshots.
func Example() {
	ctx := context.Background()
	env := kernel.Env{Clock: kernel.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), Entropy: rand.NewChaCha8([32]byte{1})}
	g, err := kernel.Init(ctx, sim.New(sim.Config{Seed: 1}), "graphs/demo", []byte(`{"tables":["people"]}`), kernel.Options{Env: env})
	if err != nil {
		panic(err)
	}
	main, _ := g.Branch(ctx, "main")
	addRows := func(frag string, rows uint64) func(kernel.TableVersion) (kernel.TableContent, error) {
		return func(pinned kernel.TableVersion) (kernel.TableContent, error) {
			return kernel.TableContent{Fragments: append(append([]string(nil), pinned.Fragments...), frag), Rows: pinned.Rows + rows}, nil
		}
	}
	c1, _ := g.Write(ctx, main, []kernel.TableWrite{{Table: "people", Build: addRows("f1", 10)}}, kernel.LineageIntent{Actor: "etl", Message: "load"})
	feature, _ := g.CreateBranch(ctx, "feature", main)
	g.Write(ctx, feature, []kernel.TableWrite{{Table: "people", Build: addRows("f2", 5)}}, kernel.LineageIntent{Actor: "dev", Message: "more"})

	for _, b := range []kernel.BranchRef{main, feature} {
		snap, _ := g.SnapshotAt(ctx, b)
		pin, _ := snap.Table("people")
		fmt.Printf("%s: people v%d, %d rows\n", b.Name(), pin.Version, pin.Rows)
	}
	base, _ := g.MergeBase(ctx, main, feature)
	fmt.Println("merge base is the first commit:", base.ID == c1.ID)
	page, _ := g.Log(ctx, feature, "", 10)
	for _, c := range page.Commits {
		fmt.Println(c.Kind, c.Actor, c.Message)
	}
	// Output:
	// main: people v1, 10 rows
	// feature: people v2, 15 rows
	// merge base is the first commit: true
	// commit dev more
	// commit etl load
	// genesis graphkernel:init genesis
}

// Branches are listed a bounded page at a time: each page examines at most
// limit branch names (deleted ones too, which it skips), so its cost does
// not grow with how many branches were ever created. A delete finds its
// dependents through fork markers, also without scanning every name.
func ExampleGraph_ListBranchesPage() {
	ctx := context.Background()
	env := kernel.Env{Clock: kernel.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)), Entropy: rand.NewChaCha8([32]byte{1})}
	g, err := kernel.Init(ctx, sim.New(sim.Config{Seed: 1}), "graphs/demo", []byte(`{"tables":["people"]}`), kernel.Options{Env: env})
	if err != nil {
		panic(err)
	}
	main, _ := g.Branch(ctx, "main")
	a, _ := g.CreateBranch(ctx, "a", main)
	g.CreateBranch(ctx, "a-child", a)
	g.CreateBranch(ctx, "scratch", main)
	g.DeleteBranch(ctx, "scratch")
	fmt.Println("delete a:", g.DeleteBranch(ctx, "a"))

	cursor := kernel.BranchCursor("")
	for pages := 0; pages < 10; pages++ {
		page, err := g.ListBranchesPage(ctx, cursor, 2)
		if err != nil {
			panic(err)
		}
		for _, b := range page.Branches {
			fmt.Println(b)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	// Output:
	// delete a: kernel: branch "a" has dependent branches: a-child
	// a#1
	// a-child#1
	// main#1
}
