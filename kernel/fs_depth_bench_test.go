package kernel_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// fsDepthDeep adds depth 10^5 to BenchmarkDepthFS (its fixture takes about
// a minute to build; the default depths 10, 10^3 and 10^4 take seconds).
var fsDepthDeep = flag.Bool("fsdepth.deep", false, "BenchmarkDepthFS: also measure depth 100000")

// fsDepthSamples is how many operations each side of a BenchmarkDepthFS
// pair times per benchmark call; the medians are over all of them (the
// machine is shared: many samples, interleaved, keep the medians steady).
// Under -short (CI's smoke run) 5: medians of noise, every path run.
func fsDepthSamples() int { return benchsize.Or(101, 5) }

// fsShallowCommits is how many commits a depth-10 graph takes before the
// commit benchmark moves to a fresh one, so its baseline stays at depth
// 10-20 however many samples it takes.
const fsShallowCommits = 10

// fsFixture is a graph root on disk holding a history of a given depth,
// and what it cost to build.
type fsFixture struct {
	dir        string
	store      objstore.Store // if set, the store the sides open instead of fs:dir (BenchmarkDepthS3)
	simBuild   time.Duration  // buildHistory on the sim store
	copyToDisk time.Duration  // every object copied into a NoSync fs store, then sync(2)
}

