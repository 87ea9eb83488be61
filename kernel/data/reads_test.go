package data

import (
	"errors"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/counting"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// bigPersons commits n Person rows p00000.. in one transaction (so they
// land in fragments of MaxFragmentRows rows, ages ascending with the id).
func bigPersons(t testing.TB, g *Graph, n int) {
	t.Helper()
	commitTx(t, g, func(tx *Txn) error {
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{ID: fmt.Sprintf("p%05d", i), Props: map[string]any{"name": "n", "age": int64(i)}}
		}
		return tx.Insert("Person", rows...)
	})
}

func dataGets(cs *counting.Store) int { return cs.CountWhere(objstore.OpGet, testRoot+"/data/") }

func openWith(t testing.TB, store objstore.Store, cacheBytes int64) *Graph {
	t.Helper()
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: testEnv(9)}, CacheBytes: cacheBytes})
	must(t, err)
	return g
}

// TestFragmentCacheShared: the snapshots of one handle share decoded
// fragments (a second snapshot's Get fetches nothing), the cache stays
// within its byte limit, and a disabled cache fetches every time.
func TestFragmentCacheShared(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	bigPersons(t, initGraph(t, cs, Limits{}), 3*MaxFragmentRows)
	for _, c := range []struct {
		name       string
		cacheBytes int64
		secondGets int
	}{{"default", 0, 0}, {"disabled", -1, 1}} {
		g := openWith(t, cs, c.cacheBytes)
		cs.Reset()
		_, ok, err := snap(t, g).Get(ctx, "Person", "p00007")
		must(t, err)
		if !ok || dataGets(cs) != 1 {
			t.Fatalf("%s: cold Get found=%v with %d fragment GETs, want 1", c.name, ok, dataGets(cs))
		}
		cs.Reset()
		_, ok, err = snap(t, g).Get(ctx, "Person", "p00008")
		must(t, err)
		if !ok || dataGets(cs) != c.secondGets {
			t.Fatalf("%s: second snapshot's Get made %d fragment GETs, want %d", c.name, dataGets(cs), c.secondGets)
		}
	}
	g := openWith(t, cs, 1) // smaller than any fragment: nothing fits
	for i := 0; i < 3; i++ {
		_, _, err := snap(t, g).Get(ctx, "Person", fmt.Sprintf("p%05d", i*MaxFragmentRows))
		must(t, err)
	}
	if st := g.CacheStats(); st.Bytes > st.Limit || st.Fragments != 0 {
		t.Fatalf("cache over its limit: %+v", st)
	}
}

