package lineage

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestReachHintChangesNothing: over random commit graphs, a search told
// to hint (ReachMergeBase's and the collector's open-all variant) answers
// exactly as one that is not, loads the same manifests,
// names each manifest in its hints once, never one it loaded before the
// hint, and names two or more at a time.
func TestReachHintChangesNothing(t *testing.T) {
	hints := 0
	rapid.Check(t, func(t *rapid.T) {
		m := build(t)
		a := rapid.SampledFrom(m.all).Draw(t, "a")
		b := rapid.SampledFrom(m.all).Draw(t, "b")
		openAll := rapid.Bool().Draw(t, "open-all") // the collector's variant
		plainSearch, hintedSearch := ReachMergeBase, ReachMergeBaseHinted
		if openAll {
			plainSearch, hintedSearch = ReachMergeBaseOpenAll, ReachMergeBaseOpenAllHinted
		}
		var plainLoads, hintedLoads []format.ManifestRef
		loadInto := func(into *[]format.ManifestRef) ReachLoader {
			return func(at format.ManifestRef) (Reach, bool, error) {
				*into = append(*into, at)
				return m.load(at)
			}
		}
		want, werr := plainSearch(m.reach[a], m.reach[b], loadInto(&plainLoads))
		hinted := map[format.ManifestRef]bool{}
		hint := func(ats []format.ManifestRef) {
			if len(ats) < 2 {
				t.Fatalf("a hint of %d folds", len(ats))
			}
			hints++
			for _, at := range ats {
				if hinted[at] {
					t.Fatalf("%v hinted twice", at)
				}
				for _, l := range hintedLoads {
					if l == at {
						t.Fatalf("%v hinted after it was loaded", at)
					}
				}
				hinted[at] = true
			}
		}
		got, gerr := hintedSearch(m.reach[a], m.reach[b], loadInto(&hintedLoads), hint)
		if fmt.Sprint(got.ID, got.HeadAt, gerr) != fmt.Sprint(want.ID, want.HeadAt, werr) {
			t.Fatalf("hinted: %v at %v (%v); plain: %v at %v (%v)", got.ID, got.HeadAt, gerr, want.ID, want.HeadAt, werr)
		}
		if fmt.Sprint(hintedLoads) != fmt.Sprint(plainLoads) {
			t.Fatalf("hinted loads %v, plain %v", hintedLoads, plainLoads)
		}
	})
	if hints == 0 {
		t.Fatal("no search hinted: the histories never had two uncovered folds at once")
	}
}
