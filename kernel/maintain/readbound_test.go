package maintain_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// batchTickStore is a tickStore whose batched reads (objstore.GetMany)
// take one tick a batch, as a store that runs a batch's requests
// concurrently does (fs, S3): one round.
type batchTickStore struct{ *tickStore }

func (s batchTickStore) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	s.advance()
	return objstore.GetMany(ctx, s.tickStore.Store, keys)
}

// TestCollectionReadsStopAtTheBound: a run whose loading alone outlasts
// the time its record allows deleting in (MaxDuration less the skew
// margin) stops reading there — Report.OutOfTime, Complete false, no
// error, nothing deleted — instead of reading on for as long as the load
// takes; what it read stays in the Maintainer's cache, so later runs,
// each within its bound, finish the collection. Before, reads were not
// bounded (only deletes were): the run read every retained manifest
// (here ~150 s of requests under a 60 s bound), then deleted nothing.
func TestCollectionReadsStopAtTheBound(t *testing.T) {
	f := newObjectsFixture(t)
	main := f.branch("main")
	f.seed(main, 0)
	for i := 0; i < 150; i++ {
		f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p00", fmt.Sprint("v", i))) })
	}
	f.clock.Advance(10 * time.Minute)
	const tick = time.Second // one store request
	ts := &tickStore{Store: f.store, clock: f.clock, tick: tick}
	collector, err := maintain.New(batchTickStore{ts}, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{9})})
	if err != nil {
		t.Fatal(err)
	}
	// 150 manifests retained (KeepLast): loading them alone takes ~150 s.
	bound := maintain.Policy{Policy: gc.Policy{KeepLast: 150, Grace: time.Minute, SkewMargin: 30 * time.Second}, MaxDuration: 90 * time.Second}
	deletable := bound.MaxDuration - bound.SkewMargin
	ts.on = true
	defer func() { ts.on = false }()
	for run := 0; ; run++ {
		start := f.clock.Now()
		rep, err := collector.Collect(ctx, bound)
		took := f.clock.Now().Sub(start)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		t.Logf("run %d: %v, out of time %v, complete %v, manifests kept %d", run, took, rep.OutOfTime, rep.Complete, rep.Manifests.Kept)
		// A run reads past its deletable time by at most the step in
		// flight (one manifest or reach: a few requests) and its record's
		// removal.
		if took > deletable+5*tick {
			t.Fatalf("run %d took %v of requests under a %v bound (deletable %v): its reads are not bounded", run, took, bound.MaxDuration, deletable)
		}
		if run == 0 && (!rep.OutOfTime || rep.Complete) {
			t.Fatalf("run 0 not cut by its bound: %+v", rep)
		}
		if rep.OutOfTime && rep.Complete {
			t.Fatalf("run %d: out of time and complete: %+v", run, rep)
		}
		if rep.Complete {
			if run < 2 {
				t.Fatalf("finished in %d runs: the load does not outlast the bound", run+1)
			}
			return
		}
		if run == 5 {
			t.Fatalf("6 bounded runs and no complete collection: runs make no progress through the cache")
		}
	}
}
