package maintain_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// immutableGets counts, among GETs by key, those of objects named by a
// fresh ULID and never rewritten: table versions named per attempt and
// index chunks (adj/).
func immutableGets(gets map[string]int) (versions, chunks int) {
	for k, n := range gets {
		switch {
		case strings.HasPrefix(k, root+"/tables/") && strings.Contains(k, "/a/"):
			versions += n
		case strings.HasPrefix(k, root+"/adj/"):
			chunks += n
		}
	}
	return versions, chunks
}

// TestMaintainerRereadsNoImmutableObject: a Maintainer's next collection
// reads no table version named per attempt and no index chunk its last
// one read (their keys are never rewritten), so a run's marking costs what
// changed since, not the kept set (docs/gc.md §7, capacity). A fresh
// Maintainer (the control) reads them all again.
func TestMaintainerRereadsNoImmutableObject(t *testing.T) {
	f := newFixture(t)
	counter := &getCounter{Store: f.store.Store, gets: map[string]int{}}
	f.store.Store = counter
	main := f.branch("main")
	f.seed(main, 12)
	for i := 0; i < 6; i++ {
		f.commit(main, func(tx *data.Txn) error {
			return tx.Insert("Knows", data.Row{ID: fmt.Sprint("k", i), From: fmt.Sprintf("p%02d", i), To: fmt.Sprintf("p%02d", i+1)})
		})
	}
	f.clock.Advance(10 * time.Minute)
	f.collect(policy)
	v1, c1 := immutableGets(counter.take())
	if v1 == 0 {
		t.Fatal("the first collection read no table version named per attempt: the test sees nothing")
	}
	f.collect(policy)
	v2, c2 := immutableGets(counter.take())
	fresh, err := maintain.New(f.store, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{3})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Collect(ctx, policy); err != nil {
		t.Fatal(err)
	}
	v3, c3 := immutableGets(counter.take())
	t.Logf("first collection: %d named versions, %d chunks read; next on the same Maintainer: %d, %d; a fresh Maintainer: %d, %d", v1, c1, v2, c2, v3, c3)
	if v2 != 0 || c2 != 0 {
		t.Errorf("the same Maintainer's next collection read %d named versions and %d chunks, want 0 (nothing changed)", v2, c2)
	}
	if v3 == 0 {
		t.Errorf("a fresh Maintainer read no named version: the control sees nothing")
	}
}

// BenchmarkCollectWarmMaintainer: n live branches, each holding kept table
// versions named per attempt; per iteration one new commit on main, then a
// collection by the Maintainer that ran the earlier ones (warm: its cache
// of immutable objects, docs/gc.md §7) and one by a fresh Maintainer
// (cold), interleaved. It reports the requests of each
// (warm-requests/collect, cold-requests/collect) and warm/cold; the warm
// collection still lists every key and reads every manifest, so the ratio
// falls as the kept set grows. Under -short (CI's smoke run) 10 branches
// only.
func BenchmarkCollectWarmMaintainer(b *testing.B) {
	for _, n := range benchsize.Smallest([]int{10, 100}) {
		b.Run(fmt.Sprintf("branches=%d", n), func(b *testing.B) {
			cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 0)
			bg := newBenchGraph(b, cs)
			bg.insert(b, id(0))
			for i := 0; i < n; i++ {
				f, err := bg.g.Kernel().CreateBranch(ctx, fmt.Sprintf("f%03d", i), bg.main)
				if err != nil {
					b.Fatal(err)
				}
				commitOn(b, bg.g, f, id(1+i))
			}
			bg.clock.Advance(time.Hour)
			collect := func(m *maintain.Maintainer) uint64 {
				before := cs.Counts().Requests()
				rep, err := m.Collect(ctx, policy)
				if err != nil || !rep.Complete {
					b.Fatalf("collect: %+v %v", rep, err)
				}
				return cs.Counts().Requests() - before
			}
			collect(bg.m)
			var warm, cold uint64
			i := 0
			for b.Loop() {
				i++
				bg.insert(b, id(n+i))
				bg.clock.Advance(time.Hour)
				warm += collect(bg.m)
				fresh, err := maintain.New(cs, root, kernel.Env{Clock: bg.clock, Entropy: rand.NewChaCha8([32]byte{byte(i)})})
				if err != nil {
					b.Fatal(err)
				}
				cold += collect(fresh)
			}
			b.ReportMetric(float64(warm)/float64(b.N), "warm-requests/collect")
			b.ReportMetric(float64(cold)/float64(b.N), "cold-requests/collect")
			b.ReportMetric(float64(warm)/float64(cold), "warm/cold")
		})
	}
}

// TestConcurrentCollectsShareOneMaintainer: collections run at once on one
// Maintainer share its cache of immutable objects (immutable.go says it is
// safe for that); between rounds, writers commit on two branches. Every
// collection succeeds, and a fresh handle then reads both heads whole. CI
// runs it under the race detector (.ci/run), where it is red without the
// cache's mutex.
func TestConcurrentCollectsShareOneMaintainer(t *testing.T) {
	f := newFixture(t)
	main := f.branch("main")
	f.seed(main, 4)
	feat := f.fork("feat", main)
	for round := range 4 {
		for _, b := range []kernel.BranchRef{main, feat} {
			f.commit(b, func(tx *data.Txn) error {
				return tx.Update("Person", person("p00", fmt.Sprintf("%s-%d", b.Name(), round)))
			})
		}
		f.clock.Advance(10 * time.Minute)
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := f.m.Collect(ctx, policy)
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a concurrent collection: %v", round, err)
			}
		}
	}
	for _, b := range []kernel.BranchRef{main, feat} {
		name, err := f.reopenRead(f.head(b))
		if want := b.Name() + "-3"; err != nil || name != want {
			t.Fatalf("%s head after concurrent collections: p00 %q, %v; want %q", b.Name(), name, err, want)
		}
	}
}
