package data

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/s3/s3test"
)

// groupBenchCommits is how many commits each configuration makes per
// iteration (divisible by every writer count and by groupBenchBlock): 96,
// or 32 under -short (CI's smoke run).
func groupBenchCommits() int { return benchsize.Or(96, 32) }

// groupBenchBlock is how many commits one writer makes on one path before
// the benchmark switches to the other (divides groupBenchCommits).
const groupBenchBlock = 16

// benchRegroupWait is the grouped handles' RegroupWait: ample for a
// writer's turnaround between commits (it ends as soon as they queue).
const benchRegroupWait = 10 * time.Millisecond

// BenchmarkGroupCommit measures, side by side in one run on one graph,
// commits per second on one branch with 1, 8 and 32 writer goroutines
// sharing one handle with group commit on (MaxWait 0, RegroupWait
// benchRegroupWait), each commit one small transaction (one node insert),
// and one writer on today's path (group commit off; alternated with the
// grouped one writer in blocks of groupBenchBlock commits). Reported: commits/s of each,
// speedup-8v1 and speedup-32v1 (grouped N writers over grouped 1 writer),
// latency-1v-today (one writer's total commit latency grouped over
// today's), members/group-8 and -32 (mean group size), and the same 8
// writers on a handle without RegroupWait (commits/s-group-8-noregroup,
// members/group-8-noregroup, speedup-8v1-noregroup); and the store
// requests per commit of the grouped one writer and of the 8 and 32
// writers (requests/commit-1, -8, -32; exact, counted by
// objstore/counting). Under -short (CI's smoke run) groupBenchCommits is
// smaller.
// Run: go test ./kernel/data/ -run '^$' -bench BenchmarkGroupCommit -benchtime 3x
func BenchmarkGroupCommit(b *testing.B) {
	for _, st := range benchStores(s3test.Start) {
		b.Run(st.name, func(b *testing.B) {
			cs := counting.NewWithLogLimit(st.open(b), 0)
			var store objstore.Store = cs
			seedGraph(b, initGraph(b, store, Limits{}))
			open := func(o GroupOptions) *Graph {
				g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kernel.SystemEnv()}, Group: o})
				must(b, err)
				return g
			}
			today := open(GroupOptions{})
			grouped := open(GroupOptions{Enabled: true, RegroupWait: benchRegroupWait})
			plain := open(GroupOptions{Enabled: true})
			var seq atomic.Int64
			var today1, group1 time.Duration
			var group8, group32, plain8 writersRun
			var req1, req8, req32 uint64
			requests := func(f func()) uint64 {
				before := cs.Counts().Requests()
				f()
				return cs.Counts().Requests() - before
			}
			b.ResetTimer()
			for range b.N {
				// One writer, alternating today's path and the grouped one
				// in blocks, so load and graph growth hit both alike. Not
				// commit by commit: each handle's view would then be stale
				// at every commit (the other wrote last) and every commit
				// would pay a rebase (12.0 requests a commit, not 8.2): a
				// race of two writers, not one writer.
				for range groupBenchCommits() / groupBenchBlock {
					for range groupBenchBlock {
						today1 += timeCommit(b, today, &seq)
					}
					for range groupBenchBlock {
						req1 += requests(func() { group1 += timeCommit(b, grouped, &seq) })
					}
				}
				req8 += requests(func() { group8.add(runWriters(b, grouped, 8, &seq)) })
				req32 += requests(func() { group32.add(runWriters(b, grouped, 32, &seq)) })
				plain8.add(runWriters(b, plain, 8, &seq))
			}
			b.StopTimer()
			rate := func(d time.Duration) float64 { return float64(groupBenchCommits()*b.N) / d.Seconds() }
			b.ReportMetric(rate(today1), "commits/s-today-1")
			b.ReportMetric(rate(group1), "commits/s-group-1")
			b.ReportMetric(rate(group8.d), "commits/s-group-8")
			b.ReportMetric(rate(group32.d), "commits/s-group-32")
			b.ReportMetric(rate(plain8.d), "commits/s-group-8-noregroup")
			b.ReportMetric(rate(group8.d)/rate(group1), "speedup-8v1")
			b.ReportMetric(rate(group32.d)/rate(group1), "speedup-32v1")
			b.ReportMetric(rate(plain8.d)/rate(group1), "speedup-8v1-noregroup")
			b.ReportMetric(group1.Seconds()/today1.Seconds(), "latency-1v-today")
			b.ReportMetric(group8.meanSize(), "members/group-8")
			b.ReportMetric(group32.meanSize(), "members/group-32")
			b.ReportMetric(plain8.meanSize(), "members/group-8-noregroup")
			perCommit := func(n uint64) float64 { return float64(n) / float64(groupBenchCommits()*b.N) }
			b.ReportMetric(perCommit(req1), "requests/commit-1")
			b.ReportMetric(perCommit(req8), "requests/commit-8")
			b.ReportMetric(perCommit(req32), "requests/commit-32")
		})
	}
}

// writersRun sums runs of runWriters: elapsed time, commits, and groups
// (each commit in a group of n counts 1/n of a group).
type writersRun struct {
	d       time.Duration
	commits int
	groups  float64
}

func (w *writersRun) add(r writersRun) {
	w.d, w.commits, w.groups = w.d+r.d, w.commits+r.commits, w.groups+r.groups
}

// meanSize is the mean number of members of the groups the commits made.
func (w *writersRun) meanSize() float64 { return float64(w.commits) / w.groups }

// timeCommit makes one commit on main through g and returns its latency.
func timeCommit(b *testing.B, g *Graph, seq *atomic.Int64) time.Duration {
	b.Helper()
	start := time.Now()
	_, err := commitOne(g, seq)
	must(b, err)
	return time.Since(start)
}

// commitOne begins, inserts one Person and commits on main; it returns
// the size of the group the commit landed in.
func commitOne(g *Graph, seq *atomic.Int64) (int, error) {
	id := fmt.Sprintf("b%07d", seq.Add(1))
	br, err := g.Branch(ctx, "main")
	if err != nil {
		return 0, err
	}
	tx, err := g.Begin(ctx, br)
	if err != nil {
		return 0, err
	}
	if err := tx.Insert("Person", person(id, "bench")); err != nil {
		return 0, err
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "bench", Message: id}); err != nil {
		return 0, err
	}
	return tx.Group().Size, nil
}

// runWriters makes groupBenchCommits commits on main through g from
// writers goroutines and returns the elapsed time and the groups made.
func runWriters(b testing.TB, g *Graph, writers int, seq *atomic.Int64) writersRun {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	var mu sync.Mutex
	r := writersRun{commits: groupBenchCommits()}
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range groupBenchCommits() / writers {
				size, err := commitOne(g, seq)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				r.groups += 1 / float64(size)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.d = time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return r
}
