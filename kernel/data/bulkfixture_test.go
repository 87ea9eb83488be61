package data

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// Bulk fixtures of the scale benchmarks (issue #28): a table of 10^7 rows
// loaded through transactions takes many minutes and gigabytes, so these
// builders write, for a generated table, exactly the objects one commit
// of all its rows writes — fragments of MaxFragmentRows rows in id order
// (EncodeFragmentWith), per index direction pages of the page size in
// (key, id) order and chunks of the chunk size (writePages,
// writeIDPages, writeChunks, rootRefs), the fragment infos inline or paged
// (fragContent) — streaming, a page or fragment at a time, and publish the
// version through the kernel's Write. Only the names (fresh ULIDs)
// differ from a transaction's.

// genTable is a generated table: n rows, row i's id, its from and to node
// numbers (edges) and, for E, w = i.
type genTable struct {
	name     string
	n        int
	id       func(i int) string
	from, to func(i int) int // nil for a node table
}

// bulkBuilder writes generated tables into a graph handle without a cache.
type bulkBuilder struct {
	b testing.TB
	g *Graph
	w adjWriter
}

// newBulkGraph initialises an empty graph of adjSchemaText on a counting
// sim store and returns the store and a builder on it.
func newBulkGraph(b testing.TB) (*counting.Store, *bulkBuilder) {
	b.Helper()
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	s, err := schema.Parse([]byte(adjSchemaText))
	must(b, err)
	g, err := Init(ctx, cs, testRoot, s, Options{Kernel: kernel.Options{Env: testEnv(1)}, CacheBytes: -1})
	must(b, err)
	g.jsonChunks = testJSONChunks
	benchShapes(g)
	return cs, &bulkBuilder{b: b, g: g, w: adjWriter{g: g, r: newReader(g, nil)}}
}

// record builds the rows idx of gt as a record of t.
func (bb *bulkBuilder) record(t *Table, gt genTable, idx []int32) []rowSrc {
	rb := array.NewRecordBuilder(goAlloc, t.Schema())
	defer rb.Release()
	for _, i := range idx {
		rb.Field(0).(*array.StringBuilder).Append(gt.id(int(i)))
		if gt.from == nil {
			rb.Field(1).(*array.StringBuilder).AppendNull() // N's name
			continue
		}
		rb.Field(1).(*array.StringBuilder).Append(benchNode(gt.from(int(i))))
		rb.Field(2).(*array.StringBuilder).Append(benchNode(gt.to(int(i))))
		if t.Name == "E" {
			rb.Field(3).(*array.Int64Builder).Append(int64(i))
		}
	}
	rec := rb.NewRecord()
	rows := make([]rowSrc, len(idx))
	for j := range rows {
		rows[j] = rowSrc{rec, j}
	}
	return rows
}

// content writes every object of a version of gt and returns its content.
func (bb *bulkBuilder) content(gt genTable) kernel.TableContent {
	b := bb.b
	t, err := bb.g.mustCatalog(b).table(gt.name)
	must(b, err)
	span := func(lo, hi int) []int32 {
		idx := make([]int32, hi-lo)
		for j := range idx {
			idx[j] = int32(lo + j)
		}
		return idx
	}
	var infos []FragmentInfo
	for lo := 0; lo < gt.n; lo += MaxFragmentRows {
		rows := bb.record(t, gt, span(lo, min(lo+MaxFragmentRows, gt.n)))
		data, info, err := EncodeFragmentWith(t, rows[0].rec, bb.g.codec)
		must(b, err)
		rows[0].rec.Release()
		id, err := bb.g.mintName()
		must(b, err)
		must(b, bb.g.putFragment(ctx, bb.g.keys.Data(t.Storage, id), data))
		info.Name = id.String()
		infos = append(infos, info)
	}
	c, err := bb.w.fragContent(ctx, t, infos, uint64(gt.n), nil)
	must(b, err)
	var ids []string
	var idPages []adjRef
	for i := 0; i < gt.n; i++ { // ids ascend with i
		if ids = append(ids, gt.id(i)); len(ids) == idPageRows(t) || i == gt.n-1 {
			pages, err := bb.w.writeIDPages(ctx, t, ids)
			must(b, err)
			idPages, ids = append(idPages, pages...), nil
		}
	}
	bb.setIndex(c, t, dirID, idPages)
	if gt.from == nil {
		return c
	}
	for _, d := range []adjDir{dirOut, dirIn} {
		key := gt.from
		if d == dirIn {
			key = gt.to
		}
		order := span(0, gt.n)
		slices.SortFunc(order, func(a, z int32) int { // (key, id); ids ascend with i
			return cmp.Or(cmp.Compare(key(int(a)), key(int(z))), cmp.Compare(a, z))
		})
		var pages []adjRef
		for lo := 0; lo < gt.n; lo += AdjPageRows {
			rows := bb.record(t, gt, order[lo:min(lo+AdjPageRows, gt.n)])
			p, err := bb.w.writePages(ctx, t, d, rows)
			must(b, err)
			rows[0].rec.Release()
			pages = append(pages, p...)
		}
		bb.setIndex(c, t, d, pages)
	}
	return c
}

