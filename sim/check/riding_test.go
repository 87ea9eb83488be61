package check

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// TestCheckRidingBudget: the riding-budget check holds every manifest to
// the writers' budget and counts what it saw. The fixture's versions ride
// (t0 twice, t1 once): within the format's maxima nothing is reported; a
// manifest bound below what the head carries, or a version bound below a
// payload, is a violation; written as objects, the same versions count as
// spilled.
func TestCheckRidingBudget(t *testing.T) {
	f := newFixture(t)
	g, vs := LoadGraph(f.store, root)
	if len(vs) > 0 {
		t.Fatal(vs)
	}
	head := g.Incarnations[0].Latest()
	carried := format.RidingBytes(head.Tables)
	for _, tc := range []struct {
		name              string
		version, manifest int
		violations        bool
	}{
		{"maxima", 0, 0, false},
		{"exactly the head", 0, carried, false},
		{"below the head", 0, carried - 1, true},
		{"below a payload", 10, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, cov := CheckRidingBudget(f.store, g, tc.version, tc.manifest)
			if (len(vs) > 0) != tc.violations {
				t.Fatalf("violations %v, want some: %v", vs, tc.violations)
			}
			for _, v := range vs {
				if v.Check != "riding-budget" {
					t.Fatalf("violation %v, want riding-budget", v)
				}
			}
			if cov != (RidingCoverage{Rode: 3}) {
				t.Fatalf("coverage %+v, want 3 rode", cov)
			}
		})
	}
	objects := newFixtureAs(t, true)
	og, _ := LoadGraph(objects.store, root)
	if vs, cov := CheckRidingBudget(objects.store, og, 1, 1); len(vs) > 0 || cov != (RidingCoverage{Spilled: 3}) {
		t.Fatalf("versions as objects: %v, coverage %+v, want none and 3 spilled", vs, cov)
	}
}
