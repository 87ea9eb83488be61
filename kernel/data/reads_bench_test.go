package data

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/internal/benchsize"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/data/traverse"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Read benchmarks (cold = a new handle, empty fragment cache; fixtures are
// built in the setup on the counting sim store, never committed):
//
//	BenchmarkColdAdjacency  Out and In of a degree-10 node at 10^3, 3·10^3,
//	                        10^4, 3·10^4, 10^5 (and, with -bench-large,
//	                        10^6) edges:
//	                        bytes/lookup, requests/lookup, cold and warm ns
//	BenchmarkCardInsert     one edge into an @card(0..1) type of 10^3,
//	                        10^5 (10^6) edges: bytes/op, ratio-vs-1e3
//	BenchmarkFilteredScan   1% of 10^6 Item rows by a clustered qty range:
//	                        bytes read against a full scan (pct-of-full)
//	BenchmarkExpand3Hop     3-hop Expand over 10^5 nodes / 10^6 edges:
//	                        nodes/s, bytes/op
const adjSchemaText = `
node N { name: string? }
edge E: N -> N { w: int64? }
edge C: N -> N @card(0..1) {}
`

// newAdjGraph initialises an empty graph of adjSchemaText on a counting
// sim store, with limits large enough for one-transaction 10^6-row loads.
func newAdjGraph(b testing.TB) (*counting.Store, *Graph) {
	b.Helper()
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	s, err := schema.Parse([]byte(adjSchemaText))
	must(b, err)
	g, err := Init(ctx, cs, testRoot, s, Options{Kernel: kernel.Options{Env: testEnv(1)}, Limits: Limits{MaxRows: 4 << 20, MaxBytes: 1 << 30}})
	must(b, err)
	g.jsonChunks = testJSONChunks
	benchShapes(g)
	return cs, g
}

// benchNode names node i of the read benchmarks' fixtures.
func benchNode(i int) string { return fmt.Sprintf("n%08d", i) }

// nodeBuilder holds N rows n00000000.. for `nodes` nodes, names null.
func nodeBuilder(snapshot *Snapshot, nodes int) *array.RecordBuilder {
	nt, _ := snapshot.Table("N")
	nb := array.NewRecordBuilder(goAlloc, nt.Schema())
	for i := 0; i < nodes; i++ {
		nb.Field(0).(*array.StringBuilder).Append(benchNode(i))
		nb.Field(1).(*array.StringBuilder).AppendNull()
	}
	return nb
}

// adjGraph builds a graph of edges/10 nodes and `edges` E edges (each node
// has out-degree 10; to is a scrambled node) on a counting sim store, plus
// a C edge from every node to its successor but the last.
func adjGraph(b testing.TB, edges int) (*counting.Store, int) {
	b.Helper()
	cs, g := newAdjGraph(b)
	nodes := edges / 10
	snapshot := snap(b, g)
	et, _ := snapshot.Table("E")
	ct, _ := snapshot.Table("C")
	nb := nodeBuilder(snapshot, nodes)
	eb := array.NewRecordBuilder(goAlloc, et.Schema())
	for i := 0; i < edges; i++ {
		eb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("e%09d", i))
		eb.Field(1).(*array.StringBuilder).Append(benchNode(i / 10))
		eb.Field(2).(*array.StringBuilder).Append(benchNode((i * 7919) % nodes))
		eb.Field(3).(*array.Int64Builder).Append(int64(i))
	}
	cb := array.NewRecordBuilder(goAlloc, ct.Schema())
	for i := 0; i+1 < nodes; i++ {
		cb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("c%09d", i))
		cb.Field(1).(*array.StringBuilder).Append(benchNode(i))
		cb.Field(2).(*array.StringBuilder).Append(benchNode(i + 1))
	}
	commitTx(b, g, func(tx *Txn) error {
		for _, w := range []struct {
			typ string
			rb  *array.RecordBuilder
		}{{"N", nb}, {"E", eb}, {"C", cb}} {
			rec := w.rb.NewRecord()
			if err := tx.WriteRecord(OpInsert, w.typ, rec); err != nil {
				return err
			}
		}
		return nil
	})
	return cs, nodes
}

var benchLarge = flag.Bool("bench-large", false, "add the 10^6-edge sizes to the read benchmarks (slow fixtures)")