// setIndex writes the chunks (and ref chunks) over pages of direction d
// and sets the version's refs in c.
func (bb *bulkBuilder) setIndex(c kernel.TableContent, t *Table, d adjDir, pages []adjRef) {
	chunks, err := bb.w.writeChunks(ctx, t, d, pages)
	must(bb.b, err)
	refs, err := bb.w.rootRefs(ctx, t, d, chunks)
	must(bb.b, err)
	j, err := json.Marshal(refs)
	must(bb.b, err)
	c.Metadata[metaAdjPrefix+d.String()] = string(j)
}

// publish writes every table of gts and publishes them in one commit.
func (bb *bulkBuilder) publish(gts ...genTable) {
	var writes []kernel.TableWrite
	for _, gt := range gts {
		c := bb.content(gt)
		writes = append(writes, kernel.TableWrite{Table: gt.name, Build: func(kernel.TableVersion) (kernel.TableContent, error) { return c, nil }})
	}
	br, err := bb.g.Branch(ctx, "main")
	must(bb.b, err)
	_, err = bb.g.k.WriteWith(ctx, br, writes, kernel.LineageIntent{Actor: "bulk"}, kernel.WriteOptions{Kind: WriterKindTxn})
	must(bb.b, err)
}

// mustCatalog returns the catalog of main's head schema.
func (g *Graph) mustCatalog(b testing.TB) *catalog {
	b.Helper()
	return snap(b, g).cat
}

// bulkAdjGraph is adjGraph built in bulk: edges/10 nodes, `edges` E edges
// (node i/10 -> node (i*7919) mod nodes), a C edge from every node to its
// successor but the last.
func bulkAdjGraph(b testing.TB, edges int) (*counting.Store, int) {
	b.Helper()
	cs, bb := newBulkGraph(b)
	nodes := edges / 10
	bb.publish(
		genTable{name: "N", n: nodes, id: benchNode},
		genTable{name: "E", n: edges, id: func(i int) string { return fmt.Sprintf("e%09d", i) },
			from: func(i int) int { return i / 10 }, to: func(i int) int { return (i * 7919) % nodes }},
		genTable{name: "C", n: nodes - 1, id: func(i int) string { return fmt.Sprintf("c%09d", i) },
			from: func(i int) int { return i }, to: func(i int) int { return i + 1 }},
	)
	return cs, nodes
}

// bulkCardGraph is cardGraph built in bulk: edges+1 nodes and `edges` C
// edges (node i -> node (i*7919) mod nodes).
func bulkCardGraph(b testing.TB, edges int) *counting.Store {
	b.Helper()
	cs, bb := newBulkGraph(b)
	nodes := edges + 1
	bb.publish(
		genTable{name: "N", n: nodes, id: benchNode},
		genTable{name: "C", n: edges, id: func(i int) string { return fmt.Sprintf("c%09d", i) },
			from: func(i int) int { return i }, to: func(i int) int { return (i * 7919) % nodes }},
	)
	return cs
}

// TestBulkFixtureMatchesCommit: the bulk builder writes what one commit of
// the same rows writes: the same fragment infos but names, the same index
// shape (page and chunk counts per direction), and the same answers.
func TestBulkFixtureMatchesCommit(t *testing.T) {
	const edges = 70_000 // two level-0 chunks per adjacency direction: one ref chunk above them
	bulk, nodes := bulkAdjGraph(t, edges)
	txn, _ := adjGraph(t, edges)
	gb, gt := openGraph(t, bulk, 5), openGraph(t, txn, 5)
	for _, table := range []string{"N", "E", "C"} {
		vb, vt := pinnedVersion(t, gb, table), pinnedVersion(t, gt, table)
		if vb.Rows != vt.Rows || len(vb.Metadata) != len(vt.Metadata) {
			t.Fatalf("%s: bulk %d rows %d keys, commit %d rows %d keys", table, vb.Rows, len(vb.Metadata), vt.Rows, len(vt.Metadata))
		}
		for _, d := range []string{"out", "in", "id"} {
			if table == "N" && d != "id" {
				continue
			}
			rb, rt := indexRefsOf(t, vb, d), indexRefsOf(t, vt, d)
			if len(rb) != len(rt) || rb[0].Rows != rt[0].Rows || rb[0].LoKey != rt[0].LoKey || rb[0].HiKey != rt[0].HiKey || rb[0].Level != rt[0].Level {
				t.Fatalf("%s %s: bulk refs %+v, commit %+v", table, d, rb, rt)
			}
		}
	}
	for _, n := range []int{0, nodes / 3, nodes - 1} {
		for _, out := range []bool{true, false} {
			rb, err := snap(t, gb).adjacent(ctx, "E", benchNode(n), out)
			must(t, err)
			rt, err := snap(t, gt).adjacent(ctx, "E", benchNode(n), out)
			must(t, err)
			if ids(rb) != ids(rt) || len(rb) == 0 {
				t.Fatalf("node %d out=%v: bulk %s, commit %s", n, out, ids(rb), ids(rt))
			}
		}
	}
}
