package data

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// BenchmarkMergeTenRows merges a branch that updated 10 rows of an Item
// table of 10^4, 10^5 and 10^6 rows into main, which updated 10 other rows
// (a real three-way merge), on the counting sim store. The rows are either
// clustered (ids 0..900: one fragment at every size)
// or spread over the whole table (one fragment each once the table has 10
// fragments). It reports bytes-read/op (everything the merge GETs) and
// peak-rows/op (MergeResult.PeakRows: the largest diff window or the
// fragments the build rewrites, plus the images held); both are bounded by
// the changed fragments and stay flat as the table grows (under -short,
// CI's smoke run, 10^4 rows only). Run once:
//
//	go test ./kernel/data -run '^$' -bench BenchmarkMergeTenRows -benchtime=1x
func BenchmarkMergeTenRows(b *testing.B) {
	for _, layout := range []string{"clustered", "spread"} {
		for _, n := range benchsize.Smallest([]int{10_000, 100_000, 1_000_000}) {
			b.Run(fmt.Sprintf("%s/rows=%d", layout, n), func(b *testing.B) { benchMerge(b, layout, n) })
		}
	}
}

func benchMerge(b *testing.B, layout string, n int) {
	// clustered: ids 0, 100, ..., 900 on each side, all in the first
	// fragment (MaxFragmentRows 8192) at every table size; spread: one id
	// in each tenth of the table, so ten fragments once the table has ten.
	stride := n / 10
	if layout == "clustered" {
		stride = 100
	}
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := benchGraph(b, cs, "graphs/bench")
	rec := itemRecord(b, g, n)
	insertRecord(b, g, rec)
	rec.Release()
	main, err := g.Branch(ctx, "main")
	if err != nil {
		b.Fatal(err)
	}
	var read, peak uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		feature, err := g.Kernel().CreateBranch(ctx, fmt.Sprintf("feature-%d", i), main)
		if err != nil {
			b.Fatal(err)
		}
		updateEvery(b, g, feature, stride, 2*i)
		updateEvery(b, g, main, stride, 2*i+1)
		before := cs.Counts().BytesRead
		b.StartTimer()
		res, err := g.Merge(ctx, feature, main, kernel.LineageIntent{Actor: "bench"}, MergeOptions{})
		b.StopTimer()
		if err != nil || res.Outcome != MergeMerged || res.Changes["Item"] != 10 {
			b.Fatalf("merge: %+v, %v", res, err)
		}
		read += cs.Counts().BytesRead - before
		peak = max(peak, res.PeakRows)
		b.StartTimer()
	}
	b.ReportMetric(float64(read)/float64(b.N), "bytes-read/op")
	b.ReportMetric(float64(peak), "peak-rows/op")
}

// updateEvery updates the 10 Item rows k*stride+off (k < 10): two calls
// with different offsets touch different rows.
func updateEvery(b *testing.B, g *Graph, br kernel.BranchRef, stride, off int) {
	b.Helper()
	tx, err := g.Begin(ctx, br)
	if err != nil {
		b.Fatal(err)
	}
	for k := range 10 {
		id := fmt.Sprintf("item-%08d", k*stride+off)
		r, ok, err := tx.Get(ctx, "Item", id)
		if err != nil || !ok {
			b.Fatalf("get %s: %v %v", id, ok, err)
		}
		r.Props["qty"] = r.Props["qty"].(int64) + 1_000_000
		if err := tx.Update("Item", r); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"}); err != nil {
		b.Fatal(err)
	}
}
