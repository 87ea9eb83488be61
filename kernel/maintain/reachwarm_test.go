package maintain_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
)

// TestMergeOfChangePastVersionOneOnWarmHandle is the lifetime-10k
// cycle-merge shape (issue #27): a change forked from main gets a second
// commit before its merge (in the simulator a maintenance compaction,
// published while its merge waited out a failed publish's sidecar) and
// other changes land on main meanwhile; a collection run while only main
// was live (main KeepLast 2) deleted main's manifests and commit indexes
// from before the fork. The
// merge runs on a long-lived handle that read main's heads all along, so
// it still caches main's old manifests, but never read their indexes. Its
// merge base must be the fork point, answered from main's manifests since
// the fork. Red before lineage's fold coverage: the change's reach (own
// position past version 1) kept the fresh-fork shortcut off, the search
// opened main's fold chain below the fork, a cached manifest whose index
// was collected answered "no complete reach", and the kernel's fallback
// walk met a collected manifest: ErrReclaimed.
func TestMergeOfChangePastVersionOneOnWarmHandle(t *testing.T) {
	for _, lag := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("lag%d", lag), func(t *testing.T) {
			f := newReachFixture(t, 4, 2)
			main := f.branch("main")
			f.seed(main, 0)
			warm, err := data.Open(ctx, f.store, root, data.Options{Kernel: kernel.Options{Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{7})},
				Grace: time.Minute, ReachEntries: 4, ReachFolds: 2}})
			if err != nil {
				t.Fatal(err)
			}
			readHead := func() kernel.BranchRef {
				t.Helper()
				b, err := warm.Branch(ctx, "main")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := warm.Kernel().Head(ctx, b); err != nil {
					t.Fatal(err)
				}
				return b
			}
			change := 0
			cycle := func() {
				t.Helper()
				f.mergedAndDeleted(fmt.Sprintf("ch-%03d", change), fmt.Sprintf("c%03d", change))
				change++
				readHead()
			}
			for range 12 {
				cycle()
			}
			// Only main is live: no pair, so the collection keeps no merge
			// base, and main's older manifests and indexes go.
			f.clock.Advance(time.Hour)
			f.collect(metaPolicy)
			g := f.fork("g", f.branch("main"))
			f.commit(g, func(tx *data.Txn) error { return tx.Insert("Person", person("g1", "g")) })
			f.commit(g, func(tx *data.Txn) error { return tx.Insert("Person", person("g2", "g")) })
			for range lag {
				cycle()
			}
			main = readHead()
			res, err := warm.Merge(ctx, f.branch("g"), main, kernel.LineageIntent{Actor: "t", Message: "merge g"}, data.MergeOptions{})
			if err != nil {
				t.Fatalf("merge of g (head v2, %d changes merged since its fork) into main on a warm handle: %v", lag, err)
			}
			if res.Outcome == data.MergeAlreadyUpToDate {
				t.Fatalf("merge of g: %v, want its rows merged", res.Outcome)
			}
		})
	}
}