// benchScale and benchHuge add issue #28's scale sizes to
// BenchmarkColdAdjacency and BenchmarkCardInsert, built in bulk
// (bulkfixture_test.go): 10^6 and 10^7 edges, and 10^8.
var (
	benchScale = flag.Bool("bench-scale", false, "add 10^6 and 10^7 edges to BenchmarkColdAdjacency and BenchmarkCardInsert (bulk fixtures, minutes)")
	benchHuge  = flag.Bool("bench-huge", false, "add 10^8 edges to BenchmarkColdAdjacency and BenchmarkCardInsert (bulk fixtures, tens of GB)")
)

// benchChunkForms runs BenchmarkColdAdjacency and BenchmarkCardInsert
// with index chunks written as JSON (formats 7 to 11) and in binary
// (format 12) side by side, as sub-benchmarks chunks=json and
// chunks=binary.
var benchChunkForms = flag.Bool("bench-chunk-forms", false, "run BenchmarkColdAdjacency and BenchmarkCardInsert with JSON and binary index chunks side by side")

// benchPageRows, when set, makes the fixtures and handles of the read
// benchmarks write index pages of at most that many rows (the defaults:
// AdjPageRows, IDPageRows, EdgeIDPageRows), to measure what smaller pages
// would cost and save (docs/perf.md "Binary index chunks").
var benchPageRows = flag.Int("bench-page-rows", 0, "index page rows of the read benchmarks' fixtures and handles (0: the defaults)")

// benchFragCut, when set, replaces the content-defined cut modulus of the
// fragment chunks the read benchmarks' fixtures and handles write
// (fragCutMod): -bench-frag-cut 64 writes as builds before session 26.
var benchFragCut = flag.Int("bench-frag-cut", 0, "fragment chunk cut modulus of the read benchmarks' fixtures and handles (0: fragCutMod)")

// benchFanout, when set, makes the fixtures and handles of the read
// benchmarks write index chunks of at most that many refs at every level
// (pages in a level-0 chunk, chunks in a ref chunk; WriteFanout by
// default), to measure what a narrower tree would cost and save.
var benchFanout = flag.Int("bench-fanout", 0, "index chunk fanout of the read benchmarks' fixtures and handles (0: WriteFanout)")

// benchShapes applies the read benchmarks' shape flags (-bench-page-rows,
// -bench-frag-cut, -bench-fanout) to a fixture's or a test's handle.
func benchShapes(g *Graph) {
	if *benchPageRows > 0 {
		g.idxPageRows = *benchPageRows
	}
	if *benchFragCut > 0 {
		g.fragCutEvery = uint32(*benchFragCut)
	}
	if *benchFanout > 0 {
		g.idxFanout, g.idxLeafPages = *benchFanout, *benchFanout
	}
}

// forChunkForms runs bench once, or, with -bench-chunk-forms, once per
// index chunk form, fixtures and handles writing that form.
func forChunkForms(b *testing.B, bench func(*testing.B)) {
	if !*benchChunkForms {
		bench(b)
		return
	}
	for _, form := range []string{"json", "binary"} {
		b.Run("chunks="+form, func(b *testing.B) {
			testJSONChunks = form == "json"
			defer func() { testJSONChunks = false }()
			bench(b)
		})
	}
}

// scaleSizes are the sizes -bench-scale and -bench-huge add past 10^5.
func scaleSizes() []int {
	var out []int
	if *benchLarge || *benchScale {
		out = append(out, 1_000_000)
	}
	if *benchScale {
		out = append(out, 10_000_000)
	}
	if *benchHuge {
		out = append(out, 100_000_000)
	}
	return out
}

// bulkFrom is the smallest fixture size built in bulk rather than through
// a transaction.
const bulkFrom = 1_000_000

// adjSizes are BenchmarkCardInsert's and BenchmarkExpand3Hop's edge-table
// sizes (under -short only the smallest).
func adjSizes() []int {
	return benchsize.Smallest(append([]int{1_000, 100_000}, scaleSizes()...))
}

// coldAdjSizes are BenchmarkColdAdjacency's edge-table sizes (five, for
// the plot in docs/perf.md; 10^6 with -bench-large; under -short only the
// smallest, whose ratios are then 1 by definition).
func coldAdjSizes() []int {
	return benchsize.Smallest(append([]int{1_000, 3_000, 10_000, 30_000, 100_000}, scaleSizes()...))
}

