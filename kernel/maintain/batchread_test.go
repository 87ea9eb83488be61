package maintain_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// readCountingStore counts read requests: one per Get, and, when batched
// is set, one per GetMany (objstore.BatchGetter, served key by key from
// the store underneath, uncounted).
type readCountingStore struct {
	objstore.Store
	requests, batchedKeys, batchedIndexes int
}

func (s *readCountingStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	s.requests++
	return s.Store.Get(ctx, key)
}

type batchReadStore struct{ *readCountingStore }

func (s batchReadStore) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	s.requests++
	s.batchedKeys += len(keys)
	out := make([]objstore.GetResult, len(keys))
	for i, k := range keys {
		if strings.Contains(k, "/index/commits/") {
			s.batchedIndexes++
		}
		out[i].Object, out[i].Err = s.Store.Get(ctx, k)
	}
	return out
}

// longLivedHistory builds, on a new simulated store, main with a branch
// forked at the start and left live beside n branch-per-change cycles,
// with the simulator's reach bounds (4/2), so a collection keeps main's
// folds since the fork as merge bases (docs/gc.md rule 3b) with what they
// pin. It returns the store and the clock, advanced past every grace.
func longLivedHistory(t *testing.T, n int) (objstore.Store, *kernel.ManualClock) {
	t.Helper()
	st := sim.New(sim.Config{Seed: 1})
	g, _, clock, main := simGraph(t, st, data.Options{Kernel: kernel.Options{ReachEntries: 4, ReachFolds: 2}})
	commit := func(b kernel.BranchRef, id string) {
		tx, err := g.Begin(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Insert("Person", data.Row{ID: id, Props: map[string]any{"name": id}}); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "t"}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	commit(main, "p0")
	long, err := g.Kernel().CreateBranch(ctx, "long", main)
	if err != nil {
		t.Fatal(err)
	}
	commit(long, "long0")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("c%03d", i)
		b, err := g.Kernel().CreateBranch(ctx, name, main)
		if err != nil {
			t.Fatal(err)
		}
		commit(b, name)
		if _, err := g.Merge(ctx, b, main, kernel.LineageIntent{Actor: "t"}, data.MergeOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := g.Kernel().DeleteBranch(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Hour)
	return st, clock
}

// TestColdCollectionBatchesReads: a collection on a store that batches
// reads (objstore.BatchGetter) reads the table versions it marks (and the
// manifests rule 3b keeps that its search did not read) in batches, reads
// the manifests and commit indexes of the folds a loaded reach names
// ahead in batches (readAheadFolds), and decides exactly as one that reads
// them one by one. Beside a long-lived branch a cold collection
// reads every kept merge base's manifest and every kept version: at the
// simulator's latency the lifetime soak's janitor spent minutes of its
// one-minute bound on such reads (docs/invariants.md V10, seed 3), and on
// S3 each is a round trip.
func TestColdCollectionBatchesReads(t *testing.T) {
	const cycles = 60
	var reports [2]maintain.Report
	var requests [2]int
	batched, indexes := 0, 0
	for i, batch := range []bool{false, true} {
		st, clock := longLivedHistory(t, cycles)
		counted := &readCountingStore{Store: st}
		var through objstore.Store = counted
		if batch {
			through = batchReadStore{counted}
		}
		m, err := maintain.New(through, root, kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{7})})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := m.Collect(ctx, bpcPolicy)
		if err != nil || !rep.Complete {
			t.Fatalf("batch=%v: collect: %+v %v", batch, rep, err)
		}
		reports[i], requests[i] = rep, counted.requests
		if batch {
			batched, indexes = counted.batchedKeys, counted.batchedIndexes
		}
	}
	t.Logf("cold collection beside a long-lived branch after %d cycles: %d merge bases kept, %d table versions kept; %d read requests one by one, %d with batches (%d keys batched, %d of them commit indexes)",
		cycles, reports[0].MergeBases, reports[0].TableVersions.Kept, requests[0], requests[1], batched, indexes)
	if reports[0] != reports[1] {
		t.Fatalf("the batched collection decided otherwise:\n one by one %+v\n batched    %+v", reports[0], reports[1])
	}
	if reports[0].MergeBases < 10 {
		t.Fatalf("only %d merge bases kept: the history is too short to show batching", reports[0].MergeBases)
	}
	if indexes < reports[0].MergeBases/2 {
		t.Errorf("%d commit indexes read ahead in batches, want at least half the %d merge bases: the reach walk reads its folds one by one", indexes, reports[0].MergeBases)
	}
	if batched < reports[0].TableVersions.Kept || requests[1]+batched/2 > requests[0] {
		t.Errorf("batched reads: %d requests (%d keys in batches) against %d one by one; want every kept table version (%d) read in a batch and at least half the batched keys saved",
			requests[1], batched, requests[0], reports[0].TableVersions.Kept)
	}
}
