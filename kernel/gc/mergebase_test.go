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
