package data

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// noAdjDelta makes the test's commits rewrite the adjacency pages as
// format 12 did (a small edge insert would ride the adjacency delta and
// write no index object): for tests about page writes, their failures
// and crash cuts, and tree shapes.
func noAdjDelta(t testing.TB) {
	t.Helper()
	adjDeltaWrites = false
	t.Cleanup(func() { adjDeltaWrites = true })
}

// adjDeltaOf returns the ids of the adjacency delta of the version g's
// main pins for table (none without one), decoded as a reader does.
func adjDeltaOf(t *testing.T, g *Graph, table string) []string {
	t.Helper()
	md := pinnedMetadata(t, g, table)
	tb, err := snap(t, g).Table(table)
	must(t, err)
	_, _, ids, err := AdjacencyDelta(tb, md)
	must(t, err)
	sort.Strings(ids)
	return ids
}

// edgesOf returns "out:ids|in:ids" of node in edge table typ, read by a
// cold handle on st (sorted ids).
func edgesOf(t *testing.T, s *Snapshot, typ, node string) string {
	t.Helper()
	var parts []string
	for _, out := range []bool{true, false} {
		rows, err := s.adjacent(ctx, typ, node, out)
		must(t, err)
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		parts = append(parts, strings.Join(ids, ","))
	}
	return parts[0] + "|" + parts[1]
}

