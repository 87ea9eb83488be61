package data

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/data/traverse"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// model is the naive in-memory graph: rows by type and id.
type model map[string]map[string]Row

func (m model) clone() model {
	out := model{}
	for typ, rows := range m { //detlint:ordered copies a map
		out[typ] = map[string]Row{}
		for id, r := range rows { //detlint:ordered copies a map
			out[typ][id] = r
		}
	}
	return out
}

func (m model) sorted(typ string, keep func(Row) bool) []Row {
	var out []Row
	for _, r := range m[typ] { //detlint:ordered sorted next
		if keep(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// randomGraphTxn draws one transaction over Person p0..p7 and Knows
// k0..k11, applies it to m, and returns its staged calls.
func randomGraphTxn(rt *rapid.T, m model) []func(*Txn) error {
	var ops []func(*Txn) error
	used := map[string]bool{}
	if rapid.IntRange(0, 3).Draw(rt, "destroy") == 0 {
		for k := range rapid.IntRange(1, 3).Draw(rt, "dels") {
			if rapid.Bool().Draw(rt, fmt.Sprint("delNode", k)) {
				id := fmt.Sprintf("p%d", rapid.IntRange(0, 7).Draw(rt, "p"))
				if _, ok := m["Person"][id]; !ok || used[id] {
					continue
				}
				used[id] = true
				delete(m["Person"], id)
				for eid, e := range m["Knows"] { //detlint:ordered deletes from the model; order-free
					if e.From == id || e.To == id {
						delete(m["Knows"], eid)
					}
				}
				ops = append(ops, func(tx *Txn) error { return tx.DeleteCascade("Person", id) })
				continue
			}
			id := fmt.Sprintf("k%d", rapid.IntRange(0, 11).Draw(rt, "k"))
			if _, ok := m["Knows"][id]; !ok || used[id] {
				continue
			}
			used[id] = true
			delete(m["Knows"], id)
			ops = append(ops, func(tx *Txn) error { return tx.Delete("Knows", id) })
		}
		return ops
	}
	for k := range rapid.IntRange(1, 8).Draw(rt, "rows") {
		if rapid.Bool().Draw(rt, fmt.Sprint("node", k)) {
			id := fmt.Sprintf("p%d", rapid.IntRange(0, 7).Draw(rt, "p"))
			if used[id] {
				continue
			}
			used[id] = true
			r := Row{ID: id, Props: map[string]any{"name": rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "name")}}
			if a := rapid.IntRange(-1, 3).Draw(rt, "age"); a >= 0 {
				r.Props["age"] = int64(a)
			}
			if s := rapid.IntRange(0, 3).Draw(rt, "score"); s > 0 {
				r.Props["score"] = []float64{0, 0.5, math.NaN(), -1}[s]
			}
			m["Person"][id] = r
			ops = append(ops, func(tx *Txn) error { return tx.Upsert("Person", r) })
			continue
		}
		var live []string
		for id := range m["Person"] { //detlint:ordered sorted next
			live = append(live, id)
		}
		sort.Strings(live)
		id := fmt.Sprintf("k%d", rapid.IntRange(0, 11).Draw(rt, "k"))
		if len(live) == 0 || used[id] {
			continue
		}
		used[id] = true
		e := Row{ID: id, From: rapid.SampledFrom(live).Draw(rt, "from"), To: rapid.SampledFrom(live).Draw(rt, "to")}
		m["Knows"][id] = e
		ops = append(ops, func(tx *Txn) error { return tx.Upsert("Knows", e) })
	}
	return ops
}

// genPersonPred draws a predicate over Person's id, name, age and score.
func genPersonPred(rt *rapid.T, depth int) pred.Expr {
	switch k := rapid.IntRange(0, 9).Draw(rt, "pk"); {
	case k == 0 && depth < 3:
		return pred.And(genPersonPred(rt, depth+1), genPersonPred(rt, depth+1))
	case k == 1 && depth < 3:
		return pred.Or(genPersonPred(rt, depth+1), genPersonPred(rt, depth+1))
	case k == 2 && depth < 3:
		return pred.Not(genPersonPred(rt, depth+1))
	case k == 3:
		return pred.IsNull(rapid.SampledFrom([]string{"age", "score"}).Draw(rt, "np"))
	case k == 4:
		return pred.In("name", "a", rapid.SampledFrom([]string{"", "b"}).Draw(rt, "in"))
	}
	op := rapid.SampledFrom([]func(string, any) pred.Expr{pred.Eq, pred.Ne, pred.Lt, pred.Le, pred.Gt, pred.Ge}).Draw(rt, "op")
	switch rapid.SampledFrom([]int{0, 0, 1, 2, 3}).Draw(rt, "col") {
	case 0:
		return op("id", fmt.Sprintf("p%d", rapid.IntRange(0, 7).Draw(rt, "idv")))
	case 1:
		return op("name", rapid.SampledFrom([]string{"", "a", "b"}).Draw(rt, "namev"))
	case 2:
		return op("age", int64(rapid.IntRange(0, 3).Draw(rt, "agev")))
	}
	return op("score", rapid.SampledFrom([]float64{0, 0.5, -1}).Draw(rt, "scorev"))
}

// naiveMatch evaluates a bound predicate on a model row.
func naiveMatch(b *pred.Bound, tb *Table, r Row) bool {
	return b.Eval(func(c int) (pred.Value, bool) {
		name := tb.arrow.Field(c).Name
		var v any = r.ID
		if name != schema.ColID {
			v = r.Props[name]
		}
		if v == nil {
			return pred.Value{}, true
		}
		return pred.V(v), false
	})
}

// naiveExpand is BFS over the model's edges, written independently.
func naiveExpand(m model, start []string, dir traverse.Direction, minH, maxH int) []traverse.Reached {
	hops := map[string]int{}
	level := map[string]bool{}
	for _, s := range start {
		level[s] = true
	}
	for h := 0; h <= maxH && len(level) > 0; h++ {
		next := map[string]bool{}
		for n := range level { //detlint:ordered fills maps; order-free
			hops[n] = h
		}
		for _, e := range m["Knows"] { //detlint:ordered fills a set; order-free
			if level[e.From] && dir != traverse.In {
				next[e.To] = true
			}
			if level[e.To] && dir != traverse.Out {
				next[e.From] = true
			}
		}
		level = map[string]bool{}
		for n := range next { //detlint:ordered fills a set; order-free
			if _, seen := hops[n]; !seen {
				level[n] = true
			}
		}
	}
	var out []traverse.Reached
	for n, h := range hops { //detlint:ordered sorted next
		if h >= minH {
			out = append(out, traverse.Reached{ID: n, Hops: h})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Hops < out[j].Hops || (out[i].Hops == out[j].Hops && out[i].ID < out[j].ID)
	})
	return out
}

func sameRows(a, b []Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !RowsEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestReadsMatchNaive compares every read (Get, GetMany, Out, In, the
// degrees, ScanWhere with a random predicate, Expand) at a snapshot taken
// anywhere in a random history of inserts, updates and deletes with a
// naive evaluation over the model of that snapshot.
func TestReadsMatchNaive(t *testing.T) { readsMatchNaive(t, false) }

// TestPagedReadsMatchNaive is TestReadsMatchNaive with every table version
// of two or more fragments paged into chunks of at most two infos, so
// that point lookups, scans and traversals read through several chunks.
func TestPagedReadsMatchNaive(t *testing.T) { readsMatchNaive(t, true) }

func readsMatchNaive(t *testing.T, paged bool) {
	if paged {
		pagedHandles(t)
	}
	rapid.Check(t, func(rt *rapid.T) {
		g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
		m := model{"Person": {}, "Knows": {}}
		snaps, models := []*Snapshot{snap(t, g)}, []model{m.clone()}
		for range rapid.IntRange(1, 6).Draw(rt, "commits") {
			ops := randomGraphTxn(rt, m)
			if len(ops) == 0 {
				continue
			}
			commitTx(t, g, func(tx *Txn) error {
				for _, op := range ops {
					if err := op(tx); err != nil {
						return err
					}
				}
				return nil
			})
			snaps, models = append(snaps, snap(t, g)), append(models, m.clone())
		}
		i := rapid.IntRange(0, len(snaps)-1).Draw(rt, "at")
		checkReads(rt, snaps[i], models[i])
	})
}

func checkReads(rt *rapid.T, s *Snapshot, m model) {
	var asked []string
	for n := 0; n < 8; n++ {
		id := fmt.Sprintf("p%d", n)
		want, wok := m["Person"][id]
		got, ok, err := s.Get(ctx, "Person", id)
		if err != nil || ok != wok || (ok && !RowsEqual(got, want)) {
			rt.Fatalf("Get %s = %+v %v %v, want %+v %v", id, got, ok, err, want, wok)
		}
		if rapid.Bool().Draw(rt, "ask") {
			asked = append(asked, id)
		}
		for _, out := range []bool{true, false} {
			want := m.sorted("Knows", func(r Row) bool { return (out && r.From == id) || (!out && r.To == id) })
			got, err := s.adjacent(ctx, "Knows", id, out)
			deg, derr := s.OutDegree(ctx, "Knows", id)
			if !out {
				deg, derr = s.InDegree(ctx, "Knows", id)
			}
			if err != nil || derr != nil || !sameRows(got, want) || deg != len(want) {
				rt.Fatalf("out=%v of %s = %v (degree %d) %v %v, want %v", out, id, ids(got), deg, err, derr, ids(want))
			}
		}
	}
	got, err := s.GetMany(ctx, "Person", asked)
	want := m.sorted("Person", func(r Row) bool { return contains(asked, r.ID) })
	if err != nil || !sameRows(got, want) {
		rt.Fatalf("GetMany %v = %v %v, want %v", asked, ids(got), err, ids(want))
	}
	checkScanWhere(rt, s, m)
	checkExpand(rt, s, m)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func checkScanWhere(rt *rapid.T, s *Snapshot, m model) {
	e := genPersonPred(rt, 0)
	tb, _ := s.Table("Person")
	b, err := pred.Bind(e, predColumns(tb))
	if err != nil {
		rt.Fatalf("bind %s: %v", e, err)
	}
	want := m.sorted("Person", func(r Row) bool { return naiveMatch(b, tb, r) })
	rr, err := s.ScanWhere(ctx, "Person", &e)
	if err != nil {
		rt.Fatalf("ScanWhere %s: %v", e, err)
	}
	defer rr.Release()
	var got []Row
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			got = append(got, rowAt(tb, rec, i))
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i].ID < got[j].ID }) // fragments are not in id order
	if rr.Err() != nil || !sameRows(got, want) {
		rt.Fatalf("ScanWhere %s = %v %v, want %v", e, ids(got), rr.Err(), ids(want))
	}
}

func checkExpand(rt *rapid.T, s *Snapshot, m model) {
	var start []string
	for n := range rapid.IntRange(1, 3).Draw(rt, "starts") {
		start = append(start, fmt.Sprintf("p%d", rapid.IntRange(0, 8).Draw(rt, fmt.Sprint("start", n))))
	}
	dir := traverse.Direction(rapid.IntRange(1, 3).Draw(rt, "dir"))
	minH := rapid.IntRange(0, 2).Draw(rt, "min")
	maxH := minH + rapid.IntRange(0, 2).Draw(rt, "span")
	want := naiveExpand(m, start, dir, minH, maxH)
	got, err := Expand(ctx, s, start, "Knows", dir, minH, maxH, traverse.Limits{})
	if err != nil || got.Truncated || fmt.Sprint(got.Nodes) != fmt.Sprint(want) {
		rt.Fatalf("Expand %v %v %d..%d = %v %v, want %v", start, dir, minH, maxH, got, err, want)
	}
	if len(want) > 1 {
		cut, err := Expand(ctx, s, start, "Knows", dir, minH, maxH, traverse.Limits{MaxResult: len(want) - 1})
		if err != nil || !cut.Truncated || fmt.Sprint(cut.Nodes) != fmt.Sprint(want[:len(want)-1]) {
			rt.Fatalf("truncated Expand = %v %v, want a prefix of %v", cut, err, want)
		}
	}
}
