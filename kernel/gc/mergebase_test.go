package gc

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// drawReach draws one reach: distinct incarnations of a few branch names,
// each at a random version, sorted like a reach.
func drawReach(t *rapid.T, label string) []format.ManifestRef {
	seen := map[[2]uint64]bool{}
	var r []format.ManifestRef
	for k := range rapid.IntRange(0, 6).Draw(t, label+"-len") {
		name := rapid.IntRange(0, 2).Draw(t, fmt.Sprint(label, "-name", k))
		inc := rapid.Uint64Range(1, 2).Draw(t, fmt.Sprint(label, "-inc", k))
		if seen[[2]uint64{uint64(name), inc}] {
			continue
		}
		seen[[2]uint64{uint64(name), inc}] = true
		r = append(r, format.ManifestRef{Branch: fmt.Sprint("b", name), Incarnation: inc,
			Version: rapid.Uint64Range(0, 5).Draw(t, fmt.Sprint(label, "-v", k))})
	}
	slices.SortFunc(r, format.CompareIncarnation)
	return r
}

// TestMergeBaseTipsIsEveryPairsCommonReach (rapid): the one-pass result
// equals the union, over every pair of reaches, of lineage.CommonReach.
func TestMergeBaseTipsIsEveryPairsCommonReach(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var reaches [][]format.ManifestRef
		for i := range rapid.IntRange(0, 5).Draw(t, "heads") {
			reaches = append(reaches, drawReach(t, fmt.Sprint("r", i)))
		}
		var want []format.ManifestRef
		for i := range reaches {
			for j := i + 1; j < len(reaches); j++ {
				for _, tip := range lineage.CommonReach(reaches[i], reaches[j]) {
					if !slices.Contains(want, tip) {
						want = append(want, tip)
					}
				}
			}
		}
		slices.SortFunc(want, compareTip)
		if d := cmp.Diff(want, MergeBaseTips(reaches)); d != "" {
			t.Fatalf("MergeBaseTips differs from the pairwise common reaches (-want +got):\n%s", d)
		}
	})
}

