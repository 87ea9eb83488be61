package check

import (
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/merge"
)

// MergeState is a graph's rows by type and id (nil or absent: no row).
type MergeState map[string]map[string]*merge.Row

// EdgeEnds names, per edge type, the node types of its from and to.
type EdgeEnds map[string][2]string

// ThreeWayMerge is the oracle the merge-result check holds every data merge
// to: the row rule (kernel/merge.Resolve) applied to every id of the full
// states of the base and the two heads — no diff, no fragment pruning —
// then every edge of the result checked for both endpoints. It returns the
// merged state and whether anything conflicts. types lists every type to
// merge, in order.
func ThreeWayMerge(types []string, ends EdgeEnds, base, src, tgt MergeState) (MergeState, bool) {
	out := MergeState{}
	conflict := false
	for _, typ := range types {
		out[typ] = map[string]*merge.Row{}
		for _, id := range unionIDs(base[typ], src[typ], tgt[typ]) {
			r := merge.Resolve(typ, merge.Images{Base: base[typ][id], Source: src[typ][id], Target: tgt[typ][id]})
			conflict = conflict || len(r.Conflicts) > 0
			if r.Row != nil {
				out[typ][id] = r.Row
			}
		}
	}
	for _, et := range sortedEdgeTypes(ends) {
		for _, id := range unionIDs(out[et]) {
			e := out[et][id]
			if out[ends[et][0]][e.From] == nil || out[ends[et][1]][e.To] == nil {
				conflict = true
			}
		}
	}
	return out, conflict
}

// DiffMergeStates returns the first difference between two states over
// types (got: the merge's result, want: the oracle's), or "".
func DiffMergeStates(types []string, got, want MergeState) string {
	for _, typ := range types {
		for _, id := range unionIDs(got[typ], want[typ]) {
			if !merge.Same(got[typ][id], want[typ][id]) {
				return fmt.Sprintf("%s %s: merged %v, three-way of the snapshots %v", typ, id, got[typ][id], want[typ][id])
			}
		}
	}
	return ""
}

func sortedEdgeTypes(ends EdgeEnds) []string {
	out := make([]string, 0, len(ends))
	for et := range ends { //detlint:ordered collects types that are sorted next
		out = append(out, et)
	}
	sort.Strings(out)
	return out
}

func unionIDs(ms ...map[string]*merge.Row) []string {
	set := map[string]bool{}
	for _, m := range ms {
		for id, r := range m { //detlint:ordered fills a set that is sorted next
			if r != nil {
				set[id] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for id := range set { //detlint:ordered collects ids that are sorted next
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