// TestAdjDeltaRidesTheVersion (format 13, #28): after a version with a
// non-empty adjacency index, one-edge inserts write no index object (the
// rows ride the table version as the adjacency delta) until the delta
// would pass MaxAdjDeltaRows, when the insert folds it into the pages;
// Out and In from a warm and a cold handle see every delta edge, and so do
// the @card check (a second WorksAt of a person whose first is in the
// delta is refused) and a cascading node delete (its delta edges go with
// it); an update or a delete of a delta edge folds the delta. Red when
// the reader ignores the delta (plant adj-delta-skip: the edges are
// missing) or the writer rewrites pages (index PUTs).
func TestAdjDeltaRidesTheVersion(t *testing.T) {
	defaultFragmentShapes(t, "it counts the index objects a commit writes, and fragment chunks share their prefix")
	st := sim.New(sim.Config{Seed: 1})
	cs := counting.New(st)
	g := initGraph(t, cs, Limits{})
	seedGraph(t, g)
	knows := func(i int) Row { return edge(fmt.Sprintf("k%03d", i), "p2", "p3") }
	for i := 0; i < MaxAdjDeltaRows; i++ {
		cs.Reset()
		commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", knows(i)) })
		if n := cs.CountWhere("put", testRoot+"/adj/Knows/"); n != 0 {
			t.Fatalf("edge insert %d wrote %d index objects, want 0 (the delta)", i, n)
		}
		if d := adjDeltaOf(t, g, "Knows"); len(d) != i+1 {
			t.Fatalf("after insert %d the delta holds %v, want %d edges", i, d, i+1)
		}
	}
	var want []string
	for i := 0; i < MaxAdjDeltaRows; i++ {
		want = append(want, fmt.Sprintf("k%03d", i))
	}
	wantP2 := strings.Join(want, ",") + "|k1"
	for i, h := range []*Graph{g, openGraph(t, st, 7)} {
		if got := edgesOf(t, snap(t, h), "Knows", "p2"); got != wantP2 {
			t.Fatalf("handle %d: Knows of p2 %s, want %s", i, got, wantP2)
		}
		if got := edgesOf(t, snap(t, h), "Knows", "p3"); got != "|"+strings.Join(want, ",") {
			t.Fatalf("handle %d: Knows of p3 %s, want |%s", i, got, strings.Join(want, ","))
		}
	}
	cs.Reset()
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", knows(MaxAdjDeltaRows)) })
	if cs.CountWhere("put", testRoot+"/adj/Knows/") == 0 || len(adjDeltaOf(t, g, "Knows")) != 0 {
		t.Fatalf("the insert past the bound did not fold the delta (%v left)", adjDeltaOf(t, g, "Knows"))
	}
	want = append(want, fmt.Sprintf("k%03d", MaxAdjDeltaRows))
	if got := edgesOf(t, snap(t, openGraph(t, st, 8)), "Knows", "p2"); got != strings.Join(want, ",")+"|k1" {
		t.Fatalf("after the fold: Knows of p2 %s", got)
	}

	// @card: p2's first WorksAt rides the delta; a second is refused,
	// from a warm and a cold handle.
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("WorksAt", edge("w2", "p2", "c1")) })
	if d := adjDeltaOf(t, g, "WorksAt"); strings.Join(d, ",") != "w2" {
		t.Fatalf("WorksAt delta %v, want w2", d)
	}
	for i, h := range []*Graph{g, openGraph(t, st, 9)} {
		tx, err := h.Begin(ctx, mainRef(t, h))
		must(t, err)
		must(t, tx.Insert("WorksAt", edge("w3", "p2", "c2")))
		if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test"}); !errors.Is(err, ErrCardinality) {
			t.Fatalf("handle %d: a second WorksAt of p2 (the first in the delta): %v, want ErrCardinality", i, err)
		}
	}

	// An update of a delta edge folds; so does a delete.
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Reports", edge("r2", "p2", "p3"), edge("r3", "p3", "p1")) })
	if d := adjDeltaOf(t, g, "Reports"); strings.Join(d, ",") != "r2,r3" {
		t.Fatalf("Reports delta %v, want r2,r3", d)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Upsert("Reports", edge("r2", "p2", "p1")) })
	if d := adjDeltaOf(t, g, "Reports"); len(d) != 0 {
		t.Fatalf("an update left the Reports delta %v", d)
	}
	if got := edgesOf(t, snap(t, openGraph(t, st, 10)), "Reports", "p1"); got != "r1|r2,r3" {
		t.Fatalf("after the update: Reports of p1 %s, want r1|r2,r3", got)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Reports", edge("r4", "p3", "p2")) })
	commitTx(t, g, func(tx *Txn) error { return tx.Delete("Reports", "r4") })
	if d := adjDeltaOf(t, g, "Reports"); len(d) != 0 {
		t.Fatalf("a delete left the Reports delta %v", d)
	}

	// A cascading node delete takes its delta edges with it.
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("k900", "p3", "p1")) })
	if d := adjDeltaOf(t, g, "Knows"); strings.Join(d, ",") != "k900" {
		t.Fatalf("Knows delta %v, want k900", d)
	}
	commitTx(t, g, func(tx *Txn) error { return tx.DeleteCascade("Person", "p3") })
	s := snap(t, openGraph(t, st, 11))
	for _, typ := range []string{"Knows", "Reports"} {
		if got := edgesOf(t, s, typ, "p3"); got != "|" {
			t.Fatalf("after p3's cascading delete: %s of p3 %s, want none", typ, got)
		}
	}
	if got := scanIDs(t, s, "Knows"); strings.Contains(got, "k900") || strings.Contains(got, "k000") {
		t.Fatalf("after p3's cascading delete Knows holds %s", got)
	}
}

