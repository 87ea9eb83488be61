package fs

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// BenchmarkRiddenIndex isolates the second round of a one-row commit on
// fs (issue #32): after a batch of two deferred objects (a fragment and a
// table version, objstore.DeferAll), one PutMany of a commit index and a
// manifest that names the deferred keys in After. Two shapes, alternating
// on one durable Store, one of each per iteration, so load falls on both
// alike: intact (before session 17: the index an unconditional DeferName
// write with its own temp fsync and key lock, independent of the
// manifest) and ridden (the index a create-only DeferAll write the
// manifest names in After: synced in the manifest's first round). It
// reports each shape's median round time (ms-intact, ms-ridden), their
// ratio (ridden/intact), and one durable create-only Put's median
// (ms-put) as the yardstick.
func BenchmarkRiddenIndex(b *testing.B) {
	ctx := context.Background()
	s, keys := benchStore(b)
	id := func() format.ID { return ulid.Make() }
	fork := id()
	version := uint64(0)
	var intact, ridden, puts []time.Duration
	round := func(ride bool) time.Duration {
		frag, ver := keys.Data("T", id()), keys.TableAttempt("T", fork, id())
		for i, r := range s.PutMany(ctx, []objstore.PutRequest{
			{Key: frag, Data: make([]byte, 600), Cond: objstore.CreateOnly, Durability: objstore.DeferAll},
			{Key: ver, Data: make([]byte, 300), Cond: objstore.CreateOnly, Durability: objstore.DeferAll},
		}) {
			if r.Err != nil {
				b.Fatalf("round 1, request %d: %v", i, r.Err)
			}
		}
		version++
		index := objstore.PutRequest{Key: keys.CommitIndex(id()), Data: make([]byte, 200), Cond: objstore.Unconditional, Durability: objstore.DeferName}
		manifest := objstore.PutRequest{Key: keys.Manifest("main", 1, version), Data: make([]byte, 700), Cond: objstore.CreateOnly, After: []string{frag, ver}}
		if ride {
			index.Cond, index.Durability = objstore.CreateOnly, objstore.DeferAll
			manifest.After = append(manifest.After, index.Key)
		}
		start := time.Now()
		for i, r := range s.PutMany(ctx, []objstore.PutRequest{index, manifest}) {
			if r.Err != nil {
				b.Fatalf("round 2, request %d: %v", i, r.Err)
			}
		}
		return time.Since(start)
	}
	round(false) // the first syncs every directory on the paths
	round(true)
	for b.Loop() {
		intact = append(intact, round(false))
		ridden = append(ridden, round(true))
		start := time.Now()
		if _, err := s.Put(ctx, keys.Data("raw", id()), make([]byte, 512), objstore.CreateOnly); err != nil {
			b.Fatal(err)
		}
		puts = append(puts, time.Since(start))
	}
	med := medianMS
	b.ReportMetric(med(intact), "ms-intact")
	b.ReportMetric(med(ridden), "ms-ridden")
	b.ReportMetric(med(puts), "ms-put")
	b.ReportMetric(med(ridden)/med(intact), "ridden/intact")
}

// medianMS is the median of d in milliseconds (the benchmarks' yardstick:
// robust to the shared machine's outliers).
func medianMS(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2]) / float64(time.Millisecond)
}

// benchStore is a durable Store in a fresh directory, and the keys of a
// graph "g" on it.
func benchStore(b *testing.B) (*Store, format.Keys) {
	b.Helper()
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return s, format.NewKeys("g")
}

// BenchmarkPutManyInOrder times one PutMany of n requests — n-1 deferred
// creates (objstore.DeferAll) and a manifest whose After names them all,
// a commit's shape — run in order (one worker) and concurrently
// (syncWorkers), alternating on one durable Store, for n = 2, 3, 4, 8 and
// 32. It reports each side's median (ms-inorder-n, ms-concurrent-n) and
// their ratio (inorder/concurrent-n): below 1, order wins. PutMany runs
// batches of at most inOrderBatch in order.
func BenchmarkPutManyInOrder(b *testing.B) {
	ctx := context.Background()
	s, keys := benchStore(b)
	id := func() format.ID { return ulid.Make() }
	sizes := []int{2, 3, 4, 8, 32}
	version := uint64(0)
	batch := func(n, workers int) time.Duration {
		reqs := make([]objstore.PutRequest, 0, n)
		var after []string
		for range n - 1 {
			k := keys.Data("T", id())
			reqs = append(reqs, objstore.PutRequest{Key: k, Data: make([]byte, 600), Cond: objstore.CreateOnly, Durability: objstore.DeferAll})
			after = append(after, k)
		}
		version++
		reqs = append(reqs, objstore.PutRequest{Key: keys.Manifest("main", 1, version), Data: make([]byte, 700), Cond: objstore.CreateOnly, After: after})
		start := time.Now()
		for i, r := range s.putMany(ctx, reqs, workers) {
			if r.Err != nil {
				b.Fatalf("batch of %d, request %d: %v", n, i, r.Err)
			}
		}
		return time.Since(start)
	}
	inOrder, concurrent := make([][]time.Duration, len(sizes)), make([][]time.Duration, len(sizes))
	batch(2, 1) // the first syncs every directory on the paths
	for b.Loop() {
		for i, n := range sizes {
			inOrder[i] = append(inOrder[i], batch(n, 1))
			concurrent[i] = append(concurrent[i], batch(n, syncWorkers))
		}
	}
	for i, n := range sizes {
		o, c := medianMS(inOrder[i]), medianMS(concurrent[i])
		b.ReportMetric(o, fmt.Sprintf("ms-inorder-%d", n))
		b.ReportMetric(c, fmt.Sprintf("ms-concurrent-%d", n))
		b.ReportMetric(o/c, fmt.Sprintf("inorder/concurrent-%d", n))
	}
}
