package lineage

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
	"pgregory.net/rapid"
)

// genDAG draws a commit graph where commit i has 0..2 parents among
// commits < i, with random ids so the tie-break order is exercised.
func genDAG(t *rapid.T) ([]format.ID, map[format.ID][]format.ID) {
	n := rapid.IntRange(1, 24).Draw(t, "n")
	ids := make([]format.ID, n)
	seen := map[format.ID]bool{}
	for i := range ids {
		ids[i] = genID(t, "id")
		if seen[ids[i]] {
			t.Skip("id collision")
		}
		seen[ids[i]] = true
	}
	parents := map[format.ID][]format.ID{}
	for i := 1; i < n; i++ {
		k := rapid.IntRange(0, 2).Draw(t, "k")
		for j := 0; j < k; j++ {
			p := ids[rapid.IntRange(0, i-1).Draw(t, "p")]
			if len(parents[ids[i]]) == 0 || parents[ids[i]][0] != p {
				parents[ids[i]] = append(parents[ids[i]], p)
			}
		}
	}
	return ids, parents
}

// reach is the brute-force reflexive-transitive ancestry relation.
func reach(ids []format.ID, parents map[format.ID][]format.ID) map[[2]format.ID]bool {
	r := map[[2]format.ID]bool{}
	for _, x := range ids { // ids are topologically ordered: parents first
		r[[2]format.ID{x, x}] = true
		for _, p := range parents[x] {
			for _, y := range ids {
				if r[[2]format.ID{p, y}] {
					r[[2]format.ID{x, y}] = true
				}
			}
		}
	}
	return r
}

// MergeBase returns the greatest-id common ancestor that no other common
// ancestor descends from, computed here by brute force.
func TestMergeBaseMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids, parents := genDAG(t)
		a := rapid.SampledFrom(ids).Draw(t, "a")
		b := rapid.SampledFrom(ids).Draw(t, "b")
		r := reach(ids, parents) // r[x,y]: y is an ancestor of x (or x itself)
		var common []format.ID
		for _, y := range ids {
			if r[[2]format.ID{a, y}] && r[[2]format.ID{b, y}] {
				common = append(common, y)
			}
		}
		var want format.ID
		found := false
		for _, c := range common {
			best := true
			for _, d := range common {
				if d != c && r[[2]format.ID{d, c}] {
					best = false
				}
			}
			if best && (!found || c.Compare(want) > 0) {
				want, found = c, true
			}
		}
		got, ok := MergeBase(parents, a, b)
		if ok != found || got != want {
			t.Fatalf("MergeBase(%s,%s) = %s,%v; want %s,%v", a, b, got, ok, want, found)
		}
		if sym, _ := MergeBase(parents, b, a); sym != got {
			t.Fatalf("not symmetric: %s vs %s", sym, got)
		}
		if self, ok := MergeBase(parents, a, a); !ok || self != a {
			t.Fatalf("MergeBase(a,a) = %s, want a", self)
		}
	})
}

// A criss-cross merge has two best common ancestors; the answer is the
// greater id, whichever side is asked first.
func TestMergeBaseCrissCross(t *testing.T) {
	root, x, y, m1, m2 := format.ID{1}, format.ID{2}, format.ID{3}, format.ID{4}, format.ID{5}
	parents := map[format.ID][]format.ID{x: {root}, y: {root}, m1: {x, y}, m2: {y, x}}
	for _, pair := range [][2]format.ID{{m1, m2}, {m2, m1}} {
		if got, ok := MergeBase(parents, pair[0], pair[1]); !ok || got != y {
			t.Fatalf("criss-cross base = %s, want %s", got, y)
		}
	}
	if _, ok := MergeBase(parents, x, format.ID{9}); ok {
		t.Fatal("unrelated commits have a base")
	}
}
