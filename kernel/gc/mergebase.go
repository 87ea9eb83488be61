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

// MergeBaseRoots returns the tips some pair of live heads may need: for
// every pair of heads (their reaches), the tips of their common reach that
// no other tip of that pair reaches — its possible merge bases, exactly
// what MergeBase needs present (a collected tip that a present tip reaches
// is skipped: lineage.Undominated). reachOf holds the reach of each tip
// whose reach is known; a tip without one is kept and dominates nothing
// (if in doubt, keep). exact=false when the checks would exceed
// MaxBaseChecks: then every candidate (MergeBaseTips) is returned. Sorted
// like MergeBaseTips; no duplicates.
func MergeBaseRoots(heads [][]format.ManifestRef, reachOf map[format.ManifestRef][]format.ManifestRef) (keep []format.ManifestRef, exact bool) {
	need := map[format.ManifestRef]bool{}
	checks := 0
	for i := range heads {
		for j := i + 1; j < len(heads); j++ {
			tips := lineage.CommonReach(heads[i], heads[j])
			for _, t := range tips {
				if !dominated(t, tips, reachOf, &checks) {
					need[t] = true
				}
				if checks > maxBaseChecks {
					return MergeBaseTips(heads), false
				}
			}
		}
	}
	for t := range need { //detlint:ordered sorted next
		keep = append(keep, t)
	}
	slices.SortFunc(keep, compareTip)
	return keep, true
}

// dominated reports whether another tip of tips with a known reach
// reaches t.
func dominated(t format.ManifestRef, tips []format.ManifestRef, reachOf map[format.ManifestRef][]format.ManifestRef, checks *int) bool {
	for _, u := range tips {
		r, known := reachOf[u]
		if u == t || !known {
			continue
		}
		*checks++
		if lineage.Reaches(r, t) {
			return true
		}
	}
	return false
}
