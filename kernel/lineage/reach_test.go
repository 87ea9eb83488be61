package lineage

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel/format"
)

func ref(b string, inc, v uint64) format.ManifestRef {
	return format.ManifestRef{Branch: b, Incarnation: inc, Version: v}
}

func TestJoinReach(t *testing.T) {
	for _, tc := range []struct {
		name   string
		at     format.ManifestRef
		inputs [][]format.ManifestRef
		want   []format.ManifestRef
	}{
		{"genesis", ref("main", 1, 0), nil, []format.ManifestRef{ref("main", 1, 0)}},
		{"commit on its parent", ref("main", 1, 5), [][]format.ManifestRef{{ref("main", 1, 4)}}, []format.ManifestRef{ref("main", 1, 5)}},
		{"first commit of a fork", ref("x", 1, 1), [][]format.ManifestRef{{ref("main", 1, 3), ref("x", 1, 0)}},
			[]format.ManifestRef{ref("main", 1, 3), ref("x", 1, 1)}},
		{"merge takes the higher version per incarnation", ref("main", 1, 9),
			[][]format.ManifestRef{{ref("a", 2, 1), ref("main", 1, 8)}, {ref("a", 1, 7), ref("a", 2, 4), ref("main", 1, 3)}},
			[]format.ManifestRef{ref("a", 1, 7), ref("a", 2, 4), ref("main", 1, 9)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := JoinReach(tc.at, tc.inputs...)
			if !ok {
				t.Fatal("not ok")
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("JoinReach (-want +got):\n%s", d)
			}
			x := format.CommitIndex{ID: format.ID{1}, At: tc.at, Complete: true, Reach: got}
			if err := format.ValidateCommitIndex(&x); err != nil {
				t.Fatalf("the joined reach is not a valid index: %v", err)
			}
		})
	}
}

// A join past MaxReachEntries incarnations reports ok=false (the index is
// then written without a reach).
func TestJoinReachBounded(t *testing.T) {
	var in []format.ManifestRef
	for i := range format.MaxReachEntries {
		in = append(in, ref("b", uint64(i+1), 1))
	}
	if _, ok := JoinReach(ref("main", 1, 1), in); ok {
		t.Fatal("a join of MaxReachEntries+1 incarnations is ok")
	}
	if _, ok := JoinReach(ref("b", 1, 2), in); !ok {
		t.Fatal("a join of exactly MaxReachEntries incarnations is refused")
	}
}

func TestCommonReachAndReaches(t *testing.T) {
	a := []format.ManifestRef{ref("a", 1, 4), ref("main", 1, 9)}
	b := []format.ManifestRef{ref("a", 1, 2), ref("b", 1, 3), ref("main", 1, 5)}
	if d := cmp.Diff([]format.ManifestRef{ref("a", 1, 2), ref("main", 1, 5)}, CommonReach(a, b)); d != "" {
		t.Fatalf("CommonReach (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		at   format.ManifestRef
		want bool
	}{{ref("main", 1, 9), true}, {ref("main", 1, 10), false}, {ref("a", 1, 0), true}, {ref("b", 1, 1), false}, {ref("a", 2, 1), false}} {
		if got := Reaches(a, tc.at); got != tc.want {
			t.Errorf("Reaches(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

// BestTip: a tip another tip reaches is no merge base; between two tips
// neither reaches (criss-cross), the greater id wins, as in MergeBase.
func TestBestTip(t *testing.T) {
	m := Tip{At: ref("main", 1, 3), ID: format.ID{3}, Reach: []format.ManifestRef{ref("main", 1, 3)}}
	x := Tip{At: ref("x", 1, 2), ID: format.ID{2}, Reach: []format.ManifestRef{ref("main", 1, 3), ref("x", 1, 2)}}
	y := Tip{At: ref("y", 1, 1), ID: format.ID{9}, Reach: []format.ManifestRef{ref("main", 1, 2), ref("y", 1, 1)}}
	for _, tc := range []struct {
		name string
		tips []Tip
		want format.ID
		ok   bool
	}{
		{"none", nil, format.ID{}, false},
		{"dominated tip loses", []Tip{m, x}, x.ID, true},
		{"criss-cross: greatest id", []Tip{x, y}, y.ID, true},
		{"dominated and criss-cross", []Tip{m, x, y}, y.ID, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := BestTip(tc.tips)
			if ok != tc.ok || got.ID != tc.want {
				t.Fatalf("BestTip = %v, %v; want %v, %v", got.ID, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestUndominated: a collected tip that a present tip reaches is not
// needed; one that no present tip reaches is (it may be the base).
func TestUndominated(t *testing.T) {
	x := Tip{At: ref("x", 1, 2), ID: format.ID{2}, Reach: []format.ManifestRef{ref("main", 1, 3), ref("x", 1, 2)}}
	for _, tc := range []struct {
		name    string
		tips    []Tip
		missing []format.ManifestRef
		want    []format.ManifestRef
	}{
		{"nothing missing", []Tip{x}, nil, nil},
		{"reached by a present tip", []Tip{x}, []format.ManifestRef{ref("main", 1, 3)}, nil},
		{"below a reached version", []Tip{x}, []format.ManifestRef{ref("main", 1, 1)}, nil},
		{"above what any tip reaches", []Tip{x}, []format.ManifestRef{ref("main", 1, 4)}, []format.ManifestRef{ref("main", 1, 4)}},
		{"no present tip", nil, []format.ManifestRef{ref("y", 1, 1)}, []format.ManifestRef{ref("y", 1, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Undominated(tc.tips, tc.missing); !slices.Equal(got, tc.want) {
				t.Fatalf("Undominated = %v, want %v", got, tc.want)
			}
		})
	}
}