// BenchmarkColdAdjacency: Out and In of one degree-10 node on a new handle
// each time (cold), and repeated on one snapshot (warm). bytes-ratio and
// requests-ratio are a lookup's bytes and requests over the 10^3 case's
// in the same run (issue #28's yardstick); tv-bytes is E's table version.
// Under -short (CI's smoke run) 10^3 edges only (coldAdjSizes).
func BenchmarkColdAdjacency(b *testing.B) { forChunkForms(b, coldAdjacency) }

func coldAdjacency(b *testing.B) {
	base := map[bool][4]float64{} // out -> bytes, requests per lookup, and with the open, at 10^3
	for _, n := range coldAdjSizes() {
		fixture := adjGraph
		if n >= bulkFrom {
			fixture = bulkAdjGraph
		}
		cs, nodes := fixture(b, n)
		target := fmt.Sprintf("n%08d", nodes/2)
		for _, out := range []bool{true, false} {
			b.Run(fmt.Sprintf("edges=%d/out=%v", n, out), func(b *testing.B) {
				var bytes, reqs, openBytes, openReqs uint64
				for b.Loop() {
					cs.Reset()
					g := openGraph(b, cs, 5)
					openBytes += cs.Counts().BytesRead
					openReqs += cs.Counts().Requests()
					cs.Reset()
					rows, err := snap(b, g).adjacent(ctx, "E", target, out)
					must(b, err)
					if out && len(rows) != 10 {
						b.Fatalf("out-degree %d, want 10", len(rows))
					}
					bytes += cs.Counts().BytesRead
					reqs += cs.Counts().Requests()
				}
				perBytes, perReqs := float64(bytes)/float64(b.N), float64(reqs)/float64(b.N)
				b.ReportMetric(perBytes, "bytes/lookup")
				b.ReportMetric(perReqs, "requests/lookup")
				// With the open (schema, manifest: since format 11 the
				// table versions ride it), what a cold reader pays in all.
				coldBytes := perBytes + float64(openBytes)/float64(b.N)
				coldReqs := perReqs + float64(openReqs)/float64(b.N)
				b.ReportMetric(coldBytes, "bytes/open+lookup")
				b.ReportMetric(coldReqs, "requests/open+lookup")
				if n == 1_000 {
					base[out] = [4]float64{perBytes, perReqs, coldBytes, coldReqs}
				}
				if bb := base[out]; bb[0] > 0 {
					b.ReportMetric(perBytes/bb[0], "bytes-ratio")
					b.ReportMetric(perReqs/bb[1], "requests-ratio")
					b.ReportMetric(coldBytes/bb[2], "open+lookup-bytes-ratio")
					b.ReportMetric(coldReqs/bb[3], "open+lookup-requests-ratio")
				}
				b.ReportMetric(float64(edgeTableBytes(b, cs)), "edge-table-bytes")
				b.ReportMetric(float64(tableVersionBytes(b, cs, "E")), "tv-bytes")
			})
		}
		b.Run(fmt.Sprintf("edges=%d/warm-out", n), func(b *testing.B) {
			s := snap(b, openGraph(b, cs, 5))
			_, err := s.Out(ctx, "E", target)
			must(b, err)
			for b.Loop() {
				_, err := s.Out(ctx, "E", target)
				must(b, err)
			}
		})
	}
}

// cardGraph builds the fixture of BenchmarkCardInsert: edges+1 nodes and
// `edges` edges of the @card(0..1) type C (node i -> a scrambled node, so
// every node but the last has its one C edge), on a counting sim store.
func cardGraph(b testing.TB, edges int) *counting.Store {
	b.Helper()
	cs, g := newAdjGraph(b)
	nodes := edges + 1
	snapshot := snap(b, g)
	ct, _ := snapshot.Table("C")
	nb := nodeBuilder(snapshot, nodes)
	cb := array.NewRecordBuilder(goAlloc, ct.Schema())
	for i := 0; i < edges; i++ {
		cb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("c%09d", i))
		cb.Field(1).(*array.StringBuilder).Append(benchNode(i))
		cb.Field(2).(*array.StringBuilder).Append(benchNode((i * 7919) % nodes))
	}
	commitTx(b, g, func(tx *Txn) error {
		for _, w := range []struct {
			typ string
			rb  *array.RecordBuilder
		}{{"N", nb}, {"C", cb}} {
			if err := tx.WriteRecord(OpInsert, w.typ, w.rb.NewRecord()); err != nil {
				return err
			}
		}
		return nil
	})
	return cs
}

