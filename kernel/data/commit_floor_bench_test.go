package data

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
// the same store, alternating, one of each per iteration. It reports the
// medians (commit-ms, put-ms), their ratio (ratio, the goal: <= 3
// on fs, <= 4 on the local S3 server), the commit's requests/commit and
// its sequential rounds of requests (rounds/commit, counting.Store.Rounds);
// on fs also its sync-rounds/commit, fsyncs/commit and mkdirs/commit
// (fs.SyncStats; a raw Put is 2 rounds, 2 fsyncs, ~0.1 mkdirs).
// fs is durable (every PUT fsyncs) on a new root (layout trie3); s3 is
// the local versitygw server (skipped with GRAPHKERNEL_S3_OPTOUT=1).
//
// Each iteration also steps a second store of the same kind without the
// batch capability (noBatch: the fragment and the table version, and the
// commit index and the manifest, which the first store's
// objstore.BatchPutter issues concurrently, go out one after another: the
// request structure before batching), interleaved
// with the first so that the machine's load falls on both alike; its
// figures carry the suffix -seq.
//
// fs-layouts runs two durable fs stores in one loop, a new root (trie3)
// and a root an earlier version marked trie2 (every ULID-named object
// makes its own chain of trie directories), alternating, one commit and
// one PUT on each per iteration, and reports each side's figures
// (@trie3, @trie2) and commit-trie2/trie3, the ratio of their commit
// medians taken at the same moments.
func BenchmarkCommitFloor(b *testing.B) {
	for _, st := range benchStores(s3test.Shared) {
		b.Run(st.name, func(b *testing.B) {
			batch := newFloorSide(b, st.open(b), false)
			seq := newFloorSide(b, st.open(b), true)
			for b.Loop() {
				batch.step(b)
				seq.step(b)
			}
			batch.report(b, "", st.name == "fs")
			seq.report(b, "-seq", st.name == "fs")
		})
	}
	b.Run("fs-layouts", func(b *testing.B) {
		trie3, trie2 := newFloorSide(b, benchStores(nil)[0].open(b), false), newFloorSide(b, openTrie2Store(b), false)
		for b.Loop() {
			trie3.step(b)
			trie2.step(b)
		}
		trie3.report(b, "@trie3", true)
		trie2.report(b, "@trie2", true)
		b.ReportMetric(float64(floorMedian(trie2.commits))/float64(floorMedian(trie3.commits)), "commit-trie2/trie3")
	})
}

// floorSide is one store BenchmarkCommitFloor times: a seeded graph on
// it, and the samples and counts taken so far.
type floorSide struct {
	cs               *counting.Store
	g                *Graph
	br               kernel.BranchRef
	payload          []byte
	commits          []time.Duration
	puts             []time.Duration
	requests, rounds uint64
	syncs            fs.SyncStats
}

// newFloorSide opens a seeded graph on st (seq: through noBatch).
func newFloorSide(b *testing.B, st objstore.Store, seq bool) *floorSide {
	cs := counting.NewWithLogLimit(st, 0)
	var kst objstore.Store = cs
	if seq {
		kst = noBatch{cs}
	}
	g := initGraph(b, kst, Limits{})
	seedGraph(b, g)
	return &floorSide{cs: cs, g: g, br: mainRef(b, g), payload: make([]byte, 512)}
}

// step times one one-row commit, then one raw create-only PUT.
func (f *floorSide) step(b *testing.B) {
	i := len(f.commits)
	before, beforeRounds, beforeSyncs := f.cs.Counts().Requests(), f.cs.Rounds(), syncStats(f.cs)
	start := time.Now()
	tx, err := f.g.Begin(ctx, f.br)
	must(b, err)
	must(b, tx.Insert("Person", person(fmt.Sprintf("floor-%09d", i), "n")))
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"})
	must(b, err)
	f.commits = append(f.commits, time.Since(start))
	f.requests += f.cs.Counts().Requests() - before
	f.rounds += f.cs.Rounds() - beforeRounds
	d := syncStats(f.cs).Sub(beforeSyncs)
	f.syncs = fs.SyncStats{Files: f.syncs.Files + d.Files, Dirs: f.syncs.Dirs + d.Dirs, Rounds: f.syncs.Rounds + d.Rounds, Mkdirs: f.syncs.Mkdirs + d.Mkdirs}
	start = time.Now()
	if _, err := f.cs.Put(ctx, fmt.Sprintf("raw/put-%09d", i), f.payload, objstore.CreateOnly); err != nil {
		b.Fatal(err)
	}
	f.puts = append(f.puts, time.Since(start))
}

// report reports the side's medians and counts, each metric's unit
// followed by suffix; syncs adds the fs store's sync counts.
func (f *floorSide) report(b *testing.B, suffix string, syncs bool) {
	n := float64(len(f.commits))
	c, p := floorMedian(f.commits), floorMedian(f.puts)
	b.ReportMetric(floorMS(c), "commit-ms"+suffix)
	b.ReportMetric(floorMS(p), "put-ms"+suffix)
	b.ReportMetric(float64(c)/float64(p), "ratio"+suffix)
	b.ReportMetric(float64(f.requests)/n, "requests/commit"+suffix)
	b.ReportMetric(float64(f.rounds)/n, "rounds/commit"+suffix)
	if syncs {
		b.ReportMetric(float64(f.syncs.Rounds)/n, "sync-rounds/commit"+suffix)
		b.ReportMetric(float64(f.syncs.Files+f.syncs.Dirs)/n, "fsyncs/commit"+suffix)
		b.ReportMetric(float64(f.syncs.Mkdirs)/n, "mkdirs/commit"+suffix)
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

// openTrie2Store opens a durable fs store on a fresh root marked trie2,
// as a version before trie3 left it (the marker directory alone: Open
// keeps a marked root's layout).
func openTrie2Store(b *testing.B) objstore.Store {
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".layout-trie2"), 0o755); err != nil {
		b.Fatal(err)
	}
	s, err := fs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return s
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
