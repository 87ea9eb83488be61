package maintain_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestRebuiltReachMatchesThePublishedIndex: a collection rebuilds a
// missing commit index exactly as its publish computed it when it is
// given the writers' reach bounds (maintain.Options): the same explicit
// entries, folds and gen. With other bounds it stores another valid
// reach, whose merge-base search loads other manifests than a reader
// holding the writers' index does (lifetime under oscrash, seed 11, met
// it: a merge needed a manifest the collection had not kept). Red with
// the kernel's default bounds.
func TestRebuiltReachMatchesThePublishedIndex(t *testing.T) {
	const entries, folds = 2, 2 // small: merges compact into folds
	for _, tc := range []struct {
		name  string
		opts  maintain.Options
		equal bool
	}{
		{"writers' bounds", maintain.Options{ReachEntries: entries, ReachFolds: folds}, true},
		{"default bounds", maintain.Options{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := kernel.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			env := func(seed byte) kernel.Env { return kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{seed})} }
			s, err := schema.Parse([]byte("node Person { name: string }\nedge Knows: Person -> Person\n"))
			if err != nil {
				t.Fatal(err)
			}
			store := &hookStore{Store: sim.New(sim.Config{Seed: 1})}
			g, err := data.Init(ctx, store, root, s, data.Options{Kernel: kernel.Options{Env: env(1), Grace: time.Minute, ReachEntries: entries, ReachFolds: folds}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := maintain.NewWith(store, root, env(2), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			f := &fixture{t: t, store: store, kst: store, clock: clock, g: g, m: m}
			main := f.branch("main")
			f.seed(main, 1)
			for i := range 4 { // four branches merged into main: more incarnations than entries
				b := f.fork(fmt.Sprint("b", i), main)
				f.commit(b, func(tx *data.Txn) error {
					return tx.Update("Person", person(fmt.Sprintf("p%02d", i), fmt.Sprint("b", i)))
				})
				f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p09", fmt.Sprint("main", i))) })
				if _, err := g.Merge(ctx, b, main, kernel.LineageIntent{Actor: "t", Message: "merge"}, data.MergeOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			key := format.NewKeys(root).CommitIndex(f.head(main))
			obj, err := store.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			published, _, err := format.DecodeCommitIndex(obj.Data)
			if err != nil || !published.Complete || len(published.Folds) == 0 {
				t.Fatalf("main's head index as published: complete=%v, %d folds (%v); want complete, with folds", published.Complete, len(published.Folds), err)
			}
			if err := store.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			f.collect(policy)
			if obj, err = store.Get(ctx, key); err != nil {
				t.Fatalf("main's head index after the collection: %v", err)
			}
			rebuilt, _, err := format.DecodeCommitIndex(obj.Data)
			if err != nil {
				t.Fatal(err)
			}
			same := rebuilt.Gen == published.Gen && cmp.Equal(rebuilt.Reach, published.Reach) && cmp.Equal(rebuilt.Folds, published.Folds)
			if same != tc.equal {
				t.Fatalf("rebuilt index %+v\npublished %+v\nequal %v, want %v", rebuilt, published, same, tc.equal)
			}
		})
	}
}
