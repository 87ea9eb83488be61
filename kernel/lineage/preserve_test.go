package lineage

import (
	"testing"

	"pgregory.net/rapid"
)

// naivePinSatisfied is the rule as the issue states it: every version of
// w's lineage in (v, w] is content-preserving, and v is on that lineage.
func naivePinSatisfied(v, w uint64, marks map[uint64]VersionMark) bool {
	onLineage := map[uint64]bool{}
	for cur := w; cur != 0; cur = marks[cur].BasedOn {
		onLineage[cur] = true
	}
	if !onLineage[v] {
		return false
	}
	for ver := v + 1; ver <= w; ver++ {
		if onLineage[ver] && !marks[ver].Preserving {
			return false
		}
	}
	return true
}

// genMarks draws a table history: versions 1..n, each based on an earlier
// version (or nothing), some content-preserving.
func genMarks(t *rapid.T) map[uint64]VersionMark {
	n := rapid.Uint64Range(1, 30).Draw(t, "n")
	marks := map[uint64]VersionMark{}
	for ver := uint64(1); ver <= n; ver++ {
		m := VersionMark{Version: ver}
		if ver > 1 && rapid.IntRange(0, 9).Draw(t, "based") > 0 {
			m.BasedOn = rapid.Uint64Range(ver-min(ver-1, 3), ver-1).Draw(t, "on")
			m.Preserving = rapid.Bool().Draw(t, "preserving")
		}
		marks[ver] = m
	}
	return marks
}

// loadChain is what a driver does: load from w while ChainNeedsMore asks.
func loadChain(v, w uint64, marks map[uint64]VersionMark) []VersionMark {
	chain := []VersionMark{marks[w]}
	for {
		next, more := ChainNeedsMore(v, chain)
		if !more {
			return chain
		}
		chain = append(chain, marks[next])
	}
}

func TestPinSatisfiedMatchesNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		marks := genMarks(t)
		w := rapid.Uint64Range(1, uint64(len(marks))).Draw(t, "w")
		v := rapid.Uint64Range(0, w).Draw(t, "v")
		chain := loadChain(v, w, marks)
		if got, want := PinSatisfied(v, chain), naivePinSatisfied(v, w, marks); got != want {
			t.Fatalf("PinSatisfied(%d, %v) = %v, naive %v", v, chain, got, want)
		}
		// A truncated chain (a driver that stopped early) never says yes
		// where the rule says no.
		cut := rapid.IntRange(1, len(chain)).Draw(t, "cut")
		if PinSatisfied(v, chain[:cut]) && !naivePinSatisfied(v, w, marks) {
			t.Fatalf("truncated chain %v satisfied a pin the rule refuses", chain[:cut])
		}
	})
}

func TestPinSatisfiedTable(t *testing.T) {
	c := func(ver, on uint64, p bool) VersionMark { return VersionMark{Version: ver, BasedOn: on, Preserving: p} }
	cases := []struct {
		name  string
		v     uint64
		chain []VersionMark
		want  bool
	}{
		{"same version", 3, []VersionMark{c(3, 2, false)}, true},
		{"one compaction", 3, []VersionMark{c(4, 3, true), c(3, 2, false)}, true},
		{"two compactions", 3, []VersionMark{c(6, 4, true), c(4, 3, true), c(3, 2, false)}, true},
		{"a data write between", 3, []VersionMark{c(6, 4, true), c(4, 3, false), c(3, 2, false)}, false},
		{"data write on top", 3, []VersionMark{c(5, 4, false), c(4, 3, true)}, false},
		{"compaction of another base", 3, []VersionMark{c(5, 2, true), c(2, 1, false)}, false},
		{"chain not loaded", 3, []VersionMark{c(5, 4, true)}, false},
		{"broken chain", 3, []VersionMark{c(5, 4, true), c(3, 2, false)}, false},
		{"empty", 3, nil, false},
		{"unpinned base", 0, []VersionMark{c(1, 0, false)}, false},
	}
	for _, tc := range cases {
		if got := PinSatisfied(tc.v, tc.chain); got != tc.want {
			t.Errorf("%s: PinSatisfied(%d, %v) = %v, want %v", tc.name, tc.v, tc.chain, got, tc.want)
		}
	}
}
