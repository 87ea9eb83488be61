package gc

import (
	"slices"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// MergeBaseTips returns the manifests a merge base of two live branches
// may need (docs/gc.md rule 3b): for every pair of the given reaches (one
// per live branch head), the tips of their common reach
// (lineage.CommonReach) — the manifests MergeBase loads to pick the best
// common ancestor, and among them the base itself. Per incarnation the
// pairwise minimums of the versions the reaches name are every version but
// the single highest, so the result is computed in one pass, not per pair:
// at most the sum of the reaches' lengths. Sorted by
// format.CompareIncarnation, then version descending; no duplicates.
func MergeBaseTips(reaches [][]format.ManifestRef) []format.ManifestRef {
	var all []format.ManifestRef
	for _, r := range reaches {
		all = append(all, r...)
	}
	slices.SortFunc(all, compareTip)
	var out []format.ManifestRef
	for i, r := range all {
		if i == 0 || format.CompareIncarnation(all[i-1], r) != 0 {
			continue // the highest version of its incarnation: no pair has it as its minimum unless repeated
		}
		if n := len(out); n > 0 && out[n-1] == r {
			continue
		}
		out = append(out, r)
	}
	return out
}

// compareTip orders by incarnation, then version descending.
func compareTip(a, b format.ManifestRef) int {
	if c := format.CompareIncarnation(a, b); c != 0 {
		return c
	}
	switch {
	case a.Version > b.Version:
		return -1
	case a.Version < b.Version:
		return 1
	}
	return 0
}

// MaxBaseChecks bounds the domination checks of one MergeBaseRoots call
// (one lineage.Reaches each); past it the call keeps every candidate.
const MaxBaseChecks = 1 << 22

// maxBaseChecks is MaxBaseChecks, lowered by a test of the fallback.
var maxBaseChecks = MaxBaseChecks

// MergeBaseRoots returns the tips some pair of live heads may need as its
// merge base, of the candidates MergeBaseTips finds: every candidate t
// except those dominated everywhere — some other candidate u (another
// incarnation, reach known) reaches t, and every head that reaches t
// reaches u too. Then in every pair whose common reach has t as a tip, u
// is a common ancestor, so that pair's tip in u's incarnation (u or a
// later commit of it) reaches t: t is not the pair's base, and MergeBase
// skips it once collected (lineage.Undominated). A merged and deleted
// feature branch is such a t (u: main's merge commit). The test is
// sufficient, not exact: a tip dominated in each pair by a different u is
// kept (if in doubt, keep). reachOf holds the reach of each candidate
// whose reach is known; a candidate without one is kept unless dominated
// and dominates nothing. Cost: candidates × (heads + candidates) reach
// lookups; exact=false when that would exceed MaxBaseChecks, and then
// every candidate is returned. Sorted like MergeBaseTips.
func MergeBaseRoots(heads [][]format.ManifestRef, reachOf map[format.ManifestRef][]format.ManifestRef) (keep []format.ManifestRef, exact bool) {
	cands := MergeBaseTips(heads)
	if len(cands)*(len(heads)+len(cands)) > maxBaseChecks {
		return cands, false
	}
	reachedBy := make([]headSet, len(cands))
	for i, t := range cands {
		reachedBy[i] = newHeadSet(len(heads))
		for h, r := range heads {
			if lineage.Reaches(r, t) {
				reachedBy[i].add(h)
			}
		}
	}
	for i, t := range cands {
		if !dominatedEverywhere(i, t, cands, reachedBy, reachOf) {
			keep = append(keep, t)
		}
	}
	return keep, true
}

// dominatedEverywhere reports whether a candidate u of another
// incarnation, with a known reach, reaches candidate t (index i) and is
// reached by every head that reaches t.
func dominatedEverywhere(i int, t format.ManifestRef, cands []format.ManifestRef, reachedBy []headSet, reachOf map[format.ManifestRef][]format.ManifestRef) bool {
	for j, u := range cands {
		r, known := reachOf[u]
		if j == i || !known || format.CompareIncarnation(u, t) == 0 {
			continue
		}
		if lineage.Reaches(r, t) && reachedBy[j].contains(reachedBy[i]) {
			return true
		}
	}
	return false
}

// headSet is a set of head indexes.
type headSet []uint64

func newHeadSet(n int) headSet { return make(headSet, (n+63)/64) }

func (s headSet) add(h int) { s[h/64] |= 1 << (h % 64) }

// contains reports whether s holds every member of o.
func (s headSet) contains(o headSet) bool {
	for k := range o {
		if o[k]&^s[k] != 0 {
			return false
		}
	}
	return true
}
