package gc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeepIncarnationTops: an incarnation's newest listed manifest is kept
// when any other of its manifests is, and only then (its own keep stands).
func TestKeepIncarnationTops(t *testing.T) {
	for _, tc := range []struct {
		name       string
		incs       []uint64
		kept, want []bool
	}{
		{"nothing kept", []uint64{3, 2, 2, 2, 1, 1}, []bool{false, false, false, false, false, false}, []bool{false, false, false, false, false, false}},
		{"a merged-from manifest of an older incarnation", []uint64{3, 2, 2, 2, 1, 1}, []bool{true, false, true, false, false, false}, []bool{true, true, true, false, false, false}},
		{"the lowest of the oldest", []uint64{3, 2, 2, 1, 1, 1}, []bool{true, false, false, false, false, true}, []bool{true, false, false, true, false, true}},
		{"a top kept on its own", []uint64{2, 2, 1, 1}, []bool{false, false, true, false}, []bool{false, false, true, false}},
		{"one key per incarnation", []uint64{3, 2, 1}, []bool{false, true, false}, []bool{false, true, false}},
		{"empty", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NameManifests{Name: "c", Keys: make([]string, len(tc.incs)), Incs: tc.incs, Kept: tc.kept}
			before := append([]bool(nil), tc.kept...)
			got := KeepIncarnationTops(n)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("kept (-want +got):\n%s", d)
			}
			if d := cmp.Diff(before, n.Kept); d != "" {
				t.Fatalf("input changed:\n%s", d)
			}
		})
	}
}
