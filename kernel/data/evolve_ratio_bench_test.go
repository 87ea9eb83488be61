package data

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel"
)

// BenchmarkScanLayoutRatio (S8): the same `rows` rows of N scanned as
// fragments written before a property was added (old layout: projected,
// the new column made null) and as fragments written after it (current
// layout), side by side: every iteration scans both on cold handles
// without a fragment cache, alternating which goes first, so machine load
// falls on both alike. It reports ratio/old-vs-new (old ns / new ns; the
// rule is ≤ 1.2), the ratio of the median scans (robust to the
// preemption spikes of a shared machine, which dominate the sum at 10^3
// rows: one scan is ~150 µs), the ratio of bytes allocated per scan (a
// load-independent figure), and each side's ns per scan. The two snapshots are two
// graphs built alike (one rewritten after the change).
func BenchmarkScanLayoutRatio(b *testing.B) {
	for _, rows := range evolveSizes() {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			oldStore, oldG := evolveFixture(b, rows)
			if _, err := apply(b, oldG, "node N { name: string? extra: int64? }", SchemaOptions{}); err != nil {
				b.Fatal(err)
			}
			newStore, newG := evolveFixture(b, rows)
			if _, err := apply(b, newG, "node N { name: string? extra: int64? }", SchemaOptions{}); err != nil {
				b.Fatal(err)
			}
			nt, _ := snap(b, newG).Table("N")
			nb := array.NewRecordBuilder(goAlloc, nt.Schema())
			for i := 0; i < rows; i++ {
				nb.Field(0).(*array.StringBuilder).Append(benchNode(i))
				nb.Field(1).(*array.StringBuilder).Append("name")
				nb.Field(2).(*array.Int64Builder).AppendNull()
			}
			commitTx(b, newG, func(tx *Txn) error { return tx.WriteRecord(OpUpsert, "N", nb.NewRecord()) })
			open := func(g *Graph) *Snapshot {
				st := oldStore
				if g == newG {
					st = newStore
				}
				r, err := Open(ctx, st, testRoot, Options{Kernel: kernel.Options{Env: testEnv(9), ReadOnly: true}, CacheBytes: -1})
				must(b, err)
				return snap(b, r)
			}
			oldSnap, newSnap := open(oldG), open(newG)
			scanAll(b, oldSnap, rows) // warm: the table versions and catalogs are cached per handle
			scanAll(b, newSnap, rows)
			var oldNs, newNs time.Duration
			var oldRuns, newRuns []time.Duration
			var oldAlloc, newAlloc uint64
			var ms runtime.MemStats
			i := 0
			for b.Loop() {
				first, second := oldSnap, newSnap
				if i%2 == 1 {
					first, second = newSnap, oldSnap
				}
				for _, s := range []*Snapshot{first, second} {
					runtime.ReadMemStats(&ms)
					a0 := ms.TotalAlloc
					t0 := time.Now()
					scanAll(b, s, rows)
					d := time.Since(t0)
					runtime.ReadMemStats(&ms)
					if s == oldSnap {
						oldNs += d
						oldRuns = append(oldRuns, d)
						oldAlloc += ms.TotalAlloc - a0
					} else {
						newNs += d
						newRuns = append(newRuns, d)
						newAlloc += ms.TotalAlloc - a0
					}
				}
				i++
			}
			b.ReportMetric(float64(oldNs)/float64(newNs), "ratio/old-vs-new")
			b.ReportMetric(float64(median(oldRuns))/float64(median(newRuns)), "median-ratio/old-vs-new")
			b.ReportMetric(float64(oldAlloc)/float64(newAlloc), "alloc-ratio/old-vs-new")
			b.ReportMetric(float64(oldNs.Nanoseconds())/float64(i), "old-ns/scan")
			b.ReportMetric(float64(newNs.Nanoseconds())/float64(i), "new-ns/scan")
		})
	}
}

func scanAll(b *testing.B, s *Snapshot, rows int) {
	rr, err := s.Scan(ctx, "N")
	must(b, err)
	n := 0
	for rr.Next() {
		n += int(rr.Record().NumRows())
	}
	must(b, rr.Err())
	rr.Release()
	if n != rows {
		b.Fatalf("%d rows, want %d", n, rows)
	}
}

// median returns the median of ds (sorted in place).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
