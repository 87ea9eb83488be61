package data

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// edgeCards are the bounded edge types of the test schema and their max.
var edgeCards = map[string]int{"WorksAt": 1, "Reports": 2, "Knows": 1 << 30}

// wmodel is the naive graph of the write test: node ids by type, edges by
// type and id.
type wmodel struct {
	nodes map[string]map[string]bool
	edges map[string]map[string]Row
}

func (m wmodel) clone() wmodel {
	c := wmodel{nodes: map[string]map[string]bool{}, edges: map[string]map[string]Row{}}
	for typ, ns := range m.nodes { //detlint:ordered copies a map
		c.nodes[typ] = map[string]bool{}
		for id := range ns { //detlint:ordered copies a set
			c.nodes[typ][id] = true
		}
	}
	for typ, es := range m.edges { //detlint:ordered copies a map
		c.edges[typ] = map[string]Row{}
		for id, e := range es { //detlint:ordered copies a map
			c.edges[typ][id] = e
		}
	}
	return c
}

func sortedSet(m map[string]bool) []string { return sortedKeys(m) }

// valid reports the first broken rule of the naive model: an edge over
// its type's @card max from one source, or a dangling edge.
func (m wmodel) valid() error {
	for _, typ := range []string{"Knows", "Reports", "WorksAt"} {
		count := map[string]int{}
		for _, e := range m.edges[typ] { //detlint:ordered counts; order-free
			count[e.From]++
			to := "Person"
			if typ == "WorksAt" {
				to = "Company"
			}
			if !m.nodes["Person"][e.From] || !m.nodes[to][e.To] {
				return ErrHasEdges
			}
		}
		for _, n := range count { //detlint:ordered any over the limit; order-free
			if n > edgeCards[typ] {
				return ErrCardinality
			}
		}
	}
	return nil
}

// TestWriteChecksMatchNaive: random constructive and destructive
// transactions (edge upserts and deletes on bounded and unbounded types,
// node deletes with and without cascade) are accepted exactly when the
// naive model after them is valid (no source over its @card max, no edge
// left at a deleted node), rejected with the matching rule otherwise, and
// every accepted state reads back through the adjacency index as the
// model says. The @card check and the node-delete check find edges only
// through the index here.
func TestWriteChecksMatchNaive(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g := initGraph(t, sim.New(sim.Config{Seed: 1}), Limits{})
		m := wmodel{nodes: map[string]map[string]bool{"Person": {}, "Company": {}}, edges: map[string]map[string]Row{"WorksAt": {}, "Reports": {}, "Knows": {}}}
		commitTx(t, g, func(tx *Txn) error {
			for i := 0; i < 5; i++ {
				m.nodes["Person"][fmt.Sprintf("p%d", i)] = true
				if err := tx.Insert("Person", person(fmt.Sprintf("p%d", i), "x")); err != nil {
					return err
				}
			}
			for i := 0; i < 3; i++ {
				m.nodes["Company"][fmt.Sprintf("c%d", i)] = true
				if err := tx.Insert("Company", company(fmt.Sprintf("c%d", i))); err != nil {
					return err
				}
			}
			return nil
		})
		for step := range rapid.IntRange(1, 8).Draw(rt, "steps") {
			next, stage := randomWriteTxn(rt, m, step)
			if stage == nil {
				continue
			}
			g2 := openGraph(t, g.store, uint64(10+step)) // cold handle: the checks read through the index
			tx := begin(t, g2)
			must(t, stage(tx))
			_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "rapid"})
			want := next.valid()
			switch {
			case want == nil && err != nil:
				rt.Fatalf("step %d: rejected %v, the naive model says valid", step, err)
			case want != nil && !errors.Is(err, want):
				rt.Fatalf("step %d: commit = %v, want %v", step, err, want)
			case want == nil:
				m = next
			}
			checkAdjacency(rt, snap(t, openGraph(t, g.store, uint64(100+step))), m)
		}
	})
}

