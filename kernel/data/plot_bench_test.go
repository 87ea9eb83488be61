package data

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/fs"
)

// scanSizes are BenchmarkFilteredScanBySize's table sizes: 10^3, 3·10^3,
// 10^4, 3·10^4 and 10^5 rows (scripts/perf.sh's default), and 10^6 with
// -bench-large; under -short only the smallest.
func scanSizes() []int {
	sizes := []int{1_000, 3_000, 10_000, 30_000, 100_000}
	if *benchLarge {
		sizes = append(sizes, 1_000_000)
	}
	return benchsize.Smallest(sizes)
}

// BenchmarkFilteredScanBySize: by table size, on the fs store, a full
// ScanWhere, a qty range selecting 1% of the rows (clustered: qty ascends
// with the id), and, side by side, reading the very same Arrow fragment
// files with the arrow library directly (as BenchmarkScan does, a fragment
// embedded in its table version read from the version). ns/row is
// per row of the table (so the lines are comparable across sizes);
// bytes/op counts what the store returned.
func BenchmarkFilteredScanBySize(b *testing.B) {
	for _, n := range scanSizes() {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			st, err := fs.Open(dir)
			must(b, err)
			cs := counting.New(st)
			g := benchGraph(b, cs, "g")
			rec := itemRecord(b, g, n)
			insertRecord(b, g, rec)
			rec.Release()
			g = freshHandle(b, cs, "g") // not the writer's cache: see freshHandle
			s, err := g.SnapshotAt(ctx, mainRef(b, g))
			must(b, err)
			files, _ := fragmentFiles(b, s, dir)
			where := pred.And(pred.Ge("qty", int64(n/2)), pred.Lt("qty", int64(n/2+n/100)))
			scan := func(b *testing.B, w *pred.Expr, want int) {
				var bytes uint64
				for b.Loop() {
					cs.Reset()
					rr, err := s.ScanWhere(ctx, "Item", w)
					must(b, err)
					got := 0
					for rr.Next() {
						got += int(rr.Record().NumRows())
					}
					must(b, rr.Err())
					rr.Release()
					if got != want {
						b.Fatalf("scanned %d rows, want %d", got, want)
					}
					bytes += cs.Counts().BytesRead
				}
				b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
			}
			b.Run("full", func(b *testing.B) { scan(b, nil, n) })
			b.Run("range-1pct", func(b *testing.B) { scan(b, &where, n/100) })
			b.Run("arrow-direct", func(b *testing.B) {
				for b.Loop() {
					if got := directRows(b, files); got != n {
						b.Fatalf("read %d rows, want %d", got, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
			})
		})
	}
}