// TestFragmentCacheEvicts: the least recently used fragment goes first and
// the charged bytes never pass the limit.
func TestFragmentCacheEvicts(t *testing.T) {
	c := newFragCache(100)
	c.put("a", nil, 40)
	c.put("b", nil, 40)
	c.getAny("a")
	c.put("c", nil, 40) // evicts b, the least recently used
	if _, ok := c.getAny("b"); ok {
		t.Fatal("b survived; want LRU eviction")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.getAny(k); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
	if c.used != 80 || len(c.m) != 2 {
		t.Fatalf("used %d bytes in %d entries", c.used, len(c.m))
	}
}

// TestGetManyReadsEachFragmentOnce: GetMany over ids spread across
// fragments fetches each covering fragment exactly once, skips the others,
// and returns the existing rows sorted and unique.
func TestGetManyReadsEachFragmentOnce(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	bigPersons(t, initGraph(t, cs, Limits{}), 4*MaxFragmentRows)
	g := openGraph(t, cs, 3)
	s := snap(t, g)
	want := []string{"p00001", "p00002", "p16390", "p16391"}
	asked := []string{"p16391", "missing", "p00001", "p16390", "p00002", "p00001"}
	cs.Reset()
	rows, err := s.GetMany(ctx, "Person", asked)
	must(t, err)
	if got := ids(rows); got != fmt.Sprint(want[0], ",", want[1], ",", want[2], ",", want[3]) {
		t.Fatalf("GetMany = %s, want %v", got, want)
	}
	if n := dataGets(cs); n != 2 {
		t.Fatalf("GetMany made %d fragment GETs, want 2 (one per covering fragment)", n)
	}
	if _, err := s.GetMany(ctx, "Person", make([]string, MaxGetMany+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized GetMany: %v", err)
	}
}

// TestScanWherePrunes: a range on a clustered property fetches only the
// fragments whose statistics admit it and returns exactly the matching
// rows; a bad predicate is a typed error before any request.
func TestScanWherePrunes(t *testing.T) {
	cs := counting.New(sim.New(sim.Config{Seed: 1}))
	bigPersons(t, initGraph(t, cs, Limits{}), 4*MaxFragmentRows)
	g := openGraph(t, cs, 3)
	s := snap(t, g)
	where := pred.And(pred.Ge("age", int64(MaxFragmentRows+10)), pred.Lt("age", int64(MaxFragmentRows+20)))
	cs.Reset()
	rr, err := s.ScanWhere(ctx, "Person", &where, "id", "age")
	must(t, err)
	n := 0
	for rr.Next() {
		n += int(rr.Record().NumRows())
	}
	must(t, rr.Err())
	rr.Release()
	if n != 10 || dataGets(cs) != 1 {
		t.Fatalf("range scan: %d rows with %d fragment GETs, want 10 rows from 1 fragment", n, dataGets(cs))
	}
	for _, c := range []struct {
		e    pred.Expr
		want error
	}{{pred.Eq("nope", 1), pred.ErrUnknownProperty}, {pred.Eq("age", "x"), pred.ErrTypeMismatch}} {
		s := snap(t, g)
		cs.Reset()
		if _, err := s.ScanWhere(ctx, "Person", &c.e); !errors.Is(err, c.want) || cs.Counts().Requests() != 0 {
			t.Fatalf("%s: %v after %d requests, want %v before any", c.e, err, cs.Counts().Requests(), c.want)
		}
	}
}

// TestStatsDecode: the statistics a fragment records round-trip through
// the table version metadata; fragments without them (written before they
// existed) still decode and are never pruned; forged statistics are
// rejected as corrupt.
func TestStatsDecode(t *testing.T) {
	cat := testCatalog(t)
	tb := cat.tables["Person"]
	v := viewOf(t, cat, "Person", []Row{
		{ID: "a", Props: map[string]any{"name": "x", "age": int64(3), "score": 1.5}},
		{ID: "b", Props: map[string]any{"name": "y"}},
	}, 8)
	info := v.frags[0]
	st, err := decodeStats(tb, info)
	must(t, err)
	age, _ := tb.column("age")
	if cs := st[age]; cs.Nulls != 1 || cs.Lo == nil || cs.Lo.I != 3 || cs.Hi.I != 3 {
		t.Fatalf("age stats %+v", st[age])
	}
	old := info
	old.Stats = nil
	where, err := pred.Bind(pred.Gt("age", int64(100)), predColumns(tb))
	must(t, err)
	if st, err := decodeStats(tb, old); err != nil || !mayMatch(where, old, st) || mayMatch(where, info, mustStats(t, tb, info)) {
		t.Fatalf("without stats: %v; want no pruning without stats and pruning with them", err)
	}
	str := func(s string) *string { return &s }
	// Another column order is accepted: a fragment written before a
	// schema change that reordered properties lists them in its own order.
	if _, err := decodeStats(tb, FragmentInfo{Rows: info.Rows, Stats: []ColumnStats{{Column: "age"}, {Column: "name"}}}); err != nil {
		t.Fatalf("stats in another column order: %v", err)
	}
	for name, bad := range map[string][]ColumnStats{
		"unknown column": {{Column: "nope"}},
		"id column":      {{Column: "id"}},
		"repeated":       {{Column: "age"}, {Column: "age"}},
		"lo > hi":        {{Column: "age", Lo: str("5"), Hi: str("4")}},
		"not canonical":  {{Column: "age", Lo: str("05")}},
		"nulls > rows":   {{Column: "age", Nulls: 3}},
		"nan bound":      {{Column: "score", Lo: str("NaN")}},
		"bound all null": {{Column: "age", Nulls: 2, Lo: str("1")}},
	} { //detlint:ordered each case is independent
		forged := info
		forged.Stats = bad
		if _, err := decodeStats(tb, forged); err == nil {
			t.Errorf("%s: forged stats accepted", name)
		}
	}
}

func mustStats(t *testing.T, tb *Table, info FragmentInfo) fragStats {
	st, err := decodeStats(tb, info)
	must(t, err)
	return st
}
