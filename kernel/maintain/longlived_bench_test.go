package maintain_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

var (
	llEntries = flag.Int("longlived.entries", 4, "BenchmarkLongLivedBranch: ReachEntries (the simulator's 4; the default is 64)")
	llFolds   = flag.Int("longlived.folds", 2, "BenchmarkLongLivedBranch: ReachFolds (the simulator's 2; the default is 8)")
)

// llGraph is a bench graph with the simulator's small reach bounds, so
// main's commit indexes fold as they do in the lifetime soak.
func llGraph(b *testing.B, cs *counting.Store, entries, folds int) *benchGraph {
	b.Helper()
	g, m, clock, main := simGraph(b, cs, data.Options{Kernel: kernel.Options{ReachEntries: entries, ReachFolds: folds}})
	return &benchGraph{g: g, m: m, store: cs, clock: clock, main: main}
}

// simGraph makes a graph (one Person node type) on st with opts, whose
// Env and grace (a minute) it sets, and a Maintainer on the same clock.
func simGraph(tb testing.TB, st objstore.Store, opts data.Options) (*data.Graph, *maintain.Maintainer, *kernel.ManualClock, kernel.BranchRef) {
	tb.Helper()
	s, err := schema.Parse([]byte("node Person { name: string }\n"))
	if err != nil {
		tb.Fatal(err)
	}
	clock := kernel.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Kernel.Env, opts.Kernel.Grace = kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{1})}, time.Minute
	g, err := data.Init(ctx, st, root, s, opts)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := maintain.New(st, root, kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{2})})
	if err != nil {
		tb.Fatal(err)
	}
	main, err := g.Kernel().Branch(ctx, "main")
	if err != nil {
		tb.Fatal(err)
	}
	return g, m, clock, main
}

// BenchmarkLongLivedBranch: one branch forked from main at the start and
// left live, beside n branch-per-change cycles on main (bpcCycle) with a
// collection every 100 cycles, on the simulator's reach bounds (4/2);
// reports the last collection's requests, time, merge-base keeps and kept
// table versions, and the keys after it, at n = 100, 1000, 3000, and a
// control without the long-lived branch at 3000, and at 3000 a long-lived
// branch that merges main into itself before each collection (sync); then
// the requests of a
// cold handle's MergeBase(long-lived, main), and the long-lived branch
// must merge into main. tv-kept counts table-version objects the
// collection kept: 0 since format 11, whose versions ride their manifest
// (no such object), so it now says nothing. Under -short (CI's smoke run)
// each of the three
// kinds of run once, at 100 cycles.
func BenchmarkLongLivedBranch(b *testing.B) {
	type llCase struct {
		n          int
		long, sync bool
	}
	cases := []llCase{{100, true, false}, {1000, true, false}, {3000, true, false}, {3000, false, false}, {3000, true, true}}
	if benchsize.Short() { // CI's smoke run: each kind of run once, at 100 cycles
		cases = []llCase{{100, true, false}, {100, false, false}, {100, true, true}}
	}
	for _, tc := range cases {
		n := tc.n
		b.Run(fmt.Sprintf("cycles=%d/long=%v/sync=%v", n, tc.long, tc.sync), func(b *testing.B) {
			for b.Loop() {
				cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
				bg := llGraph(b, cs, *llEntries, *llFolds)
				bg.insert(b, id(0))
				var long kernel.BranchRef
				var err error
				if tc.long {
					if long, err = bg.g.Kernel().CreateBranch(ctx, "long", bg.main); err != nil {
						b.Fatal(err)
					}
					commitOn(b, bg.g, long, "long-0")
				}
				var rep maintain.Report
				var req uint64
				var dur time.Duration
				for i := 0; i < n; i++ {
					bpcCycle(b, bg, i)
					if (i+1)%100 == 0 {
						if tc.sync { // the long-lived branch takes main in before each collection
							if _, err := bg.g.Merge(ctx, bg.main, long, kernel.LineageIntent{Actor: "b", Message: "sync"}, data.MergeOptions{}); err != nil {
								b.Fatalf("sync after %d cycles: %v", i+1, err)
							}
						}
						r0, t0 := cs.Counts().Requests(), time.Now()
						if rep, err = bg.m.Collect(ctx, bpcPolicy); err != nil {
							b.Fatalf("collection after %d cycles: %+v %v", i+1, rep, err)
						}
						req, dur = cs.Counts().Requests()-r0, time.Since(t0)
					}
				}
				b.ReportMetric(float64(req), "collect-requests")
				b.ReportMetric(float64(dur.Microseconds()), "collect-us")
				b.ReportMetric(float64(rep.MergeBases), "merge-bases")
				b.ReportMetric(float64(rep.TableVersions.Kept), "tv-kept")
				b.ReportMetric(float64(countKeys(b, cs)), "keys")
				coldCollectRounds(b, bg, cs)
				if !tc.long {
					continue
				}
				cold := bg.reopen(b, cs)
				r0, rounds0 := cs.Counts().Requests(), cs.Rounds()
				if _, err := cold.g.Kernel().MergeBase(ctx, long, bg.main); err != nil {
					b.Fatalf("cold merge base of the long-lived branch: %v", err)
				}
				b.ReportMetric(float64(cs.Counts().Requests()-r0), "cold-mergebase-requests")
				b.ReportMetric(float64(cs.Rounds()-rounds0), "cold-mergebase-rounds")
				if _, err := bg.g.Merge(ctx, long, bg.main, kernel.LineageIntent{Actor: "b", Message: "merge long"}, data.MergeOptions{}); err != nil {
					b.Fatalf("merge of the long-lived branch: %v", err)
				}
			}
		})
	}
}

// coldCollectRounds runs a collection on a fresh Maintainer (as each
// `graphkernel maintain` is) twice, reading one object a request and then
// in batches (objstore.GetMany), and reports the sequential rounds of
// each and their ratio: on S3 a round is a round trip.
func coldCollectRounds(b *testing.B, bg *benchGraph, cs *counting.Store) {
	b.Helper()
	var rounds [2]uint64
	for i, through := range []objstore.Store{struct{ objstore.Store }{cs}, cs} { // the first hides GetMany
		m, err := maintain.New(through, root, kernel.Env{Clock: bg.clock, Entropy: rand.NewChaCha8([32]byte{byte(5 + i)})})
		if err != nil {
			b.Fatal(err)
		}
		r0 := cs.Rounds()
		if rep, err := m.Collect(ctx, bpcPolicy); err != nil {
			b.Fatalf("cold collection: %+v %v", rep, err)
		}
		rounds[i] = cs.Rounds() - r0
	}
	b.ReportMetric(float64(rounds[0]), "cold-collect-rounds-one-by-one")
	b.ReportMetric(float64(rounds[1]), "cold-collect-rounds-batched")
	b.ReportMetric(float64(rounds[1])/float64(rounds[0]), "ratio-cold-collect-rounds")
}
