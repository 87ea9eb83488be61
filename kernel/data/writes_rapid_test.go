package data

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data/compact"
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

// problems lists the rules the naive model breaks: ErrCardinality (a
// source over its type's @card max) and, for an edge at a missing node,
// dangling (ErrDanglingEdge when a written edge's endpoint is missing,
// ErrHasEdges when a node delete left the edge).
func (m wmodel) problems(dangling error) []error {
	var out []error
	if err := m.valid(); err != nil {
		out = append(out, ErrCardinality)
		if m.dangles() {
			out = append(out, dangling)
		}
	}
	return out
}

// dangles reports whether some edge ends at a missing node.
func (m wmodel) dangles() bool {
	for _, typ := range []string{"Knows", "Reports", "WorksAt"} {
		to := "Person"
		if typ == "WorksAt" {
			to = "Company"
		}
		for _, e := range m.edges[typ] { //detlint:ordered any; order-free
			if !m.nodes["Person"][e.From] || !m.nodes[to][e.To] {
				return true
			}
		}
	}
	return false
}

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
func TestWriteChecksMatchNaive(t *testing.T) { writeChecksMatchNaive(t) }

// TestPagedWriteChecksMatchNaive is TestWriteChecksMatchNaive with paged
// table versions (chunks of two infos) on every handle, compactions
// included.
func TestPagedWriteChecksMatchNaive(t *testing.T) {
	pagedHandles(t)
	writeChecksMatchNaive(t)
}

func writeChecksMatchNaive(t *testing.T) {
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
			if rapid.IntRange(0, 3).Draw(rt, "compact") == 0 {
				if _, err := g.Compact(ctx, mainRef(t, g), compact.Policy{MinFragments: 2}); err != nil {
					rt.Fatalf("step %d: compact: %v", step, err)
				}
			}
			next, stage, writes := randomWriteTxn(rt, m, step)
			if stage == nil {
				continue
			}
			g2 := openGraph(t, g.store, uint64(10+step)) // cold handle: the checks read through the indexes
			tx := begin(t, g2)
			must(t, stage(tx))
			_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "rapid"})
			dangling := ErrHasEdges
			if writes {
				dangling = ErrDanglingEdge
			}
			want := next.problems(dangling)
			switch {
			case len(want) == 0 && err != nil:
				rt.Fatalf("step %d: rejected %v, the naive model says valid", step, err)
			case len(want) > 0 && !matchesAny(err, want):
				rt.Fatalf("step %d: commit = %v, want one of %v", step, err, want)
			case len(want) == 0:
				m = next
			}
			s := snap(t, openGraph(t, g.store, uint64(100+step)))
			checkAdjacency(rt, s, m)
			checkIDIndex(rt, s, m)
		}
	})
}

// personUniverse is every Person id the write test uses: deleted ones come
// back through inserts, and edges may name missing ones.
var personUniverse = []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6"}

// randomWriteTxn draws one transaction, returning the model after it (if
// accepted), its staging (nil when it stages nothing) and whether it
// writes (inserts nodes, upserts edges) rather than deletes.
func randomWriteTxn(rt *rapid.T, m wmodel, step int) (wmodel, func(*Txn) error, bool) {
	next := m.clone()
	var ops []func(*Txn) error
	writes := false
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
	} else {
		writes = true
		var absent []string
		for _, p := range personUniverse {
			if !m.nodes["Person"][p] {
				absent = append(absent, p)
			}
		}
		if len(absent) > 0 && rapid.Bool().Draw(rt, "insert-node") {
			id := rapid.SampledFrom(absent).Draw(rt, "new-p")
			next.nodes["Person"][id] = true
			ops = append(ops, func(tx *Txn) error { return tx.Insert("Person", person(id, "y")) })
		}
		for k := range rapid.IntRange(1, 3).Draw(rt, "writes") {
			typ := rapid.SampledFrom([]string{"Knows", "Reports", "WorksAt"}).Draw(rt, fmt.Sprint("type", k))
			id := fmt.Sprintf("%c%d", typ[0]+32, rapid.IntRange(0, 5).Draw(rt, "eid"))
			if used[id] {
				continue
			}
			used[id] = true
			to := rapid.SampledFrom(personUniverse).Draw(rt, "to") // may be missing: a dangling edge
			if typ == "WorksAt" {
				to = fmt.Sprintf("c%d", rapid.IntRange(0, 2).Draw(rt, "c"))
			}
			e := Row{ID: id, From: rapid.SampledFrom(personUniverse).Draw(rt, "from"), To: to}
			_, exists := m.edges[typ][id]
			next.edges[typ][id] = e
			if !exists && rapid.Bool().Draw(rt, "insert-edge") { // a new id: its existence check goes through the edge id index
				ops = append(ops, func(tx *Txn) error { return tx.Insert(typ, e) })
				continue
			}
			ops = append(ops, func(tx *Txn) error { return tx.Upsert(typ, e) })
		}
	}
	if len(ops) == 0 {
		return m, nil, false
	}
	return next, func(tx *Txn) error {
		for _, op := range ops {
			if err := op(tx); err != nil {
				return err
			}
		}
		return nil
	}, writes
}

func matchesAny(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// checkIDIndex asks the Person table's id index, cold, about every id of
// the universe and compares with the model.
func checkIDIndex(rt *rapid.T, s *Snapshot, m wmodel) {
	v, err := s.view(ctx, "Person")
	if err != nil || !v.hasIDs {
		rt.Fatalf("Person view: %v (id index %v)", err, v != nil && v.hasIDs)
	}
	for _, id := range personUniverse {
		got, err := s.r.idExists(ctx, v, id)
		if err != nil || got != m.nodes["Person"][id] {
			rt.Fatalf("id index: %s exists = %v, %v; the model says %v", id, got, err, m.nodes["Person"][id])
		}
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
