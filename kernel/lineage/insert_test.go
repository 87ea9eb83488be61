package lineage

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// entries draws a sorted entry list, one entry per incarnation.
func entries(t *rapid.T, label string) []format.ReachEntry {
	n := rapid.IntRange(0, 12).Draw(t, label+"-n")
	var es []format.ReachEntry
	for i := 0; i < n; i++ {
		es = append(es, format.ReachEntry{ManifestRef: format.ManifestRef{
			Branch:      fmt.Sprintf("b%d", rapid.IntRange(0, 3).Draw(t, label+"-branch")),
			Incarnation: rapid.Uint64Range(1, 3).Draw(t, label+"-inc"),
			Version:     rapid.Uint64Range(0, 9).Draw(t, label+"-version"),
		}, Gen: rapid.Uint64Range(1, 20).Draw(t, label+"-gen")})
	}
	slices.SortStableFunc(es, compareEntryInc)
	return slices.CompactFunc(es, func(a, b format.ReachEntry) bool { return compareEntryInc(a, b) == 0 })
}

// TestInsertEntriesIsMergeEntries: the in-place merge the search uses
// equals mergeEntries on any two sorted lists.
func TestInsertEntriesIsMergeEntries(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := entries(t, "a"), entries(t, "b")
		want := mergeEntries(a, b)
		if got := insertEntries(slices.Clone(a), b); !slices.Equal(got, want) {
			t.Fatalf("insertEntries(%v, %v) = %v, want %v", a, b, got, want)
		}
	})
}
