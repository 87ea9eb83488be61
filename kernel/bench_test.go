package kernel_test

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
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// costDepths are the history depths of the cost benchmarks.
var costDepths = []int{10, 100, 1000, 10000}

// buildHistory initialises a graph on store and publishes depth commits on
// main, each committing a new version of table "a" (so the manifest chain
// and the table chain are both depth long), plus a branch "feature" forked
// at the end. It goes through the public API commit by commit (about 0.5 s
// for depth 10000 on the sim store), so the history is exactly what real
// use produces.
func buildHistory(tb testing.TB, store objstore.Store, depth int) {
	tb.Helper()
	g := mustInit(tb, store, 1)
	main := mustBranch(tb, g, "main")
	for i := 0; i < depth; i++ {
		u, err := g.CommitTableVersion(ctx, main, "a", kernel.TableContent{Fragments: []string{fmt.Sprint(i)}, Rows: uint64(i)}, kernel.TableRef{})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := g.Publish(ctx, main, []kernel.TableUpdate{u}, kernel.LineageIntent{Actor: "setup"}, nil); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := g.CreateBranch(ctx, "feature", main); err != nil {
		tb.Fatal(err)
	}
}

// commitCost is the request and byte cost of one uncontended commit by a
// handle whose cache does not hold the branch head (another writer moved it).
type commitCost struct {
	tableVersion counting.Counts // CommitTableVersion of one table
	publish      counting.Counts // Publish of that version, on a stale view
	// publishCurrent is a Publish by the same handle right after its own:
	// its view of the branch is current (issue #32).
	publishCurrent counting.Counts
}

func diff(a, b counting.Counts) counting.Counts {
	sub := func(x, y counting.OpCounts) counting.OpCounts {
		return counting.OpCounts{Requests: x.Requests - y.Requests, Errors: x.Errors - y.Errors}
	}
	return counting.Counts{Get: sub(a.Get, b.Get), Head: sub(a.Head, b.Head), List: sub(a.List, b.List), Put: sub(a.Put, b.Put),
		Delete: sub(a.Delete, b.Delete), BytesRead: a.BytesRead - b.BytesRead, BytesWritten: a.BytesWritten - b.BytesWritten}
}

func add(a, b counting.Counts) counting.Counts {
	sum := func(x, y counting.OpCounts) counting.OpCounts {
		return counting.OpCounts{Requests: x.Requests + y.Requests, Errors: x.Errors + y.Errors}
	}
	return counting.Counts{Get: sum(a.Get, b.Get), Head: sum(a.Head, b.Head), List: sum(a.List, b.List), Put: sum(a.Put, b.Put),
		Delete: sum(a.Delete, b.Delete), BytesRead: a.BytesRead + b.BytesRead, BytesWritten: a.BytesWritten + b.BytesWritten}
}

// measureCommit makes one commit through g (on the counting store cs) while
// other (on the uncounted inner store) advances main before each step.
func measureCommit(tb testing.TB, g, other *kernel.Graph, cs *counting.Store) commitCost {
	tb.Helper()
	main := mustBranch(tb, g, "main")
	omain := mustBranch(tb, other, "main")
	bump := func() {
		if _, err := other.Publish(ctx, omain, nil, kernel.LineageIntent{Actor: "other"}, nil); err != nil {
			tb.Fatal(err)
		}
	}
	var c commitCost
	bump()
	before := cs.Counts()
	u, err := g.CommitTableVersion(ctx, main, "a", kernel.TableContent{Fragments: []string{"x"}, Rows: 1}, kernel.TableRef{})
	if err != nil {
		tb.Fatal(err)
	}
	c.tableVersion = diff(cs.Counts(), before)
	bump()
	before = cs.Counts()
	if _, err := g.Publish(ctx, main, []kernel.TableUpdate{u}, kernel.LineageIntent{Actor: "bench", Message: "one table"}, nil); err != nil {
		tb.Fatal(err)
	}
	c.publish = diff(cs.Counts(), before)
	before = cs.Counts()
	if _, err := g.Publish(ctx, main, nil, kernel.LineageIntent{Actor: "bench", Message: "on a current view"}, nil); err != nil {
		tb.Fatal(err)
	}
	c.publishCurrent = diff(cs.Counts(), before)
	return c
}

func costSetup(tb testing.TB, depth int) (g, other *kernel.Graph, cs *counting.Store) {
	inner := sim.New(sim.Config{Seed: 1})
	buildHistory(tb, inner, depth)
	cs = counting.NewWithLogLimit(inner, 0)
	var err error
	if g, err = kernel.Open(ctx, cs, root, kernel.Options{Env: testEnv(2)}); err != nil {
		tb.Fatal(err)
	}
	if other, err = kernel.Open(ctx, inner, root, kernel.Options{Env: testEnv(3)}); err != nil {
		tb.Fatal(err)
	}
	return g, other, cs
}

// BenchmarkCommitCost reports the store requests and bytes of one
// uncontended commit touching one table, at several history depths:
// requests/commit and bytes/commit for the publish itself on a stale view
// (another writer moved the head: a failed PUT, then LIST(limit 1) + GETs
// + PUTs), current-view-requests/commit for a publish on a current view
// (2 PUTs), and tablever-* for the table-version commit before it (LIST +
// GET of the branch head, LIST of the table HEAD, PUT). The numbers are
// identical across depths (under -short, CI's smoke run, only the
// smallest depth runs, here and in BenchmarkOpenCost).
func BenchmarkCommitCost(b *testing.B) {
	for _, depth := range benchsize.Smallest(costDepths) {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			g, other, cs := costSetup(b, depth)
			b.ResetTimer()
			var pub, cur, tv counting.Counts
			for range b.N {
				c := measureCommit(b, g, other, cs)
				pub, cur, tv = add(pub, c.publish), add(cur, c.publishCurrent), add(tv, c.tableVersion)
			}
			n := float64(b.N)
			b.ReportMetric(float64(pub.Requests())/n, "requests/commit")
			b.ReportMetric(float64(cur.Requests())/n, "current-view-requests/commit")
			b.ReportMetric(float64(pub.BytesWritten+pub.BytesRead)/n, "bytes/commit")
			b.ReportMetric(float64(tv.Requests())/n, "tablever-requests/commit")
			b.ReportMetric(float64(tv.BytesWritten+tv.BytesRead)/n, "tablever-bytes/commit")
		})
	}
}

