package changefeed

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Benchmarks (run with -bench; none runs under plain go test):
//
//	BenchmarkCommitChanges  the changes of a commit that updated 10 rows of a
//	                        table of 10^4, 10^5 or 10^6 rows, read on a cold
//	                        read-only handle: bytes-read/op and requests/op
//	                        (flat in the table size: only the rewritten
//	                        fragment and the metadata are read), table-bytes
//	                        for scale (10^4 only under -short, CI's
//	                        smoke run).
const benchSchemaText = `node Item { name: string  qty: int64 }`

func BenchmarkCommitChanges(b *testing.B) {
	for _, n := range benchsize.Smallest([]int{10_000, 100_000, 1_000_000}) { // -short: CI's smoke run
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) { benchCommitChanges(b, n) })
	}
}

func benchCommitChanges(b *testing.B, n int) {
	cs := counting.NewWithLogLimit(sim.New(sim.Config{Seed: 1}), 16)
	s, err := schema.Parse([]byte(benchSchemaText))
	must(b, err)
	// The 10^6-row fixture is one WriteRecord, past the default 64 MiB
	// transaction byte budget.
	g, err := data.Init(ctx, cs, "bench", s, data.Options{Kernel: kernel.Options{Env: testEnv(1)}, Limits: data.Limits{MaxBytes: 1 << 30}})
	must(b, err)
	loadItems(b, g, n)
	c := commitOn(b, g, "main", func(tx *data.Txn) error {
		var rows []data.Row
		for i := n / 2; i < n/2+10; i++ {
			rows = append(rows, data.Row{ID: itemID(i), Props: map[string]any{"name": "changed", "qty": int64(-i)}})
		}
		return tx.Update("Item", rows...)
	})
	tableBytes := cs.Counts().BytesWritten
	b.ResetTimer()
	before := cs.Counts()
	for range b.N {
		cold, err := data.Open(ctx, cs, "bench", data.Options{Kernel: kernel.Options{Env: testEnv(2), ReadOnly: true}})
		must(b, err)
		_, changes, _ := allChanges(b, New(cold), c.ID, feed.Filter{}, feed.Limits{})
		if len(changes) != 10 {
			b.Fatalf("%d changes, want 10", len(changes))
		}
	}
	after := cs.Counts()
	b.StopTimer()
	b.ReportMetric(float64(after.BytesRead-before.BytesRead)/float64(b.N), "bytes-read/op")
	b.ReportMetric(float64(after.Get.Requests+after.List.Requests+after.Head.Requests-before.Get.Requests-before.List.Requests-before.Head.Requests)/float64(b.N), "requests/op")
	b.ReportMetric(float64(tableBytes), "graph-bytes")
}

func itemID(i int) string { return fmt.Sprintf("item-%08d", i) }

// loadItems inserts n items in one transaction (one Arrow record).
func loadItems(b *testing.B, g *data.Graph, n int) {
	b.Helper()
	snap, err := g.SnapshotAt(ctx, branch(b, g, "main"))
	must(b, err)
	t, err := snap.Table("Item")
	must(b, err)
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), t.Schema())
	defer rb.Release()
	rb.Reserve(n)
	for i := range n {
		rb.Field(0).(*array.StringBuilder).Append(itemID(i))
		rb.Field(1).(*array.StringBuilder).Append("a fairly ordinary item name")
		rb.Field(2).(*array.Int64Builder).Append(int64(i))
	}
	rec := rb.NewRecord()
	defer rec.Release()
	commitOn(b, g, "main", func(tx *data.Txn) error { return tx.WriteRecord(data.OpInsert, "Item", rec) })
}
