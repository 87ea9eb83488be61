package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// TestMergeBaseOverCollectedHistory: when the manifest of the merge base
// (or one the ancestry walk passes) is gone, as after a garbage
// collection, MergeBase answers ErrReclaimed, never ErrNotFound: that one
// means the two commits share no ancestor, a definite answer a caller may
// act on (docs/gc.md §5). Both paths: the commit indexes' reaches, and the
// walk when every index is gone too. A collected tip of the common reach
// that the base reaches is not needed: the base is still found.
func TestMergeBaseOverCollectedHistory(t *testing.T) {
	for _, tc := range []struct {
		name         string
		dropIndexes  bool
		dropManifest func(base, f1, m2 kernel.Commit) kernel.Commit
		answers      bool // the base is still found
	}{
		{"reach/base-gone", false, func(_, f1, _ kernel.Commit) kernel.Commit { return f1 }, false},
		{"walk/base-gone", true, func(_, f1, _ kernel.Commit) kernel.Commit { return f1 }, false},
		{"walk/merge-commit-gone", true, func(_, _, m2 kernel.Commit) kernel.Commit { return m2 }, false},
		// The fork point is a tip of main's and f's common reach, but f1
		// (the base) reaches it: its absence changes nothing.
		{"reach/dominated-tip-gone", false, func(base, _, _ kernel.Commit) kernel.Commit { return base }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, store objstore.Store) {
				g := mustInit(t, store, 1)
				main := mustBranch(t, g, "main")
				base := commitTable(t, g, main, "a", "base")
				f, err := g.CreateBranch(ctx, "f", main)
				if err != nil {
					t.Fatal(err)
				}
				f1 := commitTable(t, g, f, "b", "f1")
				commitTable(t, g, main, "a", "m1")
				m2 := merge(t, g, main, f)
				commitTable(t, g, main, "a", "m3")
				var commits []kernel.Commit
				for _, frag := range []string{"f2", "f3"} {
					commits = append(commits, commitTable(t, g, f, "b", frag))
				}
				if c, err := coldHandle(t, store).MergeBase(ctx, main, f); err != nil || c.ID != f1.ID {
					t.Fatalf("before: merge base %s %v, want %s", c.ID, err, f1.ID)
				}
				keys := format.NewKeys(root)
				gone := tc.dropManifest(base, f1, m2)
				if err := store.Delete(ctx, keys.Manifest(gone.Branch, gone.Incarnation, gone.ManifestVersion)); err != nil {
					t.Fatal(err)
				}
				if tc.dropIndexes {
					for _, c := range append(fullLog(t, g, main), commits...) {
						if err := store.Delete(ctx, keys.CommitIndex(c.ID)); err != nil && !errors.Is(err, objstore.ErrNotFound) {
							t.Fatal(err)
						}
					}
					for _, c := range []kernel.Commit{f1} {
						if err := store.Delete(ctx, keys.CommitIndex(c.ID)); err != nil && !errors.Is(err, objstore.ErrNotFound) {
							t.Fatal(err)
						}
					}
				}
				c, err := coldHandle(t, store).MergeBase(ctx, main, f)
				if tc.answers {
					if err != nil || c.ID != f1.ID {
						t.Fatalf("merge base with a dominated tip collected: %s %v, want %s", c.ID, err, f1.ID)
					}
					return
				}
				if !errors.Is(err, kernel.ErrReclaimed) || errors.Is(err, kernel.ErrNotFound) {
					t.Fatalf("merge base over collected history: %v, want ErrReclaimed and not ErrNotFound", err)
				}
			})
		})
	}
}
