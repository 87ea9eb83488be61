package lineage

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestSearchNeedsNoMoreThanTheCollectorKeeps (rapid): over random
// histories and pairs, everything ReachMergeBase loads, ReachMergeBaseOpenAll
// (the collector's variant, docs/gc.md rule 3b) loads too; and with every
// other manifest collected but the two heads and what the collector's
// variant loaded (with each loaded reach's head-commit manifest, as
// gc.MergeBaseKeep keeps), ReachMergeBase answers exactly as before. So
// the collector's keep covers whatever the merge of a live pair reads.
func TestSearchNeedsNoMoreThanTheCollectorKeeps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := build(t)
		a := m.reach[rapid.SampledFrom(m.all).Draw(t, "a")]
		b := m.reach[rapid.SampledFrom(m.all).Draw(t, "b")]
		record := func(set map[format.ManifestRef]bool) ReachLoader {
			return func(at format.ManifestRef) (Reach, bool, error) {
				r, ok, err := m.load(at)
				if ok {
					set[r.At], set[r.HeadAt] = true, true
				}
				return r, ok, err
			}
		}
		searched, kept := map[format.ManifestRef]bool{}, map[format.ManifestRef]bool{a.At: true, a.HeadAt: true, b.At: true, b.HeadAt: true}
		want, werr := ReachMergeBase(a, b, record(searched))
		if _, err := ReachMergeBaseOpenAll(a, b, record(kept)); (err == nil) != (werr == nil) {
			t.Fatalf("open-all answers %v, the search %v", err, werr)
		}
		for at := range searched { //detlint:ordered only a failure's text
			if !kept[at] {
				t.Fatalf("the search loads %v, which the collector's variant never loads", at)
			}
		}
		for _, at := range m.all {
			m.collected[at] = !kept[at]
		}
		got, err := ReachMergeBase(a, b, m.load)
		if (err == nil) != (werr == nil) || err == nil && got.ID != want.ID {
			t.Fatalf("after collecting all but the keep: %v %v, before %v %v", got.ID, err, want.ID, werr)
		}
	})
}
