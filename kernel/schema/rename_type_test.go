package schema

import (
	"errors"
	"strings"
	"testing"
)

// TestEvolveTypeRenames pins type renames: the renamed type keeps its
// storage table (@table), edges follow it, a later type of the old name
// takes a fresh table, and the bad renames are refused.
func TestEvolveTypeRenames(t *testing.T) {
	const base = "node P { a: int64? }\nnode Q {}\nedge E: P -> Q { s: int64? }\n"
	cases := []struct {
		name, old, target string
		types             []TypeRename
		renames           []Rename
		steps             string
		contract          string // substring of the result's contract
		want              error
	}{
		{name: "rename a node keeps its table", old: base, target: "node R { a: int64? }\nnode Q {}\nedge E: R -> Q { s: int64? }\n",
			types: []TypeRename{{From: "P", To: "R"}}, steps: "rename-type P -> R",
			contract: "node R @table(P) {\n  a: int64?\n}\nedge E: R -> Q {"},
		{name: "rename an edge with @card keeps its table", old: base, target: "node P { a: int64? }\nnode Q {}\nedge F: P -> Q @card(0..1) { s: int64? }\n",
			types: []TypeRename{{From: "E", To: "F"}}, steps: "rename-type E -> F; recard F 0..* -> 0..1",
			contract: "edge F: P -> Q @card(0..1) @table(E) {"},
		{name: "rename and a property rename named by either name", old: base, target: "node R { b: int64? }\nnode Q {}\nedge E: R -> Q { s: int64? }\n",
			types: []TypeRename{{From: "P", To: "R"}}, renames: []Rename{{Type: "P", From: "a", To: "b"}},
			steps: "rename-type P -> R; rename-property R.a -> b", contract: "node R @table(P) {\n  b: int64? @col(a)\n}"},
		{name: "rename back drops the annotation", old: "node R @table(P) {}\n", target: "node P {}\n",
			types: []TypeRename{{From: "R", To: "P"}}, steps: "rename-type R -> P", contract: "node P {}\n"},
		{name: "a new type of a name another type's table has takes a fresh table", old: "node R @table(P) {}\n", target: "node R {}\nnode P {}\n",
			steps: "add-node P", contract: "node P @table(P_2) {}\nnode R @table(P) {}\n"},
		{name: "without a rename it is a drop and an add", old: base, target: "node R { a: int64? }\nnode Q {}\nedge E: R -> Q { s: int64? }\n",
			want: ErrIncompatibleChange}, // E's endpoints would change
		{name: "renamed type missing", old: base, target: base, types: []TypeRename{{From: "X", To: "P"}}, want: ErrIncompatibleChange},
		{name: "new name not in the target", old: base, target: base, types: []TypeRename{{From: "P", To: "X"}}, want: ErrIncompatibleChange},
		{name: "old name kept", old: base, target: base + "node R { a: int64? }\n", types: []TypeRename{{From: "P", To: "R"}}, want: ErrIncompatibleChange},
		{name: "to a name in force", old: base, target: "node Q { a: int64? }\nedge E: Q -> Q { s: int64? }\n",
			types: []TypeRename{{From: "P", To: "Q"}}, want: ErrIncompatibleChange},
		{name: "node to edge", old: "node P {}\nnode N {}\n", target: "node P {}\nedge M: P -> P\n",
			types: []TypeRename{{From: "N", To: "M"}}, want: ErrIncompatibleChange},
		{name: "hand-written @table", old: base, target: strings.Replace(base, "node Q {}", "node Q @table(Z) {}", 1), want: ErrIncompatibleChange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := EvolveTypes(mustParse(t, tc.old), mustParse(t, tc.target), tc.types, tc.renames)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("EvolveTypes = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, tc.steps, tc.contract)
			if got := stepStrings(Compare(p.Old, p.New)); got != tc.steps {
				t.Fatalf("Compare %q, want %q", got, tc.steps)
			}
		})
	}
}

// TestStorageTableRules pins the validation of @table: one type per
// table, identifiers only, and the canonical form writes it only when it
// differs from the name.
func TestStorageTableRules(t *testing.T) {
	for _, bad := range []string{
		"node P {}\nnode Q @table(P) {}\n",         // P's table twice
		"node P @table(Q) {}\nnode Q {}\n",         // Q's table twice
		"node P @table(_x) {}\n",                   // not an identifier
		"node P {}\nedge E: P -> P @table(P) {}\n", // an edge on a node's table
		"node P @retired(a) @table(Q) {}\n",        // @table before @retired
	} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%q: Parse = %v, want ErrInvalidSchema", bad, err)
		}
	}
	s := mustParse(t, "node P @table(P) {}\nnode R @table(X) @retired(a) { b: int64? }\nedge E: P -> R @card(0..1) @table(F) @retired(z) {}\n")
	c, err := s.Contract()
	if err != nil {
		t.Fatal(err)
	}
	const want = ContractHeader + "node P {}\nnode R @table(X) @retired(a) {\n  b: int64?\n}\nedge E: P -> R @card(0..1) @table(F) @retired(z) {}\n"
	if string(c) != want {
		t.Fatalf("contract\n%s\nwant\n%s", c, want)
	}
	if back, err := Decode(c); err != nil || back.String() != s.String() {
		t.Fatalf("round trip: %v", err)
	}
	if typ, ok := s.TypeOfTable("F"); !ok || typ != "E" {
		t.Fatalf("TypeOfTable(F) = %q, %v", typ, ok)
	}
	if table, _ := s.TableOf("P"); table != "P" {
		t.Fatalf("TableOf(P) = %q", table)
	}
}
