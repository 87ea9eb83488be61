package compact

import (
	"testing"

	"pgregory.net/rapid"
)

func sum(xs []uint64) (s uint64) {
	for _, x := range xs {
		s += x
	}
	return s
}

// TestPlanProperties: groups are disjoint, in order, at least two small
// fragments each and within the target; rows are preserved; the plan
// shrinks the fragment count; planning again on the result finds nothing
// (a second compaction publishes nothing).
func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, err := Policy{TargetRows: rapid.Uint64Range(2, 64).Draw(t, "target"), MinFragments: rapid.IntRange(2, 6).Draw(t, "min")}.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		rows := rapid.SliceOfN(rapid.Uint64Range(1, 80), 0, 40).Draw(t, "rows")
		groups := Plan(rows, p)
		next := 0
		for _, g := range groups {
			if g.First < next || g.Count < 2 || g.First+g.Count > len(rows) {
				t.Fatalf("group %+v after %d of %d", g, next, len(rows))
			}
			if s := sum(rows[g.First : g.First+g.Count]); s != g.Rows || s > p.TargetRows {
				t.Fatalf("group %+v sums to %d, target %d", g, s, p.TargetRows)
			}
			for _, r := range rows[g.First : g.First+g.Count] {
				if r >= p.TargetRows {
					t.Fatalf("group %+v holds a large fragment of %d rows", g, r)
				}
			}
			next = g.First + g.Count
		}
		after := Apply(rows, groups)
		if sum(after) != sum(rows) {
			t.Fatalf("rows %d -> %d", sum(rows), sum(after))
		}
		if len(groups) > 0 && len(after) >= len(rows) {
			t.Fatalf("plan %v does not shrink %d fragments", groups, len(rows))
		}
		if again := Plan(after, p); again != nil {
			t.Fatalf("not idempotent: %v on %v (from %v)", again, after, rows)
		}
	})
}

func TestPlanTable(t *testing.T) {
	p, _ := Policy{TargetRows: 10, MinFragments: 3}.WithDefaults()
	cases := []struct {
		name string
		rows []uint64
		want []Group
	}{
		{"too few small", []uint64{1, 1, 20}, nil},
		{"all small fit", []uint64{1, 2, 3}, []Group{{0, 3, 6}}},
		{"split at target", []uint64{4, 4, 4, 4}, []Group{{0, 2, 8}, {2, 2, 8}}},
		{"large breaks runs", []uint64{1, 1, 50, 1, 1}, []Group{{0, 2, 2}, {3, 2, 2}}},
		{"no pair fits", []uint64{6, 6, 6}, nil},
		{"empty", nil, nil},
	}
	for _, tc := range cases {
		got := Plan(tc.rows, p)
		if len(got) != len(tc.want) {
			t.Errorf("%s: Plan(%v) = %v, want %v", tc.name, tc.rows, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: Plan(%v) = %v, want %v", tc.name, tc.rows, got, tc.want)
			}
		}
	}
	if _, err := (Policy{TargetRows: 1}).WithDefaults(); err == nil {
		t.Errorf("TargetRows 1 accepted")
	}
}
