package verify

import (
	"context"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// maxIDSet bounds the ids verify holds in memory at once for the rules that
// span fragments (unique ids per table, dangling edges, @card). Rows are
// streamed a fragment at a time; a type whose ids would exceed the bound is
// skipped by those rules, with a note saying so.
const maxIDSet = 4 << 20

// idColumn returns column i of rec as strings (ids and endpoints are utf8).
func idColumn(rec arrow.Record, i int) *array.String {
	if int(rec.NumCols()) <= i {
		return nil
	}
	s, _ := rec.Column(i).(*array.String)
	return s
}

// fragmentRows checks the fragment rules on its ids: sorted, unique, and
// min and max as the table version records them.
func (v *verifier) fragmentRows(key string, f data.FragmentInfo, ids *array.String) {
	if ids == nil || ids.Len() == 0 {
		v.problem(key, RuleFragmentRule, "no id column or no rows")
		return
	}
	for i := 1; i < ids.Len(); i++ {
		if ids.Value(i-1) >= ids.Value(i) {
			v.problem(key, RuleFragmentRule, "ids not sorted and unique at row %d (%q then %q)", i, ids.Value(i-1), ids.Value(i))
			return
		}
	}
	if lo, hi := ids.Value(0), ids.Value(ids.Len()-1); lo != f.MinID || hi != f.MaxID {
		v.problem(key, RuleFragmentRule, "ids span %q..%q, the table version records %q..%q", lo, hi, f.MinID, f.MaxID)
	}
}

// rowFn sees one row of a fragment: the fragment key, id, and for edges the
// endpoints.
type rowFn func(key, id, from, to string)

// streamRows decodes the fragments of table's pinned version one at a time.
func (v *verifier) streamRows(ctx context.Context, p format.TablePin, edge bool, fn rowFn) {
	infos, pr := v.readInfos(ctx, v.keys.TableVersionRef(p.Name, p.Ref()), p)
	if pr != nil {
		return // reported by the integrity pass
	}
	t := v.tableIn(ctx, v.curSchema, p.Name)
	for _, f := range infos {
		key := v.fragKey(p.Name, f.Name)
		b, ok := v.fragmentBytes(ctx, key, f)
		if !ok {
			continue
		}
		rec, err := data.DecodeFragment(t, f, b)
		if err != nil {
			continue // reported by the integrity pass
		}
		ids, from, to := idColumn(rec, 0), (*array.String)(nil), (*array.String)(nil)
		if edge {
			from, to = idColumn(rec, 1), idColumn(rec, 2)
		}
		for i := 0; ids != nil && i < ids.Len(); i++ {
			var fr, tt string
			if from != nil && to != nil {
				fr, tt = from.Value(i), to.Value(i)
			}
			fn(key, ids.Value(i), fr, tt)
		}
		v.rep.RowsChecked += uint64(rec.NumRows())
		rec.Release()
	}
}

// checkHead checks the data-plane rules on the rows a live head pins: ids
// unique per type, no dangling edge, @card of every source node.
func (v *verifier) checkHead(ctx context.Context, h liveHead) error {
	if v.tables == nil {
		return nil
	}
	budget := maxIDSet
	nodes := map[string]map[string]bool{}
	v.curSchema = h.m.Schema // the head's rows are read through its own schema
	sch := v.viewOf(ctx, h.m.Schema).sch
	for _, n := range sch.Nodes {
		nodes[n.Name] = v.nodeIDs(ctx, h, n.Name, n.StorageTable(), &budget)
	}
	for _, e := range sch.Edges {
		v.checkEdges(ctx, h, e, nodes, budget)
	}
	return nil
}

// nodeIDs streams a node type's ids, reporting duplicates, and returns the
// set (nil when over budget: the rules needing it are skipped, with a note).
func (v *verifier) nodeIDs(ctx context.Context, h liveHead, typ, table string, budget *int) map[string]bool {
	p, ok := h.m.Pin(table)
	if !ok {
		return map[string]bool{}
	}
	if p.Rows > uint64(*budget) {
		v.note("%s: %s has %d rows, more than the %d ids verify holds: unique ids, dangling edges and @card into it not checked", h.key, typ, p.Rows, *budget)
		return nil
	}
	*budget -= int(p.Rows)
	set := make(map[string]bool, p.Rows)
	v.streamRows(ctx, p, false, func(key, id, _, _ string) {
		if set[id] {
			v.problem(key, RuleDuplicateID, "%s id %q appears twice in version %d", typ, id, p.Version)
		}
		set[id] = true
	})
	return set
}

// checkEdges streams one edge type's rows at a live head.
func (v *verifier) checkEdges(ctx context.Context, h liveHead, e schema.EdgeType, nodes map[string]map[string]bool, budget int) {
	p, pinned := h.m.Pin(e.StorageTable())
	if pinned && p.Rows > uint64(budget) {
		v.note("%s: %s has %d rows, more than the %d ids verify holds: its rules not checked", h.key, e.Name, p.Rows, budget)
		return
	}
	froms, tos := nodes[e.From], nodes[e.To]
	out := map[string]uint64{}
	if pinned {
		ids := make(map[string]bool, p.Rows)
		v.streamRows(ctx, p, true, func(key, id, from, to string) {
			if ids[id] {
				v.problem(key, RuleDuplicateID, "%s id %q appears twice in version %d", e.Name, id, p.Version)
			}
			ids[id] = true
			if froms != nil && !froms[from] {
				v.problem(key, RuleDangling, "%s %q: from %q is not a %s", e.Name, id, from, e.From)
			}
			if tos != nil && !tos[to] {
				v.problem(key, RuleDangling, "%s %q: to %q is not a %s", e.Name, id, to, e.To)
			}
			out[from]++
		})
	}
	v.checkCard(h, e, froms, out)
}

// checkCard checks @card for every source node (in id order).
func (v *verifier) checkCard(h liveHead, e schema.EdgeType, froms map[string]bool, out map[string]uint64) {
	if e.Card.IsDefault() || froms == nil {
		return
	}
	var bad []string
	for id := range froms { //detlint:ordered sorted below
		if !e.Card.Allows(out[id]) {
			bad = append(bad, id)
		}
	}
	sort.Strings(bad)
	for _, id := range bad {
		v.problem(h.key, RuleCard, "%s %q has %d %s edges, @card(%s)", e.From, id, out[id], e.Name, e.Card)
	}
}