// BenchmarkCardInsert: bytes read by a one-edge insert into the
// @card(0..1) type C holding `edges` edges (the last node has no C edge
// yet), in total and by what they were for: C's adjacency and id indexes
// (the @card check, the new id's existence check, the rewrites), N's id
// index (the endpoint checks), C's
// data fragments, N's data fragments and table versions. ratio-vs-1e3 is
// bytes/op over the 10^3 case's bytes/op measured in the same run. The new
// edge's id lies inside C's id range (the harder case: an id past the
// range, as a monotonic generator's, is ruled out by the fragment infos
// alone), so its existence check goes through C's id index. Under -short
// (CI's smoke run) the smallest size only (adjSizes).
//
// table-version-bytes/op counts GETs under tables/: 0 since format 11,
// whose table versions ride their manifest (no table-version object; their
// bytes are read with the manifest, and tv-bytes is C's version's size),
// so it now says nothing; the fragment parts are 0 by design (no fragment
// is read).
//
// edges=n/node is #28's "one-row commit into a 10^7-row table" on the
// same fixture, after the edge runs: one node into N (n+1 rows) on a fresh
// handle, bytes read and written, rw-ratio-vs-1e3 against n = 10^3.
func BenchmarkCardInsert(b *testing.B) { forChunkForms(b, cardInsert) }

func cardInsert(b *testing.B) {
	var base, baseRW, baseNode float64
	for _, n := range adjSizes() {
		fixture := cardGraph
		if n >= bulkFrom {
			fixture = bulkCardGraph
		}
		cs := fixture(b, n)
		b.Run(fmt.Sprintf("edges=%d", n), func(b *testing.B) {
			bl := &byteLog{Store: cs}
			var bytes, written uint64
			parts := map[string]uint64{}
			prefixes := []struct{ metric, prefix string }{
				{"index-bytes/op", testRoot + "/adj/C/"}, {"id-index-bytes/op", testRoot + "/adj/N/"},
				{"edge-fragment-bytes/op", testRoot + "/data/C/"}, {"node-fragment-bytes/op", testRoot + "/data/N/"},
				{"table-version-bytes/op", testRoot + "/tables/"},
			}
			seed := uint64(100)
			newID := fmt.Sprintf("c%09dx", n/2) // between c(n/2) and c(n/2+1)
			for b.Loop() {
				seed++ // a fresh handle's entropy: the manual clock never moves
				g := openGraph(b, bl, seed)
				cs.Reset()
				bl.Reset()
				tx := begin(b, g)
				must(b, tx.Insert("C", Row{ID: newID, From: fmt.Sprintf("n%08d", n), To: "n00000000"}))
				_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"})
				must(b, err)
				bytes += cs.Counts().BytesRead
				written += cs.Counts().BytesWritten
				for _, p := range prefixes {
					_, n := prefixBytes(bl, p.prefix)
					parts[p.metric] += n
				}
				b.StopTimer()
				commitTx(b, g, func(tx *Txn) error { return tx.Delete("C", newID) }) // undo: the next op meets the same table
				b.StartTimer()
			}
			per := float64(bytes) / float64(b.N)
			b.ReportMetric(per, "bytes/op")
			for _, p := range prefixes {
				b.ReportMetric(float64(parts[p.metric])/float64(b.N), p.metric)
			}
			rw := float64(bytes+written) / float64(b.N)
			b.ReportMetric(float64(written)/float64(b.N), "bytes-written/op")
			b.ReportMetric(rw, "rw-bytes/op")
			b.ReportMetric(float64(tableVersionBytes(b, cs, "C")), "tv-bytes")
			if n == 1_000 {
				base, baseRW = per, rw
			}
			if base > 0 {
				b.ReportMetric(per/base, "ratio-vs-1e3")
				b.ReportMetric(rw/baseRW, "rw-ratio-vs-1e3")
			}
		})
		// #28's "one-row commit into a 10^7-row table": one node into N
		// (as many rows as C) on a fresh handle, after the edge runs.
		b.Run(fmt.Sprintf("edges=%d/node", n), func(b *testing.B) {
			var read, written uint64
			seed := uint64(1_000_000)
			id := fmt.Sprintf("n%08dx", n/2) // between n(n/2) and n(n/2+1)
			for b.Loop() {
				seed++
				g := openGraph(b, cs, seed)
				cs.Reset()
				tx := begin(b, g)
				must(b, tx.Insert("N", Row{ID: id}))
				_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "bench"})
				must(b, err)
				read += cs.Counts().BytesRead
				written += cs.Counts().BytesWritten
				b.StopTimer()
				commitTx(b, g, func(tx *Txn) error { return tx.Delete("N", id) }) // undo
				b.StartTimer()
			}
			rw := float64(read+written) / float64(b.N)
			b.ReportMetric(float64(read)/float64(b.N), "bytes/op")
			b.ReportMetric(float64(written)/float64(b.N), "bytes-written/op")
			b.ReportMetric(rw, "rw-bytes/op")
			if n == 1_000 {
				baseNode = rw
			}
			if baseNode > 0 {
				b.ReportMetric(rw/baseNode, "rw-ratio-vs-1e3")
			}
		})
	}
}