// TestAdjDeltaSurvivesCompaction: a compaction of an edge table whose
// version has an adjacency delta keeps the delta (content-preserving: the
// same rows) and repacks poorly filled pages beside it, counting the
// pages' rows without the delta's; Out and In answer the same before and
// after, from a cold handle, and the next small insert extends the delta.
// Red when the repack counts the version's rows for the pages (a panic:
// the refs hold fewer) or the compaction drops the delta key (the
// version's refs no longer add up: ErrCorrupt).
func TestAdjDeltaSurvivesCompaction(t *testing.T) {
	st := sim.New(sim.Config{Seed: 1})
	g := initGraph(t, st, Limits{}).withIndexFanout(2) // pages of two rows: deletes leave them poorly filled
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error {
		for i := 0; i <= MaxAdjDeltaRows; i++ {
			if err := tx.Insert("Knows", edge(fmt.Sprintf("k%03d", i), []string{"p1", "p2", "p3"}[i%3], []string{"p2", "p3", "p1"}[i%3])); err != nil {
				return err
			}
		}
		return nil
	})
	commitTx(t, g, func(tx *Txn) error {
		for i := 0; i <= MaxAdjDeltaRows; i += 2 {
			if err := tx.Delete("Knows", fmt.Sprintf("k%03d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	for i := 0; i < 3; i++ {
		commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge(fmt.Sprintf("kd%d", i), "p3", "p2")) })
	}
	if d := adjDeltaOf(t, g, "Knows"); strings.Join(d, ",") != "kd0,kd1,kd2" {
		t.Fatalf("Knows delta %v, want kd0..kd2", d)
	}
	before := map[string]string{}
	for _, p := range []string{"p1", "p2", "p3"} {
		before[p] = edgesOf(t, snap(t, openGraph(t, st, 20)), "Knows", p)
	}
	rep, err := g.Compact(ctx, mainRef(t, g), compact.Policy{})
	must(t, err)
	knows := tableCompaction(rep, "Knows")
	if knows == nil || !slices.Contains(knows.Repacked, "out") {
		t.Fatalf("the compaction did not repack Knows' out pages: %+v", rep.Tables)
	}
	if d := adjDeltaOf(t, g, "Knows"); strings.Join(d, ",") != "kd0,kd1,kd2" {
		t.Fatalf("after the compaction the Knows delta is %v, want kd0..kd2", d)
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		if got := edgesOf(t, snap(t, openGraph(t, st, 21)), "Knows", p); got != before[p] {
			t.Fatalf("after the compaction Knows of %s %s, want %s", p, got, before[p])
		}
	}
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("kd3", "p1", "p1")) })
	if d := adjDeltaOf(t, g, "Knows"); len(d) != 4 {
		t.Fatalf("after the compaction an insert left the delta %v, want 4 edges", d)
	}
}

