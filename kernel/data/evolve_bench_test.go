package data

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// evolveSizes are the table sizes of the schema-evolution benchmarks
// (10^6 with -bench-large; under -short only the smallest).
func evolveSizes() []int {
	sizes := []int{1_000, 10_000, 100_000}
	if *benchLarge {
		sizes = append(sizes, 1_000_000)
	}
	return benchsize.Smallest(sizes)
}

// evolveFixture is a graph whose node type N { name: string? } holds rows
// rows (names set), written in one bulk transaction, on a counting store.
func evolveFixture(b *testing.B, rows int) (*counting.Store, *Graph) {
	b.Helper()
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g, err := Init(ctx, cs, testRoot, parseSchema(b, "node N { name: string? }"),
		Options{Kernel: kernel.Options{Env: testEnv(1)}, Limits: Limits{MaxRows: 4 << 20, MaxBytes: 1 << 30}})
	must(b, err)
	nt, _ := snap(b, g).Table("N")
	nb := array.NewRecordBuilder(goAlloc, nt.Schema())
	for i := 0; i < rows; i++ {
		nb.Field(0).(*array.StringBuilder).Append(benchNode(i))
		nb.Field(1).(*array.StringBuilder).Append("name")
	}
	commitTx(b, g, func(tx *Txn) error { return tx.WriteRecord(OpInsert, "N", nb.NewRecord()) })
	return cs, g
}

// BenchmarkSchemaAddProperty: bytes read and written, and requests, by
// ApplySchema adding one nullable property to N holding `rows` rows. The
// change reads the head, the schema and writes the new contract and one
// manifest: the figures must not grow with rows (no fragment is read or
// rewritten). A fixture is rebuilt (timer stopped) every 200 adds, the
// properties a type may hold.
func BenchmarkSchemaAddProperty(b *testing.B) {
	for _, rows := range evolveSizes() {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			var read, written, reqs uint64
			var cs *counting.Store
			var g *Graph
			var props []string
			for i := 0; i < b.N; i++ {
				if i%200 == 0 {
					b.StopTimer()
					cs, g = evolveFixture(b, rows)
					props = nil
					b.StartTimer()
				}
				props = append(props, fmt.Sprintf("p%d: int64?", i%200))
				text := "node N { name: string? " + strings.Join(props, " ") + " }"
				cs.Reset()
				if _, err := apply(b, g, text, SchemaOptions{}); err != nil {
					b.Fatal(err)
				}
				c := cs.Counts()
				read, written, reqs = read+c.BytesRead, written+c.BytesWritten, reqs+c.Requests()
			}
			b.ReportMetric(float64(read)/float64(b.N), "bytes-read/op")
			b.ReportMetric(float64(written)/float64(b.N), "bytes-written/op")
			b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
		})
	}
}

// BenchmarkScanAcrossSchemaChange: a full Scan of N's `rows` rows written
// before a property was added (old layout: every fragment projected, the
// new column made null) and of the same rows rewritten after it (current
// layout). Compare ns/op of old and new at one size. Both scan on a fresh
// handle without a fragment cache (a writer's handle may hold what it
// wrote), so both decode every fragment.
func BenchmarkScanAcrossSchemaChange(b *testing.B) {
	for _, rows := range evolveSizes() {
		cs, g := evolveFixture(b, rows)
		cold := func() *Snapshot {
			r, err := Open(ctx, cs, testRoot, Options{Kernel: kernel.Options{Env: testEnv(9), ReadOnly: true}, CacheBytes: -1})
			must(b, err)
			return snap(b, r)
		}
		if _, err := apply(b, g, "node N { name: string? extra: int64? }", SchemaOptions{}); err != nil {
			b.Fatal(err)
		}
		scan := func(b *testing.B, s *Snapshot) {
			for b.Loop() {
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
		}
		old := cold()
		b.Run(fmt.Sprintf("rows=%d/old-layout", rows), func(b *testing.B) { scan(b, old) })
		nt, _ := old.Table("N")
		nb := array.NewRecordBuilder(goAlloc, nt.Schema())
		for i := 0; i < rows; i++ {
			nb.Field(0).(*array.StringBuilder).Append(benchNode(i))
			nb.Field(1).(*array.StringBuilder).Append("name")
			nb.Field(2).(*array.Int64Builder).AppendNull()
		}
		commitTx(b, g, func(tx *Txn) error { return tx.WriteRecord(OpUpsert, "N", nb.NewRecord()) })
		cur := cold()
		b.Run(fmt.Sprintf("rows=%d/new-layout", rows), func(b *testing.B) { scan(b, cur) })
	}
}
