package fs

import (
	"context"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// BenchmarkCommitObjectsFloor is the store's part of a one-row commit on
// fs by the number of objects it writes (issue #32), without the kernel:
// three (a table version deferred, a commit index deferred and a manifest
// whose first sync round syncs both: today's format-9 commit), two (one
// deferred object and the manifest: the table version riding inside the
// manifest, or the index) and one (the manifest alone). Each
// shape and one durable create-only Put run in turn on one Store, so load
// falls on all alike; it reports the Put's median (ms-put) and each
// shape's median over it (three/put, two/put, one/put): what the ≤ 3×
// goal leaves for the kernel's own work at each object count.
func BenchmarkCommitObjectsFloor(b *testing.B) {
	ctx := context.Background()
	s, keys := benchStore(b)
	id := func() format.ID { return ulid.Make() }
	fork := id()
	version := uint64(0)
	var three, two, one, puts []time.Duration
	commit := func(objs int) time.Duration {
		start := time.Now()
		var after []string
		if objs >= 2 {
			ver := keys.TableAttempt("T", fork, id())
			if _, err := s.PutDeferred(ctx, ver, make([]byte, 1500)); err != nil {
				b.Fatal(err)
			}
			after = append(after, ver)
		}
		version++
		reqs := []objstore.PutRequest{}
		if objs >= 3 {
			index := objstore.PutRequest{Key: keys.CommitIndex(id()), Data: make([]byte, 300), Cond: objstore.CreateOnly, Durability: objstore.DeferAll}
			reqs = append(reqs, index)
			after = append(after, index.Key)
		}
		reqs = append(reqs, objstore.PutRequest{Key: keys.Manifest("main", 1, version), Data: make([]byte, 700), Cond: objstore.CreateOnly, After: after})
		for i, r := range s.PutMany(ctx, reqs) {
			if r.Err != nil {
				b.Fatalf("request %d: %v", i, r.Err)
			}
		}
		return time.Since(start)
	}
	commit(3)
	commit(2)
	commit(1)
	for b.Loop() {
		three = append(three, commit(3))
		two = append(two, commit(2))
		one = append(one, commit(1))
		start := time.Now()
		if _, err := s.Put(ctx, keys.Data("raw", id()), make([]byte, 512), objstore.CreateOnly); err != nil {
			b.Fatal(err)
		}
		puts = append(puts, time.Since(start))
	}
	med := medianMS
	p := med(puts)
	b.ReportMetric(p, "ms-put")
	b.ReportMetric(med(three)/p, "three/put")
	b.ReportMetric(med(two)/p, "two/put")
	b.ReportMetric(med(one)/p, "one/put")
}
