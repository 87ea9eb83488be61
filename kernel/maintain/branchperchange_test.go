package maintain_test

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/maintain"
)

// cycle is one branch-per-change round: fork feat from main, commit one
// row on it, merge it into main, delete it.
func (f *fixture) cycle(g *data.Graph, main kernel.BranchRef, i int) error {
	feat, err := g.Kernel().CreateBranch(ctx, "feat", main)
	if err != nil {
		return fmt.Errorf("cycle %d: fork: %w", i, err)
	}
	f.commit(feat, func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprintf("c%05d", i), "n")) })
	if _, err := g.Merge(ctx, feat, main, kernel.LineageIntent{Actor: "t", Message: "merge"}, data.MergeOptions{}); err != nil {
		return fmt.Errorf("cycle %d: merge: %w", i, err)
	}
	if err := g.Kernel().DeleteBranch(ctx, "feat"); err != nil {
		return fmt.Errorf("cycle %d: delete: %w", i, err)
	}
	return nil
}

// TestMergesIntoMainAfterManyMerges is issue #27 part 1: after 1023
// branch-per-change cycles and one collection (default policy), a branch
// forked from main's head still merges into main. Before hierarchical
// reaches, main's reach passed format.MaxReachEntries incarnations, the
// merge base fell back to walking the whole history, and the walk met
// collected manifests (ErrReclaimed on every later merge).
func TestMergesIntoMainAfterManyMerges(t *testing.T) {
	if testing.Short() {
		t.Skip("1023 cycles")
	}
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 0)
	const n = 1023
	for i := 0; i < n; i++ {
		if err := f.cycle(f.g, main, i); err != nil {
			t.Fatal(err)
		}
	}
	rep := f.collect(maintain.Policy{})
	if rep.MergeBasesUnknown != 0 {
		t.Errorf("collection after %d cycles: %d live heads without a known reach", n, rep.MergeBasesUnknown)
	}
	for i := n; i < n+3; i++ {
		if err := f.cycle(f.reopen(), main, i); err != nil {
			t.Fatalf("after %d cycles and a collection: %v", n, err)
		}
	}
}
