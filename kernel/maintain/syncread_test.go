package maintain_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// deferringTickStore is a batchTickStore (one tick a request or batch)
// that keeps a sim.Deferring's SyncDeferred, so the collector knows it
// defers durability.
type deferringTickStore struct {
	batchTickStore
	d *sim.Deferring
}

func (s deferringTickStore) PutDeferred(ctx context.Context, key string, b []byte) (string, error) {
	return s.d.PutDeferred(ctx, key, b)
}

func (s deferringTickStore) SyncDeferred(ctx context.Context, keys []string) error {
	return s.d.SyncDeferred(ctx, keys)
}

// TestOutOfTimeRunSyncsWhatItRead: on a store that defers durability a
// collection caches a reach read from a commit index only once the index
// is durable, so a run its time bound stops while loading first syncs
// every index it read (syncRead): the indexes it read are durable after
// it, and the runs after it finish the collection. Red without syncRead:
// no index is made durable by the stopped run.
func TestOutOfTimeRunSyncsWhatItRead(t *testing.T) {
	f := newDeferringFixture(t)
	main := f.branch("main")
	f.seed(main, 0)
	var heads []kernel.BranchRef
	for i := range 40 { // 40 live heads: 40 reaches to read
		b := f.fork(fmt.Sprint("b", i), main)
		f.commit(b, func(tx *data.Txn) error { return tx.Update("Person", person("p00", fmt.Sprint("b", i))) })
		heads = append(heads, b)
	}
	keys := format.NewKeys(root)
	volatile := func() int {
		n := 0
		for _, b := range heads {
			if f.base.IsVolatile(keys.CommitIndex(f.head(b))) {
				n++
			}
		}
		return n
	}
	before := volatile()
	if before < 30 {
		t.Fatalf("%d of 40 head indexes volatile before the collection, want most", before)
	}
	f.clock.Advance(10 * time.Minute)
	ts := &tickStore{Store: f.store, clock: f.clock, tick: time.Second}
	d := f.kst.(deferringStore).d
	collector, err := maintain.New(deferringTickStore{batchTickStore{ts}, d}, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{9})})
	if err != nil {
		t.Fatal(err)
	}
	bound := maintain.Policy{Policy: gc.Policy{KeepLast: 3, Grace: time.Minute, SkewMargin: 30 * time.Second}, MaxDuration: 90 * time.Second}
	ts.on = true
	defer func() { ts.on = false }()
	for run := 0; ; run++ {
		rep, err := collector.Collect(ctx, bound)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if run == 0 {
			if !rep.OutOfTime {
				t.Fatalf("run 0 not cut by its bound: %+v", rep)
			}
			if after := volatile(); after >= before {
				t.Fatalf("run 0 stopped at its bound and left %d of the %d volatile head indexes volatile: it synced nothing it read", after, before)
			}
		}
		if rep.Complete {
			return
		}
		if run == 5 {
			t.Fatalf("6 bounded runs and no complete collection")
		}
	}
}
