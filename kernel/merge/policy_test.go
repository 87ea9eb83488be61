package merge

import "testing"

// TestResolveWithPolicy pins each resolvable kind under each side: the
// preferred image wins (whole row, or one property), the conflict moves to
// Resolved, Write says whether the target changes; a kind the policy
// leaves at Refuse stays a conflict.
func TestResolveWithPolicy(t *testing.T) {
	a1 := node("a", "x", int64(1), "y", "p")
	sx, tx := node("a", "x", int64(2), "y", "p"), node("a", "x", int64(3), "y", "q")
	cases := []struct {
		name     string
		in       Images
		p        Policy
		want     *Row
		write    bool
		conflict bool
	}{
		{"divergent insert, source", Images{nil, a1, sx}, PreferAll(PreferSource), a1, true, false},
		{"divergent insert, target", Images{nil, a1, sx}, PreferAll(PreferTarget), sx, false, false},
		{"delete vs update, source deletes", Images{a1, nil, sx}, PreferAll(PreferSource), nil, true, false},
		{"delete vs update, target keeps", Images{a1, nil, sx}, PreferAll(PreferTarget), sx, false, false},
		{"update vs delete, source restores", Images{a1, sx, nil}, PreferAll(PreferSource), sx, true, false},
		{"update vs delete, target deletes", Images{a1, sx, nil}, PreferAll(PreferTarget), nil, false, false},
		{"divergent update, source: x from source, y from target", Images{a1, sx, tx}, PreferAll(PreferSource), node("a", "x", int64(2), "y", "q"), true, false},
		{"divergent update, target", Images{a1, sx, tx}, PreferAll(PreferTarget), tx, false, false},
		{"divergent endpoint, source", Images{edge("e", "n1", "n2"), edge("e", "n1", "n3"), edge("e", "n1", "n4")}, PreferAll(PreferSource), edge("e", "n1", "n3"), true, false},
		{"only inserts preferred: update still refused", Images{a1, sx, tx}, Policy{DivergentInsert: PreferSource}, nil, false, true},
		{"only updates preferred: delete still refused", Images{a1, nil, sx}, Policy{DivergentUpdate: PreferSource}, nil, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ResolveWith("T", tc.in, tc.p)
			if tc.conflict {
				if len(got.Conflicts) == 0 || len(got.Resolved) != 0 {
					t.Fatalf("conflicts %v resolved %v, want a conflict", got.Conflicts, got.Resolved)
				}
				return
			}
			if len(got.Conflicts) != 0 || len(got.Resolved) == 0 {
				t.Fatalf("conflicts %v resolved %v, want resolved", got.Conflicts, got.Resolved)
			}
			if !Same(got.Row, tc.want) || got.Write != tc.write {
				t.Fatalf("row %+v write %v, want %+v write %v", got.Row, got.Write, tc.want, tc.write)
			}
			if def := Resolve("T", tc.in); len(def.Conflicts) != len(got.Resolved) {
				t.Fatalf("resolved %v, the zero policy reports %v", got.Resolved, def.Conflicts)
			}
		})
	}
}

// TestPolicyNames pins the flag vocabulary: kinds and sides by name, and
// that only the three resolvable kinds can be set.
func TestPolicyNames(t *testing.T) {
	for k := DivergentInsert; k <= CardinalityViolation; k++ {
		got, ok := KindByName(k.String())
		if !ok || got != k {
			t.Fatalf("KindByName(%q) = %v %v", k, got, ok)
		}
		p, ok := Policy{}.Set(k, PreferSource)
		if ok != Resolvable(k) || (ok && p.For(k) != PreferSource) {
			t.Fatalf("Set(%v): ok %v, For %v", k, ok, p.For(k))
		}
	}
	for _, s := range []Side{Refuse, PreferSource, PreferTarget} {
		if got, ok := ParseSide(s.String()); !ok || got != s {
			t.Fatalf("ParseSide(%q) = %v %v", s, got, ok)
		}
	}
	if _, ok := ParseSide("both"); ok {
		t.Fatal("ParseSide accepted \"both\"")
	}
}