// openCost is the requests of a read-only open and what follows it on a
// fresh handle.
type openCost struct {
	open    counting.Counts // Open(ReadOnly): main's head lookup
	main    counting.Counts // then Branch("main"): answered by the handle
	head    counting.Counts // then Head of main (BenchmarkDepthFS's open is open+main+head)
	feature counting.Counts // then Branch("feature"): its head lookup
}

func measureOpen(tb testing.TB, cs *counting.Store) openCost {
	tb.Helper()
	var c openCost
	step := func(dst *counting.Counts, f func() error) {
		before := cs.Counts()
		if err := f(); err != nil {
			tb.Fatal(err)
		}
		*dst = diff(cs.Counts(), before)
	}
	var g *kernel.Graph
	var main kernel.BranchRef
	step(&c.open, func() (err error) {
		g, err = kernel.Open(ctx, cs, root, kernel.Options{ReadOnly: true, Env: testEnv(4)})
		return err
	})
	step(&c.main, func() (err error) { main, err = g.Branch(ctx, "main"); return err })
	step(&c.head, func() error { _, err := g.Head(ctx, main); return err })
	step(&c.feature, func() error { _, err := g.Branch(ctx, "feature"); return err })
	return c
}

// BenchmarkOpenCost reports the requests of a read-only Open plus a handle
// on main (req/open: LIST + GET of main's head; Branch("main") adds none),
// Head of main after it (req/head: LIST, the GET cached), and a handle on
// another branch (req/branch: LIST + GET of its head), at several history
// depths; all identical across depths.
func BenchmarkOpenCost(b *testing.B) {
	for _, depth := range benchsize.Smallest(costDepths) {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			_, _, cs := costSetup(b, depth)
			b.ResetTimer()
			var open, head, branch counting.Counts
			for range b.N {
				c := measureOpen(b, cs)
				open, head, branch = add(open, add(c.open, c.main)), add(head, c.head), add(branch, c.feature)
			}
			n := float64(b.N)
			b.ReportMetric(float64(open.Requests())/n, "req/open")
			b.ReportMetric(float64(open.BytesRead)/n, "bytes/open")
			b.ReportMetric(float64(head.Requests())/n, "req/head")
			b.ReportMetric(float64(branch.Requests())/n, "req/branch")
		})
	}
}

