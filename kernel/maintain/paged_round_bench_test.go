package maintain_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/counting"
	fsstore "github.com/graphkernel/graphkernel/objstore/fs"
)

// roundGraph is one graph of BenchmarkMaintainRoundPagedShapes: a writer
// handle on an unsynced fs store (the history is a fixture) and a
// maintainer's handle and Maintainer on a synced one over the same
// directory (the round is what is measured), as simrun -procs' processes.
type roundGraph struct {
	w      *data.Graph
	g      *data.Graph
	m      *maintain.Maintainer
	fs     *fsstore.Store
	cs     *counting.Store
	clock  *kernel.ManualClock
	n      int // rows written
	ms     float64
	reqs   uint64
	syncs  uint64
	fsyncs uint64
	delObj int
	puts   uint64
}

// roundPolicy is simrun's maintenance workload's policy (cmd/simrun
// maintPolicy).
var roundPolicy = maintain.RunPolicy{
	Compact: compact.Policy{TargetRows: 64, MinFragments: 2},
	Collect: maintain.Policy{Policy: gc.Policy{KeepLast: 3, Grace: 15 * time.Second, SkewMargin: 2 * time.Second}},
}

func newRoundGraph(b *testing.B, opts data.Options) *roundGraph {
	b.Helper()
	dir := b.TempDir()
	raw, err := fsstore.OpenWith(dir, fsstore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	synced, err := fsstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := schema.Parse([]byte("node Person { name: string }\n"))
	if err != nil {
		b.Fatal(err)
	}
	clock := kernel.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Kernel = kernel.Options{Env: kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{1})}, Grace: 15 * time.Second}
	w, err := data.Init(ctx, raw, root, s, opts)
	if err != nil {
		b.Fatal(err)
	}
	cs := counting.NewWithLogLimit(synced, 0)
	opts.Kernel.Env.Entropy = rand.NewChaCha8([32]byte{2})
	g, err := data.Open(ctx, cs, root, opts)
	if err != nil {
		b.Fatal(err)
	}
	m, err := maintain.New(cs, root, kernel.Env{Clock: clock, Entropy: rand.NewChaCha8([32]byte{3})})
	if err != nil {
		b.Fatal(err)
	}
	return &roundGraph{w: w, g: g, m: m, fs: synced, cs: cs, clock: clock}
}

// commits writes n one-row commits, every other one as a branch-per-change
// cycle (fork main, commit, merge into main, delete the branch), 200 ms
// apart.
func (rg *roundGraph) commits(b *testing.B, n int) {
	b.Helper()
	main, err := rg.w.Branch(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		rg.n++
		id := fmt.Sprintf("p%06d", rg.n)
		if rg.n%2 == 0 {
			commitOn(b, rg.w, main, id)
		} else {
			f, err := rg.w.Kernel().CreateBranch(ctx, "f-"+id, main)
			if err != nil {
				b.Fatal(err)
			}
			commitOn(b, rg.w, f, id)
			if _, err := rg.w.Merge(ctx, f, main, kernel.LineageIntent{Actor: "b", Message: "merge " + id}, data.MergeOptions{}); err != nil {
				b.Fatal(err)
			}
			if err := rg.w.Kernel().DeleteBranch(ctx, "f-"+id); err != nil {
				b.Fatal(err)
			}
		}
		rg.clock.Advance(200 * time.Millisecond)
	}
}

// round runs one Maintain and adds its time, store requests, fs sync
// rounds, objects deleted and puts to rg's totals.
func (rg *roundGraph) round(b *testing.B) {
	b.Helper()
	c0, s0 := rg.cs.Counts(), rg.fs.SyncStats()
	t0 := time.Now()
	rep, err := maintain.Maintain(ctx, rg.g, rg.m, roundPolicy)
	if err != nil {
		b.Fatal(err)
	}
	rg.ms += float64(time.Since(t0).Microseconds()) / 1000
	c1 := rg.cs.Counts()
	rg.reqs += c1.Requests() - c0.Requests()
	rg.puts += c1.Put.Requests - c0.Put.Requests
	sd := rg.fs.SyncStats().Sub(s0)
	rg.syncs, rg.fsyncs = rg.syncs+sd.Rounds, rg.fsyncs+sd.Files+sd.Dirs
	c := rep.Collect
	rg.delObj += c.Manifests.Deleted + c.TableVersions.Deleted + c.Fragments.Deleted + c.Adjacency.Deleted + c.CommitIndexes.Deleted
}

// BenchmarkMaintainRoundPagedShapes: a maintenance round (Maintain:
// compaction, then collection, with simrun's maintenance policy) on fs
// after 100 one-row commits (every other one a branch-per-change cycle)
// since the last, on a graph of the kernel's shapes and on one shaped as
// simrun -procs' (IndexFanout 4, every version's fragments paged), the
// same history side by side. It reports each one's wall time, store
// requests, fs sync rounds (SyncStats.Rounds: each a wait for a set of
// concurrent fsyncs) and fsyncs, puts and objects deleted per round, and the paged/default ratios
// (docs/perf.md, "Maintenance rounds under paged shapes"). Under -short
// (CI's smoke run) 20 warm-up commits and 10 a round.
func BenchmarkMaintainRoundPagedShapes(b *testing.B) {
	warm, perRound := benchsize.Or(400, 20), benchsize.Or(100, 10)
	shapes := []*roundGraph{
		newRoundGraph(b, data.Options{}),
		newRoundGraph(b, data.Options{IndexFanout: 4, InlineFragments: -1}),
	}
	for _, rg := range shapes {
		rg.commits(b, warm)
		rg.clock.Advance(time.Minute)
		rg.round(b)
		*rg = roundGraph{w: rg.w, g: rg.g, m: rg.m, fs: rg.fs, cs: rg.cs, clock: rg.clock, n: rg.n}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, rg := range shapes {
			b.StopTimer()
			rg.commits(b, perRound)
			rg.clock.Advance(20 * time.Second) // past the grace: the round collects
			b.StartTimer()
			rg.round(b)
		}
	}
	n := float64(b.N)
	def, paged := shapes[0], shapes[1]
	for _, x := range []struct {
		name string
		rg   *roundGraph
	}{{"default", def}, {"paged", paged}} {
		b.ReportMetric(x.rg.ms/n, "ms/round-"+x.name)
		b.ReportMetric(float64(x.rg.reqs)/n, "requests/round-"+x.name)
		b.ReportMetric(float64(x.rg.syncs)/n, "syncs/round-"+x.name)
		b.ReportMetric(float64(x.rg.fsyncs)/n, "fsyncs/round-"+x.name)
		b.ReportMetric(float64(x.rg.puts)/n, "puts/round-"+x.name)
		b.ReportMetric(float64(x.rg.delObj)/n, "deleted/round-"+x.name)
	}
	b.ReportMetric(paged.ms/def.ms, "ratio-ms/paged-default")
	b.ReportMetric(float64(paged.syncs)/float64(max(def.syncs, 1)), "ratio-syncs/paged-default")
}
