package maintain_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// newReachFixture is newFixture with small reach bounds (lineage
// compacts every few merges).
func newReachFixture(t *testing.T, entries, folds int) *fixture {
	t.Helper()
	f := newFixture(t)
	s, err := schema.Parse([]byte("node Person { name: string }\nedge Knows: Person -> Person\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.store = &hookStore{Store: sim.New(sim.Config{Seed: 1})}
	opts := kernel.Options{Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{1})}, Grace: time.Minute, ReachEntries: entries, ReachFolds: folds}
	if f.g, err = data.Init(ctx, f.store, root, s, data.Options{Kernel: opts}); err != nil {
		t.Fatal(err)
	}
	if f.m, err = maintain.New(f.store, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{2})}); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMergeAfterMergedFromBranchCollected: branch per change with reach
// bounds 4/2 and main's whole history retained (as a feed consumer's
// history lease holds it). Each round forks a change g from main, merges
// `lag` other changes into main (so main compacts while g lives), then
// merges g from a cold handle (no cached reaches, as a restarted process);
// every merged change is deleted, and after each round (or each merge),
// a collection past every retention reclaims every deleted name's
// manifests. Every later fork must still merge into main: a
// collection with only main live has no pair to keep a merge base for, so
// nothing the merge base of a fresh fork and main needs may lie outside
// main's own retained history (the sim's lifetime-10k failure: ErrReclaimed
// naming a collected merged-from manifest after the first compactions).
func TestMergeAfterMergedFromBranchCollected(t *testing.T) {
	keepMain := metaPolicy
	keepMain.KeepLast = 1 << 20 // main's whole history stays (as a feed consumer's lease holds it)
	const entries, folds, rounds = 4, 2, 40
	for _, tc := range []struct {
		lag         int
		collectEach bool
	}{{0, false}, {1, false}, {2, false}, {1, true}, {3, true}} {
		lag, collectEach := tc.lag, tc.collectEach
		t.Run(fmt.Sprintf("lag%d-each%v", lag, collectEach), func(t *testing.T) {
			f := newReachFixture(t, entries, folds)
			main := f.branch("main")
			f.seed(main, 0)
			change, opened := 0, 0
			merge := func(name string) {
				t.Helper()
				// A cold handle (no cached reaches), as a restarted process.
				opened++
				cold, err := data.Open(ctx, f.store, root, data.Options{Kernel: kernel.Options{Env: kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{9, byte(opened), byte(opened >> 8)})},
					Grace: time.Minute, ReachEntries: entries, ReachFolds: folds}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := cold.Merge(ctx, f.branch(name), main, kernel.LineageIntent{Actor: "t", Message: "merge " + name}, data.MergeOptions{}); err != nil {
					t.Fatalf("change %d: merge of %s into main: %v", change, name, err)
				}
				if err := f.g.Kernel().DeleteBranch(ctx, name); err != nil {
					t.Fatalf("change %d: delete %s: %v", change, name, err)
				}
				if collectEach {
					f.clock.Advance(time.Hour)
					f.collect(keepMain)
				}
			}
			fork := func() string {
				name := fmt.Sprintf("ch-%03d", change)
				change++
				feat := f.fork(name, main)
				f.commit(feat, func(tx *data.Txn) error { return tx.Insert("Person", person("c"+name, name)) })
				return name
			}
			for r := 0; r < rounds; r++ {
				g := fork()
				for k := 0; k < lag; k++ {
					merge(fork())
				}
				merge(g)
				f.clock.Advance(time.Hour)
				f.collect(keepMain)
			}
		})
	}
}
