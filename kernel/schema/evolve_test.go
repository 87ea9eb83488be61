package schema

import (
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) Schema {
	t.Helper()
	s, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	return s
}

// TestEvolve pins the planner: steps, storage columns kept, fresh or
// retired, and refusals.
func TestEvolve(t *testing.T) {
	const base = "node P { a: int64? b: string }\nnode Q {}\nedge E: P -> Q { s: int64? }\n"
	cases := []struct {
		name     string
		old      string
		target   string
		renames  []Rename
		steps    string
		contract string // substring of the result's contract
		want     error
	}{
		{name: "add type and property", old: base, target: base + "node R {}\n",
			steps: "add-node R"},
		{name: "add property takes its name as column", old: base,
			target: strings.Replace(base, "b: string }", "b: string c: bool? }", 1),
			steps:  "add-property P.c", contract: "  c: bool?\n"},
		{name: "drop retires the column", old: base, target: strings.Replace(base, "a: int64? ", "", 1),
			steps: "drop-property P.a", contract: "node P @retired(a) {"},
		{name: "re-add after drop gets a fresh column", old: "node P @retired(a) { b: string }\n", target: "node P { b: string a: string? }\n",
			steps: "add-property P.a", contract: "  a: string? @col(a_2)\n"},
		{name: "rename keeps the column", old: base, target: strings.Replace(base, "a: int64?", "z: int64?", 1),
			renames: []Rename{{Type: "P", From: "a", To: "z"}},
			steps:   "rename-property P.a -> z", contract: "  z: int64? @col(a)\n"},
		{name: "rename back drops the annotation", old: "node P { z: int64? @col(a) }\n", target: "node P { a: int64? }\n",
			renames: []Rename{{Type: "P", From: "z", To: "a"}},
			steps:   "rename-property P.z -> a", contract: "node P {\n  a: int64?\n}"},
		{name: "loosen and recard", old: base,
			target: strings.Replace(strings.Replace(base, "b: string", "b: string?", 1), "P -> Q", "P -> Q @card(0..1)", 1),
			steps:  "loosen-property P.b; recard E 0..* -> 0..1"},
		{name: "drop type", old: base + "node R {}\n", target: base, steps: "drop-type R"},
		{name: "kind change", old: base, target: strings.Replace(base, "a: int64?", "a: string?", 1), want: ErrIncompatibleChange},
		{name: "nullable to required", old: base, target: strings.Replace(base, "a: int64?", "a: int64", 1), want: ErrIncompatibleChange},
		{name: "endpoints change", old: base, target: strings.Replace(base, "P -> Q", "P -> P", 1), want: ErrIncompatibleChange},
		{name: "hand-written @col", old: base, target: strings.Replace(base, "a: int64?", "a: int64? @col(x)", 1), want: ErrIncompatibleChange},
		{name: "rename of a missing property", old: base, target: base, renames: []Rename{{Type: "P", From: "nope", To: "a"}}, want: ErrIncompatibleChange},
		{name: "rename kept under the old name too", old: base, target: strings.Replace(base, "a: int64? ", "a: int64? z: int64? ", 1),
			renames: []Rename{{Type: "P", From: "a", To: "z"}}, want: ErrIncompatibleChange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Evolve(mustParse(t, tc.old), mustParse(t, tc.target), tc.renames)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Evolve = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, p, tc.steps, tc.contract)
		})
	}
}

// checkPlan fails t unless p's steps read steps, its new schema's contract
// contains contract, and the contract decodes back to p.New.
func checkPlan(t *testing.T, p Plan, steps, contract string) {
	t.Helper()
	if got := stepStrings(p.Steps); got != steps {
		t.Fatalf("steps %q, want %q", got, steps)
	}
	c, err := p.New.Contract()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(c), contract) {
		t.Fatalf("contract\n%s\nlacks %q", c, contract)
	}
	if back, err := Decode(c); err != nil || back.String() != p.New.String() {
		t.Fatalf("contract does not round-trip: %v", err)
	}
}

// TestStorageColumnRules pins the validation of storage annotations.
func TestStorageColumnRules(t *testing.T) {
	for _, bad := range []string{
		"node P { a: int64? @col(b) b: int64? }", // column used twice
		"node P @retired(a) { a: int64? }",       // a live column retired
		"node P @retired(x, x) { a: int64? }",    // retired twice
		"node P { a: int64? @col(id) }",          // reserved
		"node P @retired(b, a) { c: int64? }",    // parses, but not canonical (checked below)
	} {
		s, err := Parse([]byte(bad))
		if err == nil && !strings.Contains(bad, "@retired(b, a)") {
			t.Errorf("%q accepted", bad)
		}
		if err == nil {
			c, _ := s.Contract()
			if _, err := Decode(append([]byte(ContractHeader), []byte(bad+"\n")...)); err == nil || strings.Contains(string(c), "@retired(b, a)") {
				t.Errorf("%q: unsorted retired list decoded or kept", bad)
			}
		}
	}
}
