package lineage

import (
	"slices"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// JoinReach returns the reach of the commit published at at, given the
// reaches of the manifests it builds on (the previous manifest of its
// incarnation and, for a merge, the manifest holding the merged parent):
// for each incarnation the highest version any input reaches, with at's
// own incarnation at at.Version. The result is sorted by
// format.CompareIncarnation. ok=false when it would name more than
// format.MaxReachEntries incarnations.
//
// An input is the reach of a manifest, not of a commit: a commit-less
// manifest (a branch's version 0) reaches what its fork commit reaches plus
// itself (see ManifestReach).
func JoinReach(at format.ManifestRef, inputs ...[]format.ManifestRef) ([]format.ManifestRef, bool) {
	out := []format.ManifestRef{at}
	for _, in := range inputs {
		out = append(out, in...)
	}
	slices.SortFunc(out, func(a, b format.ManifestRef) int {
		if c := format.CompareIncarnation(a, b); c != 0 {
			return c
		}
		switch { // highest version first within an incarnation
		case a.Version > b.Version:
			return -1
		case a.Version < b.Version:
			return 1
		}
		return 0
	})
	joined := out[:0]
	for _, r := range out {
		if len(joined) > 0 && format.CompareIncarnation(joined[len(joined)-1], r) == 0 {
			continue
		}
		if r.Branch == at.Branch && r.Incarnation == at.Incarnation {
			r.Version = at.Version // a commit reaches its own slot, never past it
		}
		joined = append(joined, r)
	}
	if len(joined) > format.MaxReachEntries {
		return nil, false
	}
	return slices.Clip(joined), true
}

// ManifestReach is the reach of manifest at whose head commit has reach
// head: head's reach plus at itself. For a manifest carrying its own
// commit, that is head unchanged.
func ManifestReach(at format.ManifestRef, head []format.ManifestRef) ([]format.ManifestRef, bool) {
	return JoinReach(at, head)
}

// Reaches reports whether the commit with reach r has the commit at manifest
// at as an ancestor (or is it).
func Reaches(r []format.ManifestRef, at format.ManifestRef) bool {
	i, found := slices.BinarySearchFunc(r, at, format.CompareIncarnation)
	return found && r[i].Version >= at.Version
}

// CommonReach returns, for each incarnation that both reaches name, the
// lower of their versions: the common ancestors of two commits are exactly
// the commits of those incarnations up to those versions. Sorted like a
// reach.
func CommonReach(a, b []format.ManifestRef) []format.ManifestRef {
	var out []format.ManifestRef
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := format.CompareIncarnation(a[i], b[j]); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			r := a[i]
			r.Version = min(a[i].Version, b[j].Version)
			out = append(out, r)
			i, j = i+1, j+1
		}
	}
	return out
}

// Tip is one candidate merge base: the commit ID at manifest At, with its
// reach.
type Tip struct {
	At    format.ManifestRef
	ID    format.ID
	Reach []format.ManifestRef
}

// BestTip picks the merge base among the tips of a common reach (one tip per
// incarnation that carries a commit): a tip that no other tip reaches, the
// greatest id among several (criss-cross), exactly the rule of MergeBase
// over the full commit graph. ok=false when there is no tip.
func BestTip(tips []Tip) (best Tip, ok bool) {
	for i, t := range tips {
		dominated := false
		for j, u := range tips {
			if i != j && Reaches(u.Reach, t.At) {
				dominated = true
				break
			}
		}
		if !dominated && (!ok || t.ID.Compare(best.ID) > 0) {
			best, ok = t, true
		}
	}
	return best, ok
}

// Undominated returns the manifests of missing (tips of a common reach
// whose manifests are gone: collected) that no tip in tips reaches. Only
// those could be the merge base: a missing tip some present tip reaches
// is an ancestor of that tip, so it is not the best common ancestor, and
// whatever it reaches that tip reaches too, so leaving it out changes no
// domination among the present tips. BestTip over tips is the merge base
// exactly when the result is empty.
func Undominated(tips []Tip, missing []format.ManifestRef) []format.ManifestRef {
	var out []format.ManifestRef
	for _, m := range missing {
		dominated := false
		for _, t := range tips {
			if Reaches(t.Reach, m) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, m)
		}
	}
	return out
}
