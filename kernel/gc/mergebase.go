package gc

import (
	"slices"

	"github.com/graphkernel/graphkernel/kernel/format"
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