// TestCorruptAdjDeltaIsTyped: a table version whose adjacency delta breaks
// a rule is refused as corrupt (format.ErrCorrupt) when its view is built,
// before any row is used: every field's bound, the page's size and CRC
// against the header, its decode, order and range, its row count, and the
// delta's place (beside a non-empty index, within the version's rows).
func TestCorruptAdjDeltaIsTyped(t *testing.T) {
	g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge("k2", "p2", "p3"), edge("k3", "p3", "p1")) })
	tv := pinnedVersion(t, g, "Knows")
	s := snap(t, g)
	tb, err := s.Table("Knows")
	must(t, err)
	md := map[string]string{}
	for _, kv := range tv.Metadata {
		md[kv.Key] = kv.Value
	}
	var good adjDeltaJSON
	if err := json.Unmarshal([]byte(md[metaAdjDeltaKey]), &good); err != nil || good.Rows != 2 {
		t.Fatalf("fixture delta %q: %v", md[metaAdjDeltaKey], err)
	}
	if _, err := s.r.viewOf(tb, tv); err != nil {
		t.Fatalf("the fixture's view: %v", err)
	}
	unsorted, err := encodeRowsPage(g.codec, tb, []rowSrc{{buildRecord(tb, []Row{edge("k3", "p3", "p1"), edge("k2", "p2", "p3")}), 0}, {buildRecord(tb, []Row{edge("k3", "p3", "p1"), edge("k2", "p2", "p3")}), 1}})
	must(t, err)
	page := func(b []byte) func(*adjDeltaJSON) {
		return func(d *adjDeltaJSON) {
			d.Page, d.Bytes, d.CRC32C = base64.StdEncoding.EncodeToString(b), uint64(len(b)), crc32.Checksum(b, castagnoli)
		}
	}
	cases := []struct {
		name string
		edit func(*adjDeltaJSON)
		raw  string
		md   func(map[string]string)
		rows uint64
	}{
		{name: "not JSON", raw: "{"},
		{name: "unknown shape", raw: `[1,2]`},
		{name: "no rows", edit: func(d *adjDeltaJSON) { d.Rows = 0 }},
		{name: "rows past the bound", edit: func(d *adjDeltaJSON) { d.Rows = MaxAdjDeltaRows + 1 }},
		{name: "rows other than the page's", edit: func(d *adjDeltaJSON) { d.Rows = 1 }},
		{name: "bytes past the bound", edit: func(d *adjDeltaJSON) { d.Bytes = MaxAdjDeltaBytes + 1 }},
		{name: "size other than the page's", edit: func(d *adjDeltaJSON) { d.Bytes++ }},
		{name: "crc other than the page's", edit: func(d *adjDeltaJSON) { d.CRC32C++ }},
		{name: "page not base64", edit: func(d *adjDeltaJSON) { d.Page = "!" + d.Page[1:] }},
		{name: "page base64 unpadded", edit: func(d *adjDeltaJSON) { d.Page = strings.TrimRight(d.Page, "=") + "A" }},
		{name: "page past the bound", edit: page(make([]byte, MaxAdjDeltaBytes+1))},
		{name: "page not a page", edit: page([]byte("not a page at all"))},
		{name: "rows out of order", edit: page(unsorted)},
		{name: "first key other than the page's", edit: func(d *adjDeltaJSON) { d.LoKey = "p1" }},
		{name: "first id other than the page's", edit: func(d *adjDeltaJSON) { d.LoID = "k0" }},
		{name: "last key other than the page's", edit: func(d *adjDeltaJSON) { d.HiKey = "p4" }},
		{name: "keys reversed", edit: func(d *adjDeltaJSON) { d.LoKey, d.HiKey = d.HiKey, d.LoKey }},
		{name: "no index beside it", md: func(m map[string]string) { delete(m, metaAdjPrefix+"out"); delete(m, metaAdjPrefix+"in") }},
		{name: "more rows than the version", rows: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := map[string]string{}
			for k, v := range md {
				m[k] = v
			}
			d := good
			if c.edit != nil {
				c.edit(&d)
			}
			b, err := json.Marshal(d)
			must(t, err)
			m[metaAdjDeltaKey] = string(b)
			if c.raw != "" {
				m[metaAdjDeltaKey] = c.raw
			}
			if c.md != nil {
				c.md(m)
			}
			bad := tv
			bad.Metadata = nil
			for k, v := range m {
				bad.Metadata = append(bad.Metadata, format.KV{Key: k, Value: v})
			}
			sort.Slice(bad.Metadata, func(i, j int) bool { return bad.Metadata[i].Key < bad.Metadata[j].Key })
			if c.rows > 0 {
				bad.Rows = c.rows
			}
			if _, err := s.r.viewOf(tb, bad); !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("view of a version whose delta has %s: %v, want format.ErrCorrupt", c.name, err)
			}
		})
	}
	t.Run("on a node table", func(t *testing.T) {
		person := pinnedVersion(t, g, "Person")
		pt, err := s.Table("Person")
		must(t, err)
		person.Metadata = append(append([]format.KV(nil), person.Metadata...), format.KV{Key: metaAdjDeltaKey, Value: md[metaAdjDeltaKey]})
		sort.Slice(person.Metadata, func(i, j int) bool { return person.Metadata[i].Key < person.Metadata[j].Key })
		if _, err := s.r.viewOf(pt, person); !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("view of a node table version with an adjacency delta: %v, want format.ErrCorrupt", err)
		}
	})
}

