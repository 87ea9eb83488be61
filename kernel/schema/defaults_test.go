package schema

import (
	"errors"
	"strings"
	"testing"
)

// TestParseDefaults pins the @default literal per kind: accepted literals
// and their canonical form in the contract, and rejected ones (typed
// ErrInvalidSchema).
func TestParseDefaults(t *testing.T) {
	cases := []struct {
		prop  string // a property declaration
		canon string // its canonical line in the contract; "" = rejected
	}{
		{`a: int64? @default(-5)`, `a: int64? @default(-5)`},
		{`a: int64 @default(+007)`, `a: int64 @default(7)`},
		{`a: int32? @default(2147483647)`, `a: int32? @default(2147483647)`},
		{`a: int32? @default(2147483648)`, ""}, // out of int32 range
		{`a: float64? @default(1.50)`, `a: float64? @default(1.5)`},
		{`a: float64? @default(1e400)`, ""}, // infinite
		{`a: bool? @default( true )`, `a: bool? @default(true)`},
		{`a: bool? @default(1)`, ""},
		{`a: string? @default("x y\t\u00e9")`, `a: string? @default("x y\t\u00e9")`},
		{`a: string? @default("")`, `a: string? @default("")`},
		{`a: string? @default("a)b#c")`, `a: string? @default("a)b#c")`},
		{`a: string? @default(abc)`, ""},    // unquoted
		{`a: string? @default("\xff")`, ""}, // not UTF-8
		{`a: bytes? @default("\xff\x00")`, `a: bytes? @default("\xff\x00")`},
		{`a: timestamp? @default("2024-01-02T04:04:05+01:00")`, `a: timestamp? @default("2024-01-02T03:04:05Z")`},
		{`a: timestamp? @default("yesterday")`, ""},
		{`a: int64? @col(z) @default(3)`, `a: int64? @col(z) @default(3)`},
		{`a: int64? @default(3) @col(z)`, ""}, // @col comes first
		{`a: int64? @default(3`, ""},
		{`a: int64? @other(3)`, ""},
	}
	for _, tc := range cases {
		s, err := Parse([]byte("node P { " + tc.prop + " }"))
		if tc.canon == "" {
			if err == nil || !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("%s: accepted or untyped: %v", tc.prop, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.prop, err)
			continue
		}
		c, err := s.Contract()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(c), "\n  "+tc.canon+"\n") {
			t.Errorf("%s: contract\n%s\nlacks %q", tc.prop, c, tc.canon)
		}
		if back, err := Decode(c); err != nil || back.String() != s.String() {
			t.Errorf("%s: contract does not round-trip: %v", tc.prop, err)
		}
	}
	// A non-canonical default in a hand-built schema is refused.
	bad := Schema{Nodes: []NodeType{{Name: "P", Props: []Property{{Name: "a", Kind: Int64, Default: "007"}}}}}
	if err := bad.Validate(); err == nil {
		t.Error("non-canonical default validated")
	}
}

// TestEvolveDefaultsAndWidening pins the planner's rules for defaults and
// int32 -> int64: an added property carries its default; a kept one's
// default cannot change; int32 widens to int64 keeping its column, every
// other kind change (narrowing included) is ErrIncompatibleChange.
func TestEvolveDefaultsAndWidening(t *testing.T) {
	const base = "node P { a: int32? b: string }\n"
	cases := []struct {
		name, old, target, steps string
		renames                  []Rename
		want                     error
	}{
		{name: "add with default", old: base, target: "node P { a: int32? b: string c: int64 @default(4) }",
			steps: "add-property P.c default 4"},
		{name: "widen", old: base, target: "node P { a: int64? b: string }", steps: "widen-property P.a int32 -> int64"},
		{name: "widen and rename", old: base, target: "node P { z: int64? b: string }", renames: []Rename{{Type: "P", From: "a", To: "z"}},
			steps: "rename-property P.a -> z; widen-property P.z int32 -> int64"},
		{name: "narrow", old: "node P { a: int64? }", target: "node P { a: int32? }", want: ErrIncompatibleChange},
		{name: "int32 to float", old: base, target: "node P { a: float64? b: string }", want: ErrIncompatibleChange},
		{name: "default changed", old: "node P { a: int64? @default(1) }", target: "node P { a: int64? @default(2) }", want: ErrIncompatibleChange},
		{name: "default removed", old: "node P { a: int64? @default(1) }", target: "node P { a: int64? }", want: ErrIncompatibleChange},
		{name: "default added to a kept property", old: "node P { a: int64? }", target: "node P { a: int64? @default(1) }", want: ErrIncompatibleChange},
		{name: "default kept through a widening", old: "node P { a: int32? @default(1) }", target: "node P { a: int64? @default(1) }",
			steps: "widen-property P.a int32 -> int64"},
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
			var got []string
			for _, s := range p.Steps {
				got = append(got, s.String())
			}
			if strings.Join(got, "; ") != tc.steps {
				t.Fatalf("steps %q, want %q", strings.Join(got, "; "), tc.steps)
			}
		})
	}
}
