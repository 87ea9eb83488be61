package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/internal/benchsize"
)

// BenchmarkSortChanges sorts 10^6 adjacency changes with keys and ids as
// a bulk load's (random endpoints "p%07d", ids "k%08d") with sortChanges
// and with the stable sort of whole changes it replaced, side by side,
// and reports both and their ratio (#28.2). Under -short (CI's smoke
// run) it sorts 10^4.
func BenchmarkSortChanges(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := rowSrc{}
	in := make([]adjChange, benchsize.Or(1_000_000, 10_000))
	for i := range in {
		in[i] = adjChange{key: fmt.Sprintf("p%07d", rng.IntN(150_000)), id: fmt.Sprintf("k%08d", i), src: &src}
	}
	var prefix, stable time.Duration
	work := make([]adjChange, len(in))
	for b.Loop() {
		copy(work, in)
		t0 := time.Now()
		sortChanges(work)
		prefix += time.Since(t0)
		copy(work, in)
		t0 = time.Now()
		slices.SortStableFunc(work, func(a, b adjChange) int { return compareKeyID(a.key, a.id, b.key, b.id) })
		stable += time.Since(t0)
	}
	b.ReportMetric(prefix.Seconds()/float64(b.N), "s-sortChanges")
	b.ReportMetric(stable.Seconds()/float64(b.N), "s-stable")
	b.ReportMetric(prefix.Seconds()/stable.Seconds(), "ratio-sortChanges/stable")
}

// benchEdgePage is an edge table, a record of 100,000 of its rows and an
// adjacency page's worth (AdjPageRows) of them in random record order,
// seeded; the caller releases rec.
func benchEdgePage(b *testing.B) (*Table, arrow.Record, []rowSrc) {
	tb, _ := catalogOf(b, "node P { }\nedge E: P -> P { since: int64? }").table("E")
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]Row, 100_000)
	for i := range rows {
		rows[i] = Row{ID: fmt.Sprintf("k%08d", i), From: fmt.Sprintf("p%07d", rng.IntN(150_000)),
			To: fmt.Sprintf("p%07d", rng.IntN(150_000)), Props: map[string]any{"since": int64(1990 + i%35)}}
	}
	rec := buildRecord(tb, rows)
	page := make([]rowSrc, AdjPageRows)
	for i := range page {
		page[i] = rowSrc{rec, rng.IntN(len(rows))}
	}
	return tb, rec, page
}

// BenchmarkGatherPage gathers adjacency pages (1,024 rows of an edge
// record in random order, as a bulk commit's sorted rows are) with gather
// and with a record builder's per-value appends it replaced for string
// columns, side by side (#28.2).
func BenchmarkGatherPage(b *testing.B) {
	tb, rec, page := benchEdgePage(b)
	defer rec.Release()
	var fast, builder time.Duration
	for b.Loop() {
		t0 := time.Now()
		gather(tb, page).Release()
		fast += time.Since(t0)
		t0 = time.Now()
		rb := array.NewRecordBuilder(goAlloc, tb.arrow)
		rb.Reserve(len(page))
		for c := range tb.arrow.Fields() {
			copyColumn(rb.Field(c), kindOf(tb, c), c, page)
		}
		rb.NewRecord().Release()
		rb.Release()
		builder += time.Since(t0)
	}
	b.ReportMetric(fast.Seconds()*1e6/float64(b.N), "us-gather")
	b.ReportMetric(builder.Seconds()*1e6/float64(b.N), "us-builder")
	b.ReportMetric(fast.Seconds()/builder.Seconds(), "ratio-gather/builder")
}

// BenchmarkEncodeRowsPage writes an adjacency page's column file (1,024
// rows of an edge record in random record order, sorted by (from, id) as
// a page is) straight from the rows (encodeRowColumns) and by gathering a
// record first (encodeColumns of gather), side by side, before zstd (the
// same for both) (#28.2).
func BenchmarkEncodeRowsPage(b *testing.B) {
	tb, rec, page := benchEdgePage(b)
	defer rec.Release()
	slices.SortFunc(page, func(x, y rowSrc) int {
		return compareKeyID(srcStr(x, colFrom), srcID(x), srcStr(y, colFrom), srcID(y))
	})
	var direct, gathered time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := encodeRowColumns(tb, page); err != nil {
			b.Fatal(err)
		}
		direct += time.Since(t0)
		t0 = time.Now()
		g := gather(tb, page)
		if _, err := encodeColumns(tb, g); err != nil {
			b.Fatal(err)
		}
		g.Release()
		gathered += time.Since(t0)
	}
	b.ReportMetric(direct.Seconds()*1e6/float64(b.N), "us-rows")
	b.ReportMetric(gathered.Seconds()*1e6/float64(b.N), "us-gather-encode")
	b.ReportMetric(direct.Seconds()/gathered.Seconds(), "ratio-rows/gather-encode")
}