// FuzzAdjDelta: any value of data.adjdelta decodes (AdjacencyDelta) to at
// most MaxAdjDeltaRows edges in (from, id) order, or fails with
// ErrCorruptFragment; never a panic, never an allocation past the bounds.
func FuzzAdjDelta(f *testing.F) {
	cat := testCatalog(f)
	tb := cat.tables["Knows"]
	rec := buildRecord(tb, []Row{edge("k2", "a", "b"), edge("k1", "b", "a"), edge("k3", "b", "c")})
	raw, fits, err := encodeAdjDelta(CodecZstd, tb, adjDeltaSrcs(rec))
	if err != nil || !fits {
		f.Fatalf("seed delta: %v %v", fits, err)
	}
	f.Add(raw)
	f.Add(`{"lo":"a","lo_id":"k","hi":"a","rows":1,"bytes":3,"crc32c":0,"page":"AAAA"}`)
	f.Fuzz(func(t *testing.T, raw string) {
		from, to, ids, err := AdjacencyDelta(tb, map[string]string{metaAdjDeltaKey: raw})
		if err != nil {
			if !errors.Is(err, ErrCorruptFragment) {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		if len(ids) == 0 || len(ids) > MaxAdjDeltaRows || len(from) != len(ids) || len(to) != len(ids) {
			t.Fatalf("decoded %d edges", len(ids))
		}
		for i := 1; i < len(ids); i++ {
			if from[i] < from[i-1] || from[i] == from[i-1] && ids[i] <= ids[i-1] {
				t.Fatalf("decoded edges out of (from, id) order at %d", i)
			}
		}
	})
}

// TestFormat12GraphOpensAndWritesDelta: a graph written as format 12 did
// (every edge commit rewrites pages, no delta), manifests and versions
// stamped 12, opens read-write without a write and reads the same
// adjacency; its next one-edge commit is stamped 13, writes no index
// object and carries the edge in a delta, which a cold handle's Out and
// In see beside the old pages.
func TestFormat12GraphOpensAndWritesDelta(t *testing.T) {
	defaultFragmentShapes(t, "a format-12 fixture restamped (fragment chunks not re-summed)")
	defaultIndexShapes(t, "a format-12 fixture restamped (ref chunks not re-summed)")
	versionsAsObjects(t)
	noAdjDelta(t)
	st := sim.New(sim.Config{Seed: 1})
	cs := counting.New(st)
	g := initGraph(t, cs, Limits{})
	seedGraph(t, g)
	for i := range 5 {
		commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", edge(fmt.Sprintf("k%03d", i), "p1", "p3")) })
	}
	if d := adjDeltaOf(t, g, "Knows"); len(d) != 0 {
		t.Fatalf("a format-12 writer left a delta %v", d)
	}
	wantP1 := edgesOf(t, snap(t, g), "Knows", "p1")
	restampTo(t, st, format.FormatV12)
	adjDeltaWrites = true
	before := st.Keys(testRoot + "/branches/main/")[0]
	p := openGraph(t, cs, 3)
	if st.Keys(testRoot + "/branches/main/")[0] != before {
		t.Fatal("a read-write open of a format-12 graph wrote a manifest")
	}
	if got := edgesOf(t, snap(t, p), "Knows", "p1"); got != wantP1 {
		t.Fatalf("format-12 Knows of p1 %s, want %s", got, wantP1)
	}
	cs.Reset()
	commitTx(t, p, func(tx *Txn) error { return tx.Insert("Knows", edge("k999", "p1", "p3")) })
	if n := cs.CountWhere("put", testRoot+"/adj/"); n != 0 {
		t.Fatalf("the first format-13 edge insert wrote %d index objects, want 0 (the delta)", n)
	}
	if d := adjDeltaOf(t, p, "Knows"); strings.Join(d, ",") != "k999" {
		t.Fatalf("delta %v, want k999", d)
	}
	out, in, _ := strings.Cut(wantP1, "|")
	if got := edgesOf(t, snap(t, openGraph(t, st, 4)), "Knows", "p1"); got != out+",k999|"+in {
		t.Fatalf("Knows of p1 after the commit %s, want %s,k999|%s", got, out, in)
	}
	obj, err := st.Get(ctx, st.Keys(testRoot + "/branches/main/")[0])
	must(t, err)
	if m, _, err := format.DecodeManifest(obj.Data); err != nil || m.FormatStamp != format.CurrentFormat {
		t.Fatalf("manifest after the commit: stamp %d, %v; want %d", m.FormatStamp, err, format.CurrentFormat)
	}
}
