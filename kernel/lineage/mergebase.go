package lineage

import "github.com/graphkernel/graphkernel/kernel/format"

// MergeBase returns the best common ancestor of commits a and b in the
// commit graph given by parents (commit -> its parents; a commit missing
// from the map has no known parents). A commit is its own ancestor, so
// MergeBase(x, x) = x.
//
// "Best" means a common ancestor that is not an ancestor of another common
// ancestor. With merge commits there can be several (criss-cross merges);
// the tie is broken by the greatest id, which for ULIDs is the newest, so
// the answer is deterministic. ok=false means no common ancestor.
func MergeBase(parents map[format.ID][]format.ID, a, b format.ID) (base format.ID, ok bool) {
	inA := Ancestors(parents, a)
	inB := Ancestors(parents, b)
	// The common set is closed under ancestry, so a common commit is a
	// proper ancestor of another common commit exactly when it is a parent
	// of some common commit. Walk the common set in B's discovery order
	// (deterministic), never in map order.
	common := make([]format.ID, 0)
	for _, id := range AncestorList(parents, b) {
		if inA[id] {
			common = append(common, id)
		}
	}
	dominated := make(map[format.ID]bool)
	for _, id := range common {
		for _, p := range parents[id] {
			dominated[p] = true
		}
	}
	for _, id := range common {
		if inB[id] && !dominated[id] && (!ok || id.Compare(base) > 0) {
			base, ok = id, true
		}
	}
	return base, ok
}

// Ancestors returns the set of commits reachable from start through
// parents, start included.
func Ancestors(parents map[format.ID][]format.ID, start format.ID) map[format.ID]bool {
	seen := make(map[format.ID]bool)
	for _, id := range AncestorList(parents, start) {
		seen[id] = true
	}
	return seen
}

// AncestorList returns the commits reachable from start (start first) in
// breadth-first order, following parents in their stored order.
func AncestorList(parents map[format.ID][]format.ID, start format.ID) []format.ID {
	seen := map[format.ID]bool{start: true}
	order := []format.ID{start}
	for i := 0; i < len(order); i++ {
		for _, p := range parents[order[i]] {
			if !seen[p] {
				seen[p] = true
				order = append(order, p)
			}
		}
	}
	return order
}
