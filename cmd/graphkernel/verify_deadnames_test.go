package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestVerifyCleanAfterDeadNamesCollected: feature branches merged into
// main and deleted are collected whole by maintain past their retention
// (dead names, docs/gc.md rule 1), and one name is re-created after that
// with an incarnation number above the collected one (rule 1a): verify
// finds no problem, and branches lists main and the re-created name.
func TestVerifyCleanAfterDeadNamesCollected(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t, backend)
			ctx := context.Background()
			g := f.manyCommits(2)
			main, err := g.Branch(ctx, "main")
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				name := fmt.Sprint("f", i)
				b, err := g.Kernel().CreateBranch(ctx, name, main)
				if err != nil {
					t.Fatal(err)
				}
				f.commit(g, name, "on "+name, func(tx *data.Txn) error { return tx.Insert("Person", person("r"+name, "R")) })
				if _, err := g.Merge(ctx, b, main, kernel.LineageIntent{Actor: "t", Message: "merge " + name}, data.MergeOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := g.Kernel().DeleteBranch(ctx, name); err != nil {
					t.Fatal(err)
				}
			}
			f.clock.Advance(48 * time.Hour)
			f.mustRun(0, "maintain", f.spec, testRoot, "--keep-last", "3")
			for _, prefix := range []string{format.NewKeys(testRoot).BranchPrefix("f0"), format.NewKeys(testRoot).NameMarker("f0")} {
				if page, err := f.store.Inner().List(ctx, prefix, "", 1); err != nil || len(page.Keys) != 0 {
					t.Fatalf("after maintain %s holds %v (%v): the dead name was not collected", prefix, page.Keys, err)
				}
			}
			again, err := g.Kernel().CreateBranch(ctx, "f0", main)
			if err != nil {
				t.Fatal(err)
			}
			if again.Incarnation() < 2 {
				t.Fatalf("f0 re-created as incarnation %d after its collection", again.Incarnation())
			}
			f.commit(g, "f0", "again", func(tx *data.Txn) error { return tx.Insert("Person", person("again", "A")) })
			if code, r := f.verifyKeep("3"); code != 0 || len(r.Problems) != 0 {
				t.Fatalf("verify after collecting dead names: exit %d, %+v", code, r.Problems)
			}
		})
	}
}