// buildFSFixture builds a history of depth commits on main (buildHistory:
// through the public API, on the in-memory sim store, which is fast) and
// copies every object byte for byte into a NoSync fs store at dir. The
// benchmark then opens dir with the durable (fsync on) fs store; the
// objects are exactly what the kernel would have written there itself,
// since the kernel issues the same calls on every backend. A sync(2) at
// the end keeps the copy's writeback out of the timed operations.
func buildFSFixture(tb testing.TB, dir string, depth int) fsFixture {
	tb.Helper()
	f := fsFixture{dir: dir}
	start := time.Now()
	src := sim.New(sim.Config{Seed: 1})
	buildHistory(tb, src, depth)
	f.simBuild = time.Since(start)
	start = time.Now()
	dst, err := fs.OpenWith(dir, fs.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	copyObjects(tb, src, dst, root+"/", 1)
	if !benchsize.Short() { // the smoke run times nothing: no machine-wide flush (seconds beside other I/O)
		syscall.Sync()
	}
	f.copyToDisk = time.Since(start)
	return f
}

// fsSide is one side of a timed pair: a durable fs store (behind a
// counter) over a fixture, and the samples taken on it.
type fsSide struct {
	cs      *counting.Store
	g       *kernel.Graph // the writer handle (commit only)
	main    kernel.BranchRef
	samples []time.Duration
	reqs    uint64
	// renew, if set, gives a fresh depth-10 fixture; the side moves to one
	// (untimed) every fsShallowCommits operations.
	renew func() fsFixture
	ops   int
}

func openSide(tb testing.TB, f fsFixture, writer bool) *fsSide {
	tb.Helper()
	s := &fsSide{}
	s.attach(tb, f, writer)
	return s
}

// attach points the side at fixture f: a durable fs store behind a
// counter and, for a writer, a handle on main.
func (s *fsSide) attach(tb testing.TB, f fsFixture, writer bool) {
	tb.Helper()
	store := f.store
	if store == nil {
		var err error
		if store, err = fs.Open(f.dir); err != nil { // fsync on: the store under test is the durable one
			tb.Fatal(err)
		}
	}
	s.cs = counting.NewWithLogLimit(store, 0)
	if writer {
		// Real clock and entropy: ids never collide with the fixture's
		// (minted from a manual clock) nor between benchmark calls.
		var err error
		if s.g, err = kernel.Open(ctx, s.cs, root, kernel.Options{Env: kernel.SystemEnv()}); err != nil {
			tb.Fatal(err)
		}
		s.main = mustBranch(tb, s.g, "main")
	}
}

// time runs op once and records its duration and requests.
func (s *fsSide) time(tb testing.TB, op func(tb testing.TB, s *fsSide)) {
	if s.renew != nil && s.ops > 0 && s.ops%fsShallowCommits == 0 {
		s.attach(tb, s.renew(), true)
	}
	s.ops++
	before := s.cs.Counts()
	start := time.Now()
	op(tb, s)
	s.samples = append(s.samples, time.Since(start))
	s.reqs += diff(s.cs.Counts(), before).Requests()
}

func (s *fsSide) median() float64 {
	d := slices.Clone(s.samples)
	slices.Sort(d)
	n := len(d)
	if n%2 == 1 {
		return float64(d[n/2].Nanoseconds())
	}
	return float64(d[n/2-1].Nanoseconds()+d[n/2].Nanoseconds()) / 2
}

// fsCommit is one commit through the kernel API: CommitTableVersion of
// table "a", then Publish of that version on main.
func fsCommit(tb testing.TB, s *fsSide) {
	u, err := s.g.CommitTableVersion(ctx, s.main, "a", kernel.TableContent{Fragments: []string{"bench"}, Rows: 1}, kernel.TableRef{})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.g.Publish(ctx, s.main, []kernel.TableUpdate{u}, kernel.LineageIntent{Actor: "bench"}, nil); err != nil {
		tb.Fatal(err)
	}
}

// fsOpen is one read-only open of main: Open(ReadOnly), Branch("main")
// and its Head, on a fresh handle (nothing cached): 3 requests, two head
// lookups of main (Open's LIST + GET, Head's LIST); Branch("main") is
// answered by the handle (TestCostIsFlatAcrossDepths pins the counts).
func fsOpen(tb testing.TB, s *fsSide) {
	g, err := kernel.Open(ctx, s.cs, root, kernel.Options{ReadOnly: true, Env: kernel.SystemEnv()})
	if err != nil {
		tb.Fatal(err)
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := g.Head(ctx, main); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkDepthFS measures, through the kernel API on the durable fs
// store, a commit (CommitTableVersion + Publish on main) and a read-only
// open of main (Open + Branch + Head) at history depths 10, 10^3, 10^4
// and, with -fsdepth.deep, 10^5. Each depth's sub-benchmark times the
// operation fsDepthSamples times on a depth-D graph and as many times on a
// depth-10 graph, alternating, so both medians come from the same minutes
// of a shared machine; it reports median-ns/<op> and requests/<op> at D,
// the depth-10 median beside it, and ratio/depth10 (goals: 10^4 at most
// 1.3, 10^5 at most 1.5). At depth 10 the pair is two separate depth-10
// graphs, so its ratio shows the noise. The commit benchmark moves its
// depth-10 side to a fresh depth-10 graph every fsShallowCommits commits
// (untimed), so that side stays at depth 10-20; the deep graphs gain
// fsDepthSamples commits per call, a negligible fraction. fixture-*-s report what building each depth's fixture cost
// (history on the sim store, then copied into a NoSync fs store). The
// built-in ns/op covers the whole pair and is not the figure. Under -short
// (CI's smoke run, here and in BenchmarkDepthS3) depth 10 only, with
// fsDepthSamples' smoke count.
//
//	go test ./kernel -run '^$' -bench BenchmarkDepthFS -benchtime 1x
//	go test ./kernel -run '^$' -bench BenchmarkDepthFS -benchtime 1x -fsdepth.deep
func BenchmarkDepthFS(b *testing.B) {
	depths := depthBenchDepths[:3]
	if *fsDepthDeep {
		depths = depthBenchDepths
	}
	depths = benchsize.Smallest(depths)
	tmp := b.TempDir() // lives until every sub-benchmark has run
	runDepthPairs(b, depths, func(tb testing.TB, name string, depth int) fsFixture {
		return buildFSFixture(tb, filepath.Join(tmp, name), depth)
	})
}

// runDepthPairs runs the open and commit pairs of BenchmarkDepthFS and
// BenchmarkDepthS3 at each depth: build makes a fixture of a depth (name
// is unique per fixture); each depth's is built once, and fresh depth-10
// fixtures as the shallow side needs them.
func runDepthPairs(b *testing.B, depths []int, build func(tb testing.TB, name string, depth int) fsFixture) {
	fixtures := map[int]fsFixture{}
	fixture := func(tb testing.TB, depth int) fsFixture {
		if f, ok := fixtures[depth]; ok {
			return f
		}
		f := build(tb, fmt.Sprintf("depth-%d", depth), depth)
		fixtures[depth] = f
		return f
	}
	fresh := 0
	fresh10 := func(tb testing.TB) fsFixture {
		fresh++
		return build(tb, fmt.Sprintf("fresh10-%d", fresh), 10)
	}
	for _, depth := range depths {
		b.Run(fmt.Sprintf("depth=%d/open", depth), func(b *testing.B) {
			f := fixture(b, depth)
			base := f
			if depth == 10 {
				base = fresh10(b)
			} else {
				base = fixture(b, 10)
			}
			reportPair(b, f, openSide(b, f, false), openSide(b, base, false), fsOpen, "open")
		})
		b.Run(fmt.Sprintf("depth=%d/commit", depth), func(b *testing.B) {
			renew := func() fsFixture { return fresh10(b) }
			f := fixture(b, depth)
			if depth == 10 {
				f = fresh10(b)
			}
			deep, base := openSide(b, f, true), openSide(b, fresh10(b), true)
			base.renew = renew
			if depth == 10 {
				deep.renew = renew
			}
			reportPair(b, f, deep, base, fsCommit, "commit")
		})
	}
}

// reportPair times op alternately on deep and on base, fsDepthSamples
// times each per benchmark call, and reports the medians, the requests per
// operation and their ratio.
func reportPair(b *testing.B, f fsFixture, deep, base *fsSide, op func(testing.TB, *fsSide), unit string) {
	b.ResetTimer()
	for range b.N {
		for range fsDepthSamples() {
			deep.time(b, op)
			base.time(b, op)
		}
	}
	b.StopTimer()
	md, mb := deep.median(), base.median()
	n := float64(len(deep.samples))
	b.ReportMetric(md, "median-ns/"+unit)
	b.ReportMetric(mb, "depth10-median-ns/"+unit)
	b.ReportMetric(md/mb, "ratio/depth10")
	b.ReportMetric(float64(deep.reqs)/n, "requests/"+unit)
	b.ReportMetric(float64(base.reqs)/n, "depth10-requests/"+unit)
	b.ReportMetric(f.simBuild.Seconds(), "fixture-sim-s")
	b.ReportMetric(f.copyToDisk.Seconds(), "fixture-copy-s")
}
