package data

import (
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
// the same store, alternating, one of each per iteration. It reports the
// medians (commit-ms, put-ms), their ratio (ratio, the goal: <= 3
// on fs, <= 4 on the local S3 server) and the commit's requests/commit;
// on fs also its sync-rounds/commit, fsyncs/commit and mkdirs/commit
// (fs.SyncStats; a raw Put is 2 rounds, 2 fsyncs, ~0.1 mkdirs).
// fs is durable (every PUT fsyncs); s3 is the local versitygw server
// (skipped with GRAPHKERNEL_S3_OPTOUT=1).
func BenchmarkCommitFloor(b *testing.B) {
	for _, st := range benchStores(s3test.Shared) {
		b.Run(st.name, func(b *testing.B) {
			cs := counting.NewWithLogLimit(st.open(b), 0)
			g := initGraph(b, cs, Limits{})
			seedGraph(b, g)
			br := mainRef(b, g)
			payload := make([]byte, 512)
			var commits, puts []time.Duration
			var requests uint64
			var syncs fs.SyncStats
			i := 0
			for b.Loop() {
				before, beforeSyncs := cs.Counts().Requests(), syncStats(cs)
				start := time.Now()
				tx, err := g.Begin(ctx, br)
				must(b, err)
				must(b, tx.Insert("Person", person(fmt.Sprintf("floor-%09d", i), "n")))
				_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"})
				must(b, err)
				commits = append(commits, time.Since(start))
				requests += cs.Counts().Requests() - before
				d := syncStats(cs).Sub(beforeSyncs)
				syncs = fs.SyncStats{Files: syncs.Files + d.Files, Dirs: syncs.Dirs + d.Dirs, Rounds: syncs.Rounds + d.Rounds, Mkdirs: syncs.Mkdirs + d.Mkdirs}
				start = time.Now()
				if _, err := cs.Put(ctx, fmt.Sprintf("raw/put-%09d", i), payload, objstore.CreateOnly); err != nil {
					b.Fatal(err)
				}
				puts = append(puts, time.Since(start))
				i++
			}
			c, p := floorMedian(commits), floorMedian(puts)
			b.ReportMetric(floorMS(c), "commit-ms")
			b.ReportMetric(floorMS(p), "put-ms")
			b.ReportMetric(float64(c)/float64(p), "ratio")
			b.ReportMetric(float64(requests)/float64(i), "requests/commit")
			if st.name == "fs" {
				b.ReportMetric(float64(syncs.Rounds)/float64(i), "sync-rounds/commit")
				b.ReportMetric(float64(syncs.Files+syncs.Dirs)/float64(i), "fsyncs/commit")
				b.ReportMetric(float64(syncs.Mkdirs)/float64(i), "mkdirs/commit")
			}
		})
	}
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