// randomWriteTxn draws one transaction, returning the model after it (if
// accepted) and its staging; nil when it stages nothing.
func randomWriteTxn(rt *rapid.T, m wmodel, step int) (wmodel, func(*Txn) error) {
	next := m.clone()
	var ops []func(*Txn) error
	used := map[string]bool{}
	people := sortedSet(m.nodes["Person"])
	if rapid.IntRange(0, 2).Draw(rt, "destroy") == 0 {
		for k := range rapid.IntRange(1, 2).Draw(rt, "dels") {
			if rapid.Bool().Draw(rt, fmt.Sprint("node", k)) && len(people) > 0 {
				id := rapid.SampledFrom(people).Draw(rt, "p")
				cascade := rapid.Bool().Draw(rt, "cascade")
				if used[id] {
					continue
				}
				used[id] = true
				delete(next.nodes["Person"], id)
				if cascade {
					for _, typ := range []string{"Knows", "Reports", "WorksAt"} {
						for eid, e := range next.edges[typ] { //detlint:ordered deletes; order-free
							if e.From == id || e.To == id {
								delete(next.edges[typ], eid)
							}
						}
					}
					ops = append(ops, func(tx *Txn) error { return tx.DeleteCascade("Person", id) })
				} else {
					ops = append(ops, func(tx *Txn) error { return tx.Delete("Person", id) })
				}
				continue
			}
			typ := rapid.SampledFrom([]string{"Knows", "Reports", "WorksAt"}).Draw(rt, "etype")
			ids := sortedKeys(boolSet(m.edges[typ]))
			if len(ids) == 0 {
				continue
			}
			id := rapid.SampledFrom(ids).Draw(rt, "eid")
			if used[id] {
				continue
			}
			used[id] = true
			delete(next.edges[typ], id)
			ops = append(ops, func(tx *Txn) error { return tx.Delete(typ, id) })
		}
	} else if len(people) > 0 {
		for k := range rapid.IntRange(1, 3).Draw(rt, "writes") {
			typ := rapid.SampledFrom([]string{"Knows", "Reports", "WorksAt"}).Draw(rt, fmt.Sprint("type", k))
			id := fmt.Sprintf("%c%d", typ[0]+32, rapid.IntRange(0, 5).Draw(rt, "eid"))
			if used[id] {
				continue
			}
			used[id] = true
			to := rapid.SampledFrom(people).Draw(rt, "to")
			if typ == "WorksAt" {
				to = fmt.Sprintf("c%d", rapid.IntRange(0, 2).Draw(rt, "c"))
			}
			e := Row{ID: id, From: rapid.SampledFrom(people).Draw(rt, "from"), To: to}
			next.edges[typ][id] = e
			ops = append(ops, func(tx *Txn) error { return tx.Upsert(typ, e) })
		}
	}
	if len(ops) == 0 {
		return m, nil
	}
	return next, func(tx *Txn) error {
		for _, op := range ops {
			if err := op(tx); err != nil {
				return err
			}
		}
		return nil
	}
}

func boolSet[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m { //detlint:ordered builds a set
		out[k] = true
	}
	return out
}

// checkAdjacency compares Out and In of every node with the model.
func checkAdjacency(rt *rapid.T, s *Snapshot, m wmodel) {
	for _, typ := range []string{"Knows", "Reports", "WorksAt"} {
		var nodes []string
		nodes = append(nodes, sortedSet(m.nodes["Person"])...)
		nodes = append(nodes, sortedSet(m.nodes["Company"])...)
		for _, n := range nodes {
			for _, out := range []bool{true, false} {
				var want []string
				for id, e := range m.edges[typ] { //detlint:ordered sorted next
					if (out && e.From == n) || (!out && e.To == n) {
						want = append(want, id)
					}
				}
				sort.Strings(want)
				got, err := s.adjacent(ctx, typ, n, out)
				if err != nil || ids(got) != fmt.Sprint(joinIDs(want)) {
					rt.Fatalf("%s out=%v of %s = %s %v, want %v", typ, out, n, ids(got), err, want)
				}
			}
		}
	}
}

func joinIDs(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}
