package maintain_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// metaPolicy is a small retention on the fixture's injected clock.
var metaPolicy = maintain.Policy{Policy: gc.Policy{KeepLast: 2, KeepFor: 5 * time.Minute, Grace: time.Minute, SkewMargin: time.Minute}}

// keysPerPrefix counts the store's keys under root by their first segment
// (branches, names, forks, tables, data, adj, index, audit, plans, ...).
func (f *fixture) keysPerPrefix() map[string]int {
	f.t.Helper()
	out := map[string]int{}
	for _, k := range f.store.Store.(*sim.Store).Keys(root + "/") {
		seg, _, _ := strings.Cut(strings.TrimPrefix(k, root+"/"), "/")
		out[seg]++
	}
	return out
}

// branchPerChange runs n cycles of: fork a feature branch from main,
// commit one row on it, merge it into main, delete it; with a collection
// every 50 cycles, then a final collection past every retention.
func (f *fixture) branchPerChange(n int) {
	f.t.Helper()
	main := f.branch("main")
	f.seed(main, 0)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("feature-%05d", i)
		feat := f.fork(name, main)
		f.commit(feat, func(tx *data.Txn) error { return tx.Insert("Person", person(fmt.Sprintf("f%05d", i), name)) })
		if _, err := f.g.Merge(ctx, feat, main, kernel.LineageIntent{Actor: "t", Message: "merge " + name}, data.MergeOptions{}); err != nil {
			f.t.Fatalf("cycle %d: merge: %v", i, err)
		}
		if err := f.g.Kernel().DeleteBranch(ctx, name); err != nil {
			f.t.Fatalf("cycle %d: delete: %v", i, err)
		}
		if i%50 == 49 {
			f.collect(metaPolicy)
		}
	}
	f.clock.Advance(time.Hour)
	f.collect(metaPolicy)
}

// TestCollectBoundsKeysOverCycles: what the store holds after a collection
// is bounded by what is live, not by how many branches ever existed
// (docs/gc.md, Bound): after 50 and after 200 branch-per-change cycles and
// a collection past every retention, every metadata prefix holds the same
// number of keys (fragments and adjacency objects are main's live rows,
// which grow with the cycles). Red while dead names keep their tombstones, name markers and
// (debris) fork markers.
func TestCollectBoundsKeysOverCycles(t *testing.T) {
	small, large := newFixture(t), newFixture(t)
	small.branchPerChange(50)
	large.branchPerChange(200)
	a, b := small.keysPerPrefix(), large.keysPerPrefix()
	t.Logf("keys per prefix after 50 cycles %v, after 200 %v", a, b)
	var grew []string
	for p, n := range b {
		if p == "data" || p == "adj" {
			continue // live content: main's head holds one row per cycle
		}
		if n > a[p] {
			grew = append(grew, fmt.Sprintf("%s: %d -> %d", p, a[p], n))
		}
	}
	sort.Strings(grew)
	if len(grew) > 0 {
		t.Fatalf("keys grow with the number of branches ever created: %v", grew)
	}
}
