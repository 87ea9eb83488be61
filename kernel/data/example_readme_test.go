package data_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/fs"
)

// Example_library is the README's "Using the library" snippet, verbatim
// (TestReadmeSnippet keeps the two equal): a graph on a local directory,
// one load on main, an edit on a feature branch, and the merge that lands
// it.
func Example_library() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "graphs")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Or sim.New(sim.Config{Seed: 1}) in memory, or s3.Open(ctx, "s3://bucket/prefix", s3.Options{}).
	store, err := fs.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	// Node and edge types; @card(min..max) bounds an edge type's out-degree.
	s, err := schema.Parse([]byte(`
node Person { name: string  age: int64? }
edge Knows: Person -> Person @card(0..10)
`))
	if err != nil {
		log.Fatal(err)
	}
	// kernel.Env supplies time and entropy: the kernel never reads the clock itself.
	g, err := data.Init(ctx, store, "graphs/g1", s, data.Options{Kernel: kernel.Options{Env: kernel.SystemEnv()}})
	if err != nil {
		log.Fatal(err)
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		log.Fatal(err)
	}

	// A transaction pins one base snapshot; Commit publishes all of it or nothing.
	txn, err := g.Begin(ctx, main)
	if err != nil {
		log.Fatal(err)
	}
	// Insert, Upsert, Update and Delete stage rows; Commit checks them (types, ids, @card).
	err = errors.Join(
		txn.Insert("Person",
			data.Row{ID: "ann", Props: map[string]any{"name": "Ann"}},
			data.Row{ID: "bob", Props: map[string]any{"name": "Bob", "age": int64(40)}}),
		txn.Insert("Knows", data.Row{ID: "k1", From: "ann", To: "bob"}))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := txn.Commit(ctx, kernel.LineageIntent{Actor: "svc", Message: "load"}); err != nil {
		log.Fatal(err)
	}

	// Commit on a feature branch, then land it on main with a three-way merge.
	feature, err := g.Kernel().CreateBranch(ctx, "feature", main)
	if err != nil {
		log.Fatal(err)
	}
	txn, err = g.Begin(ctx, feature)
	if err != nil {
		log.Fatal(err)
	}
	if err := txn.Update("Person", data.Row{ID: "ann", Props: map[string]any{"name": "Ann", "age": int64(41)}}); err != nil {
		log.Fatal(err)
	}
	if _, err := txn.Commit(ctx, kernel.LineageIntent{Actor: "svc", Message: "ann's age"}); err != nil {
		log.Fatal(err)
	}
	// A conflict fails with a *data.MergeConflictError listing every conflict; nothing is written.
	res, err := g.Merge(ctx, feature, main, kernel.LineageIntent{Actor: "svc", Message: "land feature"}, data.MergeOptions{})
	if err != nil {
		log.Fatal(err)
	}

	snap, err := g.SnapshotAt(ctx, main)
	if err != nil {
		log.Fatal(err)
	}
	ann, _, err := snap.Get(ctx, "Person", "ann")
	if err != nil {
		log.Fatal(err)
	}
	knows, err := snap.Out(ctx, "Knows", "ann")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Outcome, len(res.Commit.Parents), ann.Props["age"], knows[0].To)
	// Output:
	// fast-forward 2 41 bob
}
