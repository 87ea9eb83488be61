package data

import (
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// viewSet is what validation reads: loaded table views of the pinned base
// snapshot and of the touched tables' live HEADs. Validation itself does no
// I/O; a missing view it needs is an internal bug (panic).
type viewSet struct {
	base map[string]*tableView
	head map[string]*tableView
}

func (vs viewSet) baseOf(table string) *tableView { return mustView(vs.base, "base", table) }
func (vs viewSet) headOf(table string) *tableView { return mustView(vs.head, "head", table) }

func mustView(m map[string]*tableView, which, table string) *tableView {
	v, ok := m[table]
	if !ok {
		panic(fmt.Sprintf("data: validation needs the %s view of %s, which was not loaded", which, table))
	}
	return v
}

// tablePlan is the validated effect of a transaction on one table, against
// that table's live HEAD.
type tablePlan struct {
	t       *Table
	st      *stagedTable // nil for a table touched only by cascade
	head    *tableView
	replace map[string]pendingRef // existing ids replaced by a pending row
	inserts []pendingRef          // new ids, sorted by id
	deletes map[string]bool       // existing ids removed (explicit and cascade)
	strict  bool                  // has Update or Delete: HEAD must equal the base
}

// validate checks every rule against the views and returns the plan of each
// touched table, keyed by table name. Rules, in order (first violation
// wins; tables in name order, rows in id order, so the error is
// deterministic):
//  1. no id written twice, or deleted twice, in one table;
//  2. against the table's live HEAD: Insert needs a new id, Update and
//     Delete an existing one;
//  3. edge endpoints exist in the base snapshot or the pending writes;
//  4. a deleted node has no remaining edges in the base, unless its delete
//     cascades, which then deletes those edges too;
//  5. every source node whose out-edge count the transaction changes (and
//     every new node of an edge's from type when its @card min > 0) ends
//     within the edge type's @card bounds, counting the live HEAD plus the
//     pending rows;
//  6. the total rows, cascades included, stay within the row limit.
func validate(s *staging, vs viewSet) (map[string]*tablePlan, error) {
	plans := map[string]*tablePlan{}
	for _, name := range s.names() {
		p, err := planTable(s.tables[name], vs.headOf(name))
		if err != nil {
			return nil, err
		}
		plans[name] = p
	}
	if err := checkEndpoints(s, vs); err != nil {
		return nil, err
	}
	if err := expandNodeDeletes(s, vs, plans); err != nil {
		return nil, err
	}
	if err := checkCardinality(s, vs, plans); err != nil {
		return nil, err
	}
	total := 0
	for _, p := range plans { //detlint:ordered sums counts; order-free
		total += len(p.replace) + len(p.inserts) + len(p.deletes)
	}
	if total > s.limits.MaxRows {
		return nil, reject(ErrTooLarge, "", "", "", "%d rows including cascaded edge deletes exceed the limit of %d rows per transaction; split it", total, s.limits.MaxRows)
	}
	return plans, nil
}

// planTable applies rules 1 and 2 to one staged table.
func planTable(st *stagedTable, head *tableView) (*tablePlan, error) {
	p := &tablePlan{t: st.t, st: st, head: head, replace: map[string]pendingRef{}, deletes: map[string]bool{}}
	idx := st.index()
	for k, ref := range idx {
		id, op := st.id(ref), st.writes[ref.w].op
		if k > 0 && st.id(idx[k-1]) == id {
			return nil, reject(ErrDuplicateID, st.t.Name, id, "", "written twice in one transaction (%s, then %s)", st.writes[idx[k-1].w].op, op)
		}
		exists := head.has(id)
		switch {
		case op == OpInsert && exists:
			return nil, reject(ErrIDExists, st.t.Name, id, "", "insert of an existing id; use upsert or update to replace it")
		case op == OpUpdate && !exists:
			return nil, reject(ErrIDMissing, st.t.Name, id, "", "update of a missing id; use insert or upsert to create it")
		case exists && op == OpUpsert && plant.Enabled(plant.UpsertKeepsRow): // planted bug (dead code without -tags simplant): the stored row stays
		case exists:
			p.replace[id] = ref
		default:
			p.inserts = append(p.inserts, ref)
		}
		p.strict = p.strict || op.Strict()
	}
	dels := make([]string, len(st.deletes))
	for i, d := range st.deletes {
		dels[i] = d.id
	}
	sort.Strings(dels)
	for k, id := range dels {
		if k > 0 && dels[k-1] == id {
			return nil, reject(ErrDuplicateID, st.t.Name, id, "", "deleted twice in one transaction")
		}
		if !head.has(id) {
			return nil, reject(ErrIDMissing, st.t.Name, id, "", "delete of a missing id")
		}
		p.deletes[id] = true
		p.strict = true
	}
	return p, nil
}

// checkEndpoints applies rule 3: every pending edge's from and to name a
// node of the right type in the base snapshot or among the pending writes.
// No placeholder node is ever created.
func checkEndpoints(s *staging, vs viewSet) error {
	for _, name := range s.names() {
		st := s.tables[name]
		if !st.t.Edge {
			continue
		}
		for _, ref := range st.index() {
			for _, end := range [2]struct {
				col       int
				role, typ string
			}{{colFrom, "from", st.t.From}, {colTo, "to", st.t.To}} {
				node := st.str(ref, end.col)
				if !nodeExists(s, vs, end.typ, node) {
					return reject(ErrDanglingEdge, name, st.id(ref), end.role,
						"%s node %s %q does not exist in the base snapshot or in this transaction; insert the node first or in the same transaction", end.role, end.typ, node)
				}
			}
		}
	}
	return nil
}

func nodeExists(s *staging, vs viewSet, typ, id string) bool {
	if st, ok := s.tables[typ]; ok {
		if _, ok := st.find(id); ok {
			return true
		}
	}
	return vs.baseOf(typ).has(id)
}

// expandNodeDeletes applies rule 4. Edges the transaction deletes
// explicitly, or through any cascade in it, do not count as remaining: every
// cascade is expanded first, then the plain deletes are checked, so the
// outcome does not depend on the order of types or ids.
func expandNodeDeletes(s *staging, vs viewSet, plans map[string]*tablePlan) error {
	for _, cascades := range [2]bool{true, false} {
		for _, name := range s.names() {
			st := s.tables[name]
			if st.t.Edge || len(st.deletes) == 0 {
				continue
			}
			dels := append([]pendingDelete(nil), st.deletes...)
			sort.Slice(dels, func(i, j int) bool { return dels[i].id < dels[j].id })
			for _, e := range s.cat.edgesTouching(name) {
				base := vs.baseOf(e.Name)
				for _, d := range dels {
					if d.cascade != cascades {
						continue
					}
					if err := cascadeOne(vs, plans, name, e, base, d); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func cascadeOne(vs viewSet, plans map[string]*tablePlan, node string, e *Table, base *tableView, d pendingDelete) error {
	var remaining []string
	for _, edgeID := range base.incident(d.id) {
		if p, ok := plans[e.Name]; ok && p.deletes[edgeID] {
			continue
		}
		remaining = append(remaining, edgeID)
	}
	if len(remaining) == 0 {
		return nil
	}
	if !d.cascade {
		return reject(ErrHasEdges, node, d.id, "",
			"still has %d %s edge(s) (first %q); delete them first, or delete with cascade", len(remaining), e.Name, remaining[0])
	}
	p, ok := plans[e.Name]
	if !ok {
		p = &tablePlan{t: e, head: vs.headOf(e.Name), replace: map[string]pendingRef{}, deletes: map[string]bool{}}
		plans[e.Name] = p
	}
	for _, edgeID := range remaining {
		p.deletes[edgeID] = true
	}
	p.strict = true
	return nil
}

// checkCardinality applies rule 5 to every edge table with a non-default
// @card that the transaction touches, or whose from type gains new nodes.
func checkCardinality(s *staging, vs viewSet, plans map[string]*tablePlan) error {
	for _, name := range s.cat.names {
		e := s.cat.tables[name]
		if !e.Edge || e.Card.IsDefault() {
			continue
		}
		sources := cardSources(s, plans, e)
		if len(sources) == 0 {
			continue
		}
		head := vs.headOf(name)
		if plant.Enabled(plant.StaleCard) { // planted bug (dead code without -tags simplant): count on the pinned base
			head = vs.baseOf(name)
		}
		p := plans[name]
		pendingFrom := map[string]uint64{}
		if p != nil && p.st != nil {
			for _, ref := range p.st.index() {
				pendingFrom[p.st.str(ref, colFrom)]++
			}
		}
		for _, src := range sources {
			n := pendingFrom[src]
			for _, edgeID := range head.outEdges(src) {
				if p == nil || (!p.deletes[edgeID] && !isReplaced(p, edgeID)) {
					n++
				}
			}
			if !e.Card.Allows(n) {
				return reject(ErrCardinality, name, "", "from",
					"source %s %q would have %d out-edges, outside @card(%s) (counted on the live HEAD plus this transaction)", e.From, src, n, e.Card)
			}
		}
	}
	return nil
}

func isReplaced(p *tablePlan, id string) bool {
	_, ok := p.replace[id]
	return ok
}

// cardSources returns, sorted and unique, the source nodes whose out-edge
// count of e the transaction may change, minus nodes it deletes.
func cardSources(s *staging, plans map[string]*tablePlan, e *Table) []string {
	set := map[string]bool{}
	if p := plans[e.Name]; p != nil {
		if p.st != nil {
			for _, ref := range p.st.index() {
				set[p.st.str(ref, colFrom)] = true
			}
		}
		for _, ids := range [2][]string{keys(p.replace), keys(p.deletes)} {
			for _, id := range ids {
				// An edge gone from the live head (another writer deleted it
				// since Begin) changes no count there; a delete of it is
				// strict, so the commit fails on its expectation instead.
				if from, _, ok := p.head.ends(id); ok {
					set[from] = true
				}
			}
		}
	}
	if np := plans[e.From]; np != nil && e.Card.Min > 0 {
		for _, ref := range np.inserts {
			set[np.st.id(ref)] = true
		}
	}
	if np := plans[e.From]; np != nil {
		for id := range np.deletes { //detlint:ordered removes from a set that is sorted next
			delete(set, id)
		}
	}
	out := make([]string, 0, len(set))
	for id := range set { //detlint:ordered collects keys that are sorted next
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