// TestMergeBaseTipsTable pins the rule on named cases.
func TestMergeBaseTipsTable(t *testing.T) {
	ref := func(b string, v uint64) format.ManifestRef {
		return format.ManifestRef{Branch: b, Incarnation: 1, Version: v}
	}
	for _, tc := range []struct {
		name    string
		reaches [][]format.ManifestRef
		want    []format.ManifestRef
	}{
		{"one head: no pair", [][]format.ManifestRef{{ref("main", 9)}}, nil},
		{"fork point", [][]format.ManifestRef{{ref("main", 9)}, {ref("f", 3), ref("main", 4)}}, []format.ManifestRef{ref("main", 4)}},
		{"merged both ways", [][]format.ManifestRef{{ref("f", 2), ref("main", 9)}, {ref("f", 5), ref("main", 7)}},
			[]format.ManifestRef{ref("f", 2), ref("main", 7)}},
		{"three heads, one incarnation", [][]format.ManifestRef{{ref("main", 9)}, {ref("main", 4)}, {ref("main", 2)}},
			[]format.ManifestRef{ref("main", 4), ref("main", 2)}},
		{"highest repeated", [][]format.ManifestRef{{ref("main", 4)}, {ref("main", 4)}}, []format.ManifestRef{ref("main", 4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, MergeBaseTips(tc.reaches)); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestMergeBaseRootsKeepsWhatMergeBaseNeeds (rapid, arbitrary reaches):
// for every pair of heads, with every tip of their common reach outside
// MergeBaseRoots deleted, the kernel's rule still answers — no missing tip
// is undominated (lineage.Undominated) — and answers the same base
// (lineage.BestTip) as with every tip present. Reaches are drawn acyclic
// and transitive, as a history's are; some are unknown to the collector.
func TestMergeBaseRootsKeepsWhatMergeBaseNeeds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var heads [][]format.ManifestRef
		for i := range rapid.IntRange(0, 5).Draw(t, "heads") {
			heads = append(heads, drawReach(t, fmt.Sprint("h", i)))
		}
		// Reaches of a real history: acyclic and transitive. In version
		// order, a tip reaches the join of some earlier tips' reaches, and
		// always those of the earlier tips of its own incarnation.
		tips := MergeBaseTips(heads)
		slices.SortStableFunc(tips, func(a, b format.ManifestRef) int { return int(a.Version) - int(b.Version) })
		closed := map[format.ManifestRef][]format.ManifestRef{}
		for i, tip := range tips {
			var in [][]format.ManifestRef
			for _, e := range tips[:i] {
				if format.CompareIncarnation(e, tip) == 0 || rapid.Bool().Draw(t, fmt.Sprint("reaches", i, e)) {
					in = append(in, closed[e])
				}
			}
			closed[tip], _ = lineage.JoinReach(tip, in...)
		}
		reachOf := map[format.ManifestRef][]format.ManifestRef{}
		for i, tip := range tips {
			if rapid.IntRange(0, 5).Draw(t, fmt.Sprint("unknown", i)) > 0 {
				reachOf[tip] = closed[tip]
			}
		}
		keep, exact := MergeBaseRoots(heads, reachOf)
		if !exact {
			t.Fatalf("inexact on a small input")
		}
		for i := range heads {
			for j := i + 1; j < len(heads); j++ {
				var all, present []lineage.Tip
				var missing []format.ManifestRef
				for k, at := range lineage.CommonReach(heads[i], heads[j]) {
					// The kernel reads the true reach of a present tip; the
					// collector may not have (unknown): then it dominates nothing.
					tip := lineage.Tip{At: at, ID: format.ID{byte(k + 1)}, Reach: closed[at]}
					all = append(all, tip)
					if slices.Contains(keep, at) {
						present = append(present, tip)
					} else {
						missing = append(missing, at)
					}
				}
				if gone := lineage.Undominated(present, missing); len(gone) > 0 {
					t.Fatalf("pair %d,%d: collected tips %v are not dominated by a kept one", i, j, gone)
				}
				want, wok := lineage.BestTip(all)
				got, gok := lineage.BestTip(present)
				if wok != gok || want.At != got.At {
					t.Fatalf("pair %d,%d: base %v %v with the kept tips, %v %v with all", i, j, got.At, gok, want.At, wok)
				}
			}
		}
	})
}

// TestMergeBaseRootsFallsBackWhenTooLarge: past the check bound it keeps
// every candidate, and says so.
func TestMergeBaseRootsFallsBackWhenTooLarge(t *testing.T) {
	ref := func(b string, v uint64) format.ManifestRef {
		return format.ManifestRef{Branch: b, Incarnation: 1, Version: v}
	}
	heads := [][]format.ManifestRef{{ref("f", 1), ref("main", 9)}, {ref("f", 5), ref("main", 7)}, {ref("main", 3)}}
	reachOf := map[format.ManifestRef][]format.ManifestRef{
		ref("main", 7): {ref("f", 1), ref("main", 7)}, ref("f", 1): {ref("f", 1), ref("main", 2)}, ref("main", 3): {ref("main", 3)},
	}
	exactKeep, exact := MergeBaseRoots(heads, reachOf)
	if !exact || slices.Contains(exactKeep, ref("f", 1)) {
		t.Fatalf("exact run kept %v (exact %v); f v1 is dominated by main v7", exactKeep, exact)
	}
	defer func(n int) { maxBaseChecks = n }(maxBaseChecks)
	maxBaseChecks = 1
	keep, exact := MergeBaseRoots(heads, reachOf)
	if exact || !cmp.Equal(keep, MergeBaseTips(heads)) {
		t.Fatalf("over the bound: %v exact=%v, want every candidate %v", keep, exact, MergeBaseTips(heads))
	}
}