// The request and byte counts of a commit and of an open are exact and
// identical at every depth (counts, not times): payload counters are
// fixed-width, so object sizes do not grow with history.
func TestCostIsFlatAcrossDepths(t *testing.T) {
	depths := []int{10, 1000}
	if !testing.Short() {
		depths = append(depths, 10000)
	}
	var first commitCost
	var firstOpen openCost
	for i, depth := range depths {
		g, other, cs := costSetup(t, depth)
		c := measureCommit(t, g, other, cs)
		o := measureOpen(t, cs)
		// On a current view: PUT the manifest, then the new commit's
		// index (after the publish); no head discovery (issue #32).
		if c.publishCurrent.Put.Requests != 2 || c.publishCurrent.Requests() != 2 {
			t.Fatalf("depth %d: publish cost on a current view %+v, want 2 PUT", depth, c.publishCurrent)
		}
		// On a stale view: the manifest PUT at view+1, which fails (the
		// slot is taken); then LIST the head, GET it, PUT the manifest,
		// and for the index GET the head's commit index (verified against
		// the head manifest just read) and PUT the new commit's.
		if c.publish.List.Requests != 1 || c.publish.Get.Requests != 2 || c.publish.Put.Requests != 3 || c.publish.Put.Errors != 1 || c.publish.Requests() != 6 {
			t.Fatalf("depth %d: publish cost on a stale view %+v, want 1 PUT (failed) + LIST + GET + PUT + GET + PUT", depth, c.publish)
		}
		if c.tableVersion.Requests() != 4 || c.tableVersion.Put.Requests != 1 {
			t.Fatalf("depth %d: table-version cost %+v, want 4 requests", depth, c.tableVersion)
		}
		// A read-only open is main's head lookup (LIST + GET); the handle
		// then knows main, so Branch("main") costs nothing; Head(main)
		// re-LISTs (the GET is cached): Open + Branch + Head of main is 3
		// requests. Another branch's handle is its head lookup.
		if o.open.List.Requests != 1 || o.open.Get.Requests != 1 || o.open.Requests() != 2 {
			t.Fatalf("depth %d: read-only open cost %+v, want LIST+GET", depth, o.open)
		}
		if o.main != (counting.Counts{}) {
			t.Fatalf("depth %d: Branch(main) after Open cost %+v, want nothing", depth, o.main)
		}
		if o.head.List.Requests != 1 || o.head.Requests() != 1 {
			t.Fatalf("depth %d: Head(main) after Open cost %+v, want one LIST", depth, o.head)
		}
		if o.feature.List.Requests != 1 || o.feature.Get.Requests != 1 || o.feature.Requests() != 2 {
			t.Fatalf("depth %d: Branch(feature) after Open cost %+v, want LIST+GET", depth, o.feature)
		}
		if i == 0 {
			first, firstOpen = c, o
			continue
		}
		if c != first || o != firstOpen {
			t.Fatalf("depth %d: cost %+v / open %+v differs from depth %d: %+v / %+v", depth, c, o, depths[0], first, firstOpen)
		}
	}
}

func fsGraph(b *testing.B) objstore.Store {
	store, err := fs.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := kernel.Init(ctx, store, root, schema, kernel.Options{Env: kernel.SystemEnv()}); err != nil {
		b.Fatal(err)
	}
	return store
}

// BenchmarkCommitThroughput measures commits per second on the fs store
// (real time, real entropy): the goodput of 1, 2, 4 and 8 concurrent
// writers on one branch touching disjoint tables (1 and 2 under -short,
// CI's smoke run).
func BenchmarkCommitThroughput(b *testing.B) {
	for _, writers := range benchsize.First([]int{1, 2, 4, 8}, 2) {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			store := fsGraph(b)
			var next atomic.Int64
			var failed atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					g, err := kernel.Open(ctx, store, root, kernel.Options{Env: kernel.SystemEnv()})
					if err != nil {
						failed.Add(1)
						return
					}
					main, _ := g.Branch(ctx, "main")
					for next.Add(1) <= int64(b.N) {
						if _, err := g.Write(ctx, main, []kernel.TableWrite{{Table: fmt.Sprintf("t%d", w), Build: appendFrag("x")}}, kernel.LineageIntent{}); err != nil {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if failed.Load() > 0 {
				b.Fatalf("%d writes failed", failed.Load())
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
		})
	}
}
