package data

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
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
	md := map[string]string{}
	for _, kv := range pinnedVersion(t, g, table).Metadata {
		md[kv.Key] = kv.Value
	}
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
	var knows *TableCompaction
	for i := range rep.Tables {
		if rep.Tables[i].Table == "Knows" {
			knows = &rep.Tables[i]
		}
	}
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