// BenchmarkFilteredScan: a qty range selecting 1% of 10^6 Item rows (qty
// ascends with the id, so it is clustered) against a full scan, cold
// (under -short 10^5 rows: still paged fragment infos, 13 fragments).
func BenchmarkFilteredScan(b *testing.B) {
	n := benchsize.Or(1_000_000, 100_000)
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	g := benchGraph(b, cs, "g")
	rec := itemRecord(b, g, n)
	insertRecord(b, g, rec)
	rec.Release()
	where := pred.And(pred.Ge("qty", int64(n/2)), pred.Lt("qty", int64(n/2+n/100)))
	measure := func(b *testing.B, w *pred.Expr, want int) uint64 {
		var bytes uint64
		for b.Loop() {
			s := snap(b, openGraphAt(b, cs, "g"))
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
		return bytes / uint64(b.N)
	}
	var full uint64
	b.Run("full", func(b *testing.B) { full = measure(b, nil, n) })
	b.Run("range-1pct", func(b *testing.B) {
		part := measure(b, &where, n/100)
		b.ReportMetric(100*float64(part)/float64(full), "pct-of-full")
	})
}

func openGraphAt(b *testing.B, cs *counting.Store, root string) *Graph {
	g, err := Open(ctx, cs, root, Options{Kernel: kernel.Options{Env: testEnv(5)}})
	must(b, err)
	return g
}

// BenchmarkExpand3Hop: a 3-hop outward Expand from one node over 10^5
// nodes and 10^6 edges (10^4 / 10^5 without -bench-large; the smallest of
// adjSizes under -short), cold.
func BenchmarkExpand3Hop(b *testing.B) {
	n := adjSizes()[len(adjSizes())-1]
	fixture := adjGraph
	if n >= bulkFrom {
		fixture = bulkAdjGraph
	}
	cs, _ := fixture(b, n)
	var bytes uint64
	reached := 0
	var elapsed time.Duration
	for b.Loop() {
		s := snap(b, openGraph(b, cs, 5))
		cs.Reset()
		res, err := Expand(ctx, s, []string{"n00000001"}, "E", traverse.Out, 0, 3, traverse.Limits{})
		must(b, err)
		reached += len(res.Nodes)
		bytes += cs.Counts().BytesRead
	}
	elapsed = b.Elapsed()
	b.ReportMetric(float64(reached)/elapsed.Seconds(), "nodes/s")
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
	b.ReportMetric(float64(reached)/float64(b.N), "nodes/op")
}

// edgeTableBytes is the size of E's Arrow fragments at main's head: what
// finding a node's edges costs without the index (reading the table's
// files directly).
func edgeTableBytes(b *testing.B, cs *counting.Store) uint64 {
	b.Helper()
	s := snap(b, openGraph(b, cs, 5))
	v, err := s.r.view(ctx, s.cat.tables["E"], pinRef(s.ks, "E"))
	must(b, err)
	must(b, s.r.ensureFrags(ctx, v))
	var n uint64
	for _, f := range v.frags {
		n += f.Bytes
	}
	return n
}

// tableVersionBytes is the stored size of table typ's pinned version at
// main's head: what every cold lookup of the table reads first.
func tableVersionBytes(b *testing.B, cs *counting.Store, typ string) int {
	b.Helper()
	g := openGraph(b, cs, 5)
	s := snap(b, g)
	pin := pinRef(s.ks, typ)
	if pin.Riding != "" { // format 11: the version rides its manifest, no object
		return len(pin.Riding)
	}
	obj, err := cs.Get(ctx, g.keys.TableVersionRef(typ, pin.Ref()))
	must(b, err)
	return len(obj.Data)
}
