package data

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
)

// BenchmarkCommitFloor measures issue #32's ratio side by side in one run:
// a one-row data-plane commit (Begin, Insert, Commit on a warm handle whose
// view is current) against one raw create-only PUT of a small object on
// the same store, alternating. It reports the medians (commit-ms, put-ms),
// their ratio (ratio, the goal: <= 3 on fs, <= 4 on the local S3
// server), the commit's requests/commit and its sequential rounds of
// requests (rounds/commit, counting.Store.Rounds); on fs also its
// sync-rounds/commit, fsyncs/commit and mkdirs/commit (fs.SyncStats; a raw
// Put is 2 rounds, 2 fsyncs, ~0.1 mkdirs). fs is durable (every PUT
// fsyncs); s3 is the local versitygw server (skipped with
// GRAPHKERNEL_S3_OPTOUT=1).
//
// Each iteration also commits on a second graph on a second store of the
// same kind without the batch capability (noBatch: the fragment and the
// table version, which the first store's objstore.BatchPutter issues
// concurrently, go out one after another: the request structure before
// batching), interleaved with the first so that the machine's load falls
// on both alike: seq-commit-ms, seq-ratio, seq-rounds/commit. put-ms pools
// both stores' raw PUTs.
func BenchmarkCommitFloor(b *testing.B) {
	for _, st := range benchStores(s3test.Shared) {
		b.Run(st.name, func(b *testing.B) {
			batch, seq := newFloorRun(b, st, false), newFloorRun(b, st, true)
			var puts []time.Duration
			i := 0
			for b.Loop() {
				for _, r := range []*floorRun{batch, seq} {
					r.commit(b, i)
					puts = append(puts, r.put(b, i))
				}
				i++
			}
			p := floorMedian(puts)
			b.ReportMetric(floorMS(p), "put-ms")
			batch.report(b, "", p, i)
			seq.report(b, "seq-", p, i)
		})
	}
}

// floorRun is one graph of BenchmarkCommitFloor and what its commits cost.
type floorRun struct {
	cs               *counting.Store
	g                *Graph
	br               kernel.BranchRef
	payload          []byte
	commits          []time.Duration
	requests, rounds uint64
	syncs            fs.SyncStats
}

// newFloorRun opens a store of st and a seeded graph on it (seq: through
// noBatch).
func newFloorRun(b *testing.B, st benchStore, seq bool) *floorRun {
	cs := counting.NewWithLogLimit(st.open(b), 0)
	var kst objstore.Store = cs
	if seq {
		kst = noBatch{cs}
	}
	g := initGraph(b, kst, Limits{})
	seedGraph(b, g)
	return &floorRun{cs: cs, g: g, br: mainRef(b, g), payload: make([]byte, 512)}
}

// commit makes one one-row commit and records its time and costs.
func (r *floorRun) commit(b *testing.B, i int) {
	before, beforeRounds, beforeSyncs := r.cs.Counts().Requests(), r.cs.Rounds(), syncStats(r.cs)
	start := time.Now()
	tx, err := r.g.Begin(ctx, r.br)
	must(b, err)
	must(b, tx.Insert("Person", person(fmt.Sprintf("floor-%09d", i), "n")))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"})
	must(b, err)
	r.commits = append(r.commits, time.Since(start))
	r.requests += r.cs.Counts().Requests() - before
	r.rounds += r.cs.Rounds() - beforeRounds
	d := syncStats(r.cs).Sub(beforeSyncs)
	r.syncs = fs.SyncStats{Files: r.syncs.Files + d.Files, Dirs: r.syncs.Dirs + d.Dirs, Rounds: r.syncs.Rounds + d.Rounds, Mkdirs: r.syncs.Mkdirs + d.Mkdirs}
}

// put makes one raw create-only PUT and returns its time.
func (r *floorRun) put(b *testing.B, i int) time.Duration {
	start := time.Now()
	if _, err := r.cs.Put(ctx, fmt.Sprintf("raw/put-%09d", i), r.payload, objstore.CreateOnly); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// report reports r's metrics, each name prefixed, against the PUT median p
// over n iterations.
func (r *floorRun) report(b *testing.B, prefix string, p time.Duration, n int) {
	c := floorMedian(r.commits)
	b.ReportMetric(floorMS(c), prefix+"commit-ms")
	b.ReportMetric(float64(c)/float64(p), prefix+"ratio")
	b.ReportMetric(float64(r.requests)/float64(n), prefix+"requests/commit")
	b.ReportMetric(float64(r.rounds)/float64(n), prefix+"rounds/commit")
	if _, ok := r.cs.Inner().(*fs.Store); ok {
		b.ReportMetric(float64(r.syncs.Rounds)/float64(n), prefix+"sync-rounds/commit")
		b.ReportMetric(float64(r.syncs.Files+r.syncs.Dirs)/float64(n), prefix+"fsyncs/commit")
		b.ReportMetric(float64(r.syncs.Mkdirs)/float64(n), prefix+"mkdirs/commit")
	}
}

// noBatch is a store without the objstore.BatchPutter capability (a
// PutMany through it is one request after another, each counted as its
// own round by the counting store it wraps) that keeps the
// deferred-durability capabilities of the store it wraps, so on fs the
// durability path is the same as with the batch.
type noBatch struct{ objstore.Store }

func (s noBatch) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	etag, _, err := objstore.PutDeferred(ctx, s.Store, key, data)
	return etag, err
}

func (s noBatch) SyncDeferred(ctx context.Context, keys []string) error {
	return objstore.SyncDeferred(ctx, s.Store, keys)
}

func (s noBatch) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	return objstore.PutDeferredIntact(ctx, s.Store, key, data, cond)
}

func (s noBatch) PutAfterDeferred(ctx context.Context, key string, data []byte, cond objstore.Condition, deferred []string) (string, error) {
	return objstore.PutAfterDeferred(ctx, s.Store, key, data, cond, deferred)
}

// benchStore is a store a commit benchmark runs on.
type benchStore struct {
	name string
	open func(b *testing.B) objstore.Store
}

// benchStores are BenchmarkCommitFloor's and BenchmarkGroupCommit's
// stores: a durable fs store in a fresh directory, and the local S3
// server (s3: s3test.Shared or s3test.Start).
func benchStores(s3 func(testing.TB) *s3test.Server) []benchStore {
	return []benchStore{
		{"fs", func(b *testing.B) objstore.Store {
			s, err := fs.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"s3", func(b *testing.B) objstore.Store { return s3(b).NewStore(b) }},
	}
}

// syncStats is the fs store's sync counts under cs (zero on another store).
func syncStats(cs *counting.Store) fs.SyncStats {
	if s, ok := cs.Inner().(*fs.Store); ok {
		return s.SyncStats()
	}
	return fs.SyncStats{}
}

func floorMedian(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func floorMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
