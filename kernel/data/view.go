package data

import (
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// tableView is the committed content of one table at one version, as far as
// it was loaded: the fragment list of the version and the decoded records of
// the fragments some question needs. It does no I/O: a loader fills it
// first, and asking about an id whose candidate fragment was not loaded is
// an internal bug (panic), never a silent "absent".
type tableView struct {
	t     *Table
	frags []FragmentInfo
	recs  []arrow.Record // parallel to frags; nil = not loaded
	stats []fragStats    // parallel to frags (nil when built without stats)
	rows  uint64

	// paged versions (fragpage.go): the fragment chunks, the index in
	// frags of each chunk's first info, and which chunks are loaded; frags
	// of an unloaded chunk are zero placeholders.
	paged      []fragChunkRef
	pageAt     []int
	pageLoaded []bool
	// embeds are the fragments the version embeds, by name (embed.go); a
	// paged view attaches them to infos as their chunks load, counting
	// them (embedsSeen) until every chunk is loaded (chunksLoaded).
	embeds                   map[string][]byte
	embedsSeen, chunksLoaded int
	// fragNodes are the fragment ref chunks (format 10) this view
	// expanded, by the name of the first ref each lists (fragtree.go);
	// fragTop is the version's own list of fragment chunk refs.
	fragNodes map[string]fragRefNode
	fragTop   []fragChunkRef

	adj      [2][]adjRef  // edge tables: the adjacency index's chunks (out, in)
	hasAdj   bool         // the version has an adjacency index
	adjDelta arrow.Record // edges the version adds to its pages (adjdelta.go), sorted by (from, id); nil for none

	ids     []adjRef        // node tables: the id index's chunks
	hasIDs  bool            // the version has an id index
	idDelta []string        // ids the version adds to its id index's pages (iddelta.go), sorted
	present map[string]bool // ids whose existence the id index answered

	// noted holds, for nodes whose edges a loader looked up through the
	// index, the ids of their out-edges and of all their edges (sorted);
	// outEdges and incident answer from it when the table is not loaded
	// whole.
	noted map[string]notedEdges

	bySource map[string][]string // edge tables: from -> edge ids; built on demand
	byNode   map[string][]string // edge tables: from or to -> edge ids
}

func newTableView(t *Table, frags []FragmentInfo, rows uint64) *tableView {
	return &tableView{t: t, frags: frags, recs: make([]arrow.Record, len(frags)), rows: rows}
}

// candidates returns the indexes of fragments whose id range covers id.
// On a paged view, every chunk whose envelope holds id must be loaded.
func (v *tableView) candidates(id string, visit func(i int) bool) {
	if v.paged != nil {
		v.pagedCandidates(id, visit)
		return
	}
	for i, f := range v.frags {
		if f.mayContain(id) && !visit(i) {
			return
		}
	}
}

// pagedCandidates visits the fragments covering id in the chunks whose
// envelope holds it.
func (v *tableView) pagedCandidates(id string, visit func(i int) bool) {
	for _, c := range v.chunksFor(id) {
		if !v.pageLoaded[c] {
			panic(fmt.Sprintf("data: lookup of %s id %q in fragment chunk %s which was not loaded", v.t.Name, id, v.paged[c].Name))
		}
		for i := v.pageAt[c]; i < v.pageAt[c]+int(v.paged[c].Frags); i++ {
			if v.frags[i].mayContain(id) && !visit(i) {
				return
			}
		}
	}
}

// rowRef locates one committed row: fragment index and row index.
type rowRef struct{ frag, row int }

// lookup finds id. Every fragment whose range covers id must be loaded.
func (v *tableView) lookup(id string) (rowRef, bool) {
	ref, found := rowRef{}, false
	v.candidates(id, func(i int) bool {
		rec := v.recs[i]
		if rec == nil {
			panic(fmt.Sprintf("data: lookup of %s id %q in fragment %s which was not loaded", v.t.Name, id, v.frags[i].Name))
		}
		ids := rec.Column(colID).(*array.String)
		j := sort.Search(ids.Len(), func(k int) bool { return ids.Value(k) >= id })
		if j < ids.Len() && ids.Value(j) == id {
			ref, found = rowRef{i, j}, true
			return false
		}
		return true
	})
	return ref, found
}

// has reports whether id exists in the view: as the id index answered
// (notePresence), else from the loaded fragments.
func (v *tableView) has(id string) bool {
	if p, ok := v.present[id]; ok {
		return p
	}
	_, ok := v.lookup(id)
	return ok
}

// ends returns the endpoints of edge id.
func (v *tableView) ends(id string) (from, to string, ok bool) {
	if p, known := v.present[id]; known && !p {
		return "", "", false
	}
	ref, ok := v.lookup(id)
	if !ok {
		return "", "", false
	}
	rec := v.recs[ref.frag]
	return rec.Column(colFrom).(*array.String).Value(ref.row), rec.Column(colTo).(*array.String).Value(ref.row), true
}

// row returns the Row at ref.
func (v *tableView) row(ref rowRef) Row { return rowAt(v.t, v.recs[ref.frag], ref.row) }

// fullyLoaded reports whether every fragment is loaded.
func (v *tableView) fullyLoaded() bool {
	for _, r := range v.recs {
		if r == nil {
			return false
		}
	}
	return true
}

// edgeIndex builds the by-source and by-node indexes of an edge table. The
// whole table must be loaded.
func (v *tableView) edgeIndex() {
	if v.bySource != nil {
		return
	}
	if !v.t.Edge || !v.fullyLoaded() {
		panic(fmt.Sprintf("data: edge index of %s needs a fully loaded edge table", v.t.Name))
	}
	v.bySource, v.byNode = map[string][]string{}, map[string][]string{}
	for _, rec := range v.recs {
		ids := rec.Column(colID).(*array.String)
		from, to := rec.Column(colFrom).(*array.String), rec.Column(colTo).(*array.String)
		for i := 0; i < ids.Len(); i++ {
			id, f, t := ids.Value(i), from.Value(i), to.Value(i)
			v.bySource[f] = append(v.bySource[f], id)
			v.byNode[f] = append(v.byNode[f], id)
			if t != f {
				v.byNode[t] = append(v.byNode[t], id)
			}
		}
	}
	for _, m := range []map[string][]string{v.bySource, v.byNode} {
		for _, ids := range m { //detlint:ordered sorts each slice in place; order-free
			sort.Strings(ids)
		}
	}
}

// notedEdges are one node's edges as an index lookup found them: its
// out-edges and, unless outOnly, all its edges.
type notedEdges struct {
	out, all []string
	outOnly  bool
}

// note records node's edges (rows from adjacency lookups: out, and in
// unless outOnly).
func (v *tableView) note(node string, out, in []Row, outOnly bool) {
	if v.noted == nil {
		v.noted = map[string]notedEdges{}
	}
	set := map[string]bool{}
	n := notedEdges{outOnly: outOnly}
	for _, r := range out {
		n.out = append(n.out, r.ID)
		set[r.ID] = true
	}
	for _, r := range in {
		set[r.ID] = true
	}
	n.all = sortedKeys(set)
	sort.Strings(n.out)
	v.noted[node] = n
}

// notedOf returns node's noted edges (all of them when all); a node not
// noted so and not answerable from a whole loaded table is an internal bug.
func (v *tableView) notedOf(node string, all bool) notedEdges {
	n, ok := v.noted[node]
	if !ok || (all && n.outOnly) {
		panic(fmt.Sprintf("data: edges of node %q in %s were not looked up and the table is not loaded whole", node, v.t.Name))
	}
	return n
}

// outEdges returns the ids, sorted, of the edges whose source is from.
func (v *tableView) outEdges(from string) []string {
	if _, ok := v.noted[from]; ok || !v.fullyLoaded() {
		return v.notedOf(from, false).out
	}
	v.edgeIndex()
	return v.bySource[from]
}

// incident returns the ids, sorted, of the edges with node as from or to.
func (v *tableView) incident(node string) []string {
	if n, ok := v.noted[node]; (ok && !n.outOnly) || !v.fullyLoaded() {
		return v.notedOf(node, true).all
	}
	v.edgeIndex()
	return v.byNode[node]
}
