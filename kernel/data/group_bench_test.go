package data

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
)

// groupBenchCommits is how many commits each configuration makes per
// iteration (divisible by every writer count).
const groupBenchCommits = 96

// BenchmarkGroupCommit measures, side by side in one run on one graph,
// commits per second on one branch with 1, 8 and 32 writer goroutines
// sharing one handle with group commit on (MaxWait 0), each commit one
// small transaction (one node insert), and one writer on today's path
// (group commit off; alternated commit by commit with the grouped one
// writer). Reported: commits/s of each, speedup-8v1 and speedup-32v1
// (grouped N writers over grouped 1 writer), and latency-1v-today (one
// writer's total commit latency grouped over today's).
// Run: go test ./kernel/data/ -run '^$' -bench BenchmarkGroupCommit -benchtime 3x
func BenchmarkGroupCommit(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) objstore.Store
	}{
		{"fs", func(b *testing.B) objstore.Store {
			s, err := fs.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"s3", func(b *testing.B) objstore.Store { return s3test.Start(b).NewStore(b) }},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			store := st.open(b)
			seedGraph(b, initGraph(b, store, Limits{}))
			env := kernel.SystemEnv()
			today, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: env}})
			must(b, err)
			grouped, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: env}, Group: GroupOptions{Enabled: true}})
			must(b, err)
			var seq atomic.Int64
			var today1, group1, group8, group32 time.Duration
			b.ResetTimer()
			for range b.N {
				// One writer, alternating today's path and the grouped one
				// commit by commit, so load and graph growth hit both alike.
				for range groupBenchCommits {
					today1 += timeCommit(b, today, &seq)
					group1 += timeCommit(b, grouped, &seq)
				}
				group8 += runWriters(b, grouped, 8, &seq)
				group32 += runWriters(b, grouped, 32, &seq)
			}
			b.StopTimer()
			rate := func(d time.Duration) float64 { return float64(groupBenchCommits*b.N) / d.Seconds() }
			b.ReportMetric(rate(today1), "commits/s-today-1")
			b.ReportMetric(rate(group1), "commits/s-group-1")
			b.ReportMetric(rate(group8), "commits/s-group-8")
			b.ReportMetric(rate(group32), "commits/s-group-32")
			b.ReportMetric(rate(group8)/rate(group1), "speedup-8v1")
			b.ReportMetric(rate(group32)/rate(group1), "speedup-32v1")
			b.ReportMetric(group1.Seconds()/today1.Seconds(), "latency-1v-today")
		})
	}
}

// timeCommit makes one commit on main through g and returns its latency.
func timeCommit(b *testing.B, g *Graph, seq *atomic.Int64) time.Duration {
	b.Helper()
	start := time.Now()
	must(b, commitOne(g, seq))
	return time.Since(start)
}

// commitOne begins, inserts one Person and commits on main.
func commitOne(g *Graph, seq *atomic.Int64) error {
	id := fmt.Sprintf("b%07d", seq.Add(1))
	br, err := g.Branch(ctx, "main")
	if err != nil {
		return err
	}
	tx, err := g.Begin(ctx, br)
	if err == nil {
		err = tx.Insert("Person", person(id, "bench"))
	}
	if err == nil {
		_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "bench", Message: id})
	}
	return err
}

// runWriters makes groupBenchCommits commits on main through g from
// writers goroutines and returns the elapsed time.
func runWriters(b *testing.B, g *Graph, writers int, seq *atomic.Int64) time.Duration {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range groupBenchCommits / writers {
				if err := commitOne(g, seq); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return elapsed
}
