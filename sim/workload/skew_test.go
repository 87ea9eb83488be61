package workload

import (
	"strings"
	"testing"
)

// TestMaintSkewedActorsAreRefused: in the maintenance workload the writer
// s0 and the collector s1, whose clocks run maintClockBehind behind the
// world's (beyond the skew margin), are refused with ErrClockSkew — the
// trace shows their typed failures — and the run is clean: no lost row, no
// refusal of an exact clock, no skewed success (check clock-skew).
func TestMaintSkewedActorsAreRefused(t *testing.T) {
	w, _ := Lookup("maint")
	s := w.Generate(1, "default")
	var skewed int
	for _, a := range s.Actors {
		if a.Clock != 0 {
			skewed++
		}
	}
	if skewed != 2 {
		t.Fatalf("maint plans %d skewed actors, want 2", skewed)
	}
	r := Execute(s, Options{TraceLines: 1 << 20})
	if r.Failed() {
		t.Fatalf("violations: %v", r.Violations)
	}
	var tx, collect int
	for _, l := range r.Trace {
		switch {
		case strings.Contains(l, "s0 dtx") && strings.Contains(l, "(clock-skew)"):
			tx++
		case strings.Contains(l, "s1 mcollect") && strings.Contains(l, "(clock-skew)"):
			collect++
		}
	}
	if tx == 0 || collect == 0 {
		t.Fatalf("skewed refusals in the trace: %d writes, %d collections; want both > 0", tx, collect)
	}
	t.Logf("refused for clock skew: %d writes of s0, %d collections of s1", tx, collect)
}
