package schema

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/google/go-cmp/cmp"
)

// TestCompareTable pins Compare on hand-written schemas in force.
func TestCompareTable(t *testing.T) {
	cases := []struct{ name, old, new, steps string }{
		{"same", "node P { a: int64? }\n", "node P { a: int64? }\n", ""},
		{"rename by column", "node P { a: int64? }\n", "node P { z: int64? @col(a) }\n", "rename-property P.a -> z"},
		{"drop then re-add is not a rename", "node P { a: int64? }\n", "node P @retired(a) { a: int64? @col(a_2) }\n",
			"drop-property P.a; add-property P.a"}, // the drop frees the name (S12: steps apply in order)
		{"types added and dropped", "node P {}\nnode Q {}\nedge E: P -> Q\n", "node P {}\nnode R {}\n",
			"drop-type Q; drop-type E; add-node R"},
		{"recard and loosen", "node P { b: string }\nedge E: P -> P\n", "node P { b: string? }\nedge E: P -> P @card(1..2)\n",
			"loosen-property P.b; recard E 0..* -> 1..2"},
		{"a node that became an edge", "node P {}\nnode X {}\n", "node P {}\nedge X: P -> P\n", "drop-type X; add-edge X"},
		{"type rename by table", "node P { a: int64? }\nedge E: P -> P\n", "node Q @table(P) { a: int64? }\nedge F: Q -> Q @table(E)\n",
			"rename-type P -> Q; rename-type E -> F"},
		{"a renamed type's property steps follow its rename", "node P { a: int64? }\n", "node Q @table(P) { b: int64? @col(a) }\n",
			"rename-type P -> Q; rename-property Q.a -> b"},
		{"a new type of an old name is an add", "node P {}\n", "node P @table(P_2) {}\nnode Q @table(P) {}\n",
			"rename-type P -> Q; add-node P"},
		{"default and widening", "node P { w: int32? }\n", "node P { w: int64? v: int64 @default(3) }\n",
			"widen-property P.w int32 -> int64; add-property P.v default 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := stepStrings(Compare(mustParse(t, tc.old), mustParse(t, tc.new))); got != tc.steps {
				t.Fatalf("Compare = %q, want %q", got, tc.steps)
			}
		})
	}
}

func stepStrings(steps []Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.String())
	}
	return strings.Join(out, "; ")
}

// TestCompareEqualsEvolvePlan: for random chains of schema changes
// (Evolve with adds, with and without defaults, drops, renames,
// loosenings, int32 -> int64 widenings, re-bounds, added, dropped and
// renamed types), Compare of a plan's old and new schemas is exactly the
// plan's steps, and Compare of a schema with itself is empty. Red if
// Compare matched properties by name (a rename would be a drop and an add,
// a drop-and-re-add a kept property), and red before Compare reported
// defaults and widenings.
func TestCompareEqualsEvolvePlan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, err := Parse([]byte("node A { p: string q: int64? w: int32? }\nnode B { p: string? }\nedge E: A -> B { r: int64? }\n"))
		if err != nil {
			t.Fatal(err)
		}
		for round := rapid.IntRange(1, 6).Draw(t, "rounds"); round > 0; round-- {
			p := randomPlan(t, s)
			got := Compare(p.Old, p.New)
			if len(got) == 0 && len(p.Steps) == 0 {
				got = p.Steps
			}
			if !cmp.Equal(got, p.Steps) {
				t.Fatalf("Compare = %q\nplan    = %q\nold:\n%s\nnew:\n%s", stepStrings(got), stepStrings(p.Steps), p.Old, p.New)
			}
			if same := Compare(p.New, p.New); len(same) != 0 {
				t.Fatalf("Compare of a schema with itself: %q", stepStrings(same))
			}
			s = p.New
		}
	})
}

// randomPlan plans a random change of s (randomTarget, randomTypeRename).
func randomPlan(t *rapid.T, s Schema) Plan {
	target, renames := randomTarget(t, s)
	target, types := randomTypeRename(t, s, target, renames)
	p, err := EvolveTypes(s, target, types, renames)
	if err != nil {
		t.Fatalf("evolve: %v\n%s", err, target)
	}
	return p
}

// randomTarget is a hand-written target for s with a few random edits.
func randomTarget(t *rapid.T, s Schema) (Schema, []Rename) {
	target := s.Normalized()
	strip := func(props []Property) []Property {
		out := append([]Property(nil), props...)
		for i := range out {
			out[i].Column = ""
		}
		return out
	}
	for i := range target.Nodes {
		target.Nodes[i].Props, target.Nodes[i].Retired, target.Nodes[i].Table = strip(target.Nodes[i].Props), nil, ""
	}
	for i := range target.Edges {
		target.Edges[i].Props, target.Edges[i].Retired, target.Edges[i].Table = strip(target.Edges[i].Props), nil, ""
	}
	var renames []Rename
	names := []string{"p", "q", "r", "x", "y"}
	for edit := rapid.IntRange(0, 3).Draw(t, "edits"); edit > 0; edit-- {
		types := []string{}
		for _, n := range target.Nodes {
			types = append(types, n.Name)
		}
		for _, e := range target.Edges {
			types = append(types, e.Name)
		}
		typ := rapid.SampledFrom(types).Draw(t, "type")
		ps := propsPtr(&target, typ)
		switch op := rapid.IntRange(0, 8).Draw(t, "op"); {
		case op == 0 || len(*ps) == 0:
			name := rapid.SampledFrom(names).Draw(t, "add")
			if findProp(*ps, name) < 0 && findProp(s.propsOf(typ), name) < 0 && !renamedAway(renames, typ, name) {
				*ps = append(*ps, Property{Name: name, Kind: Int64})
			}
		case op == 1:
			i := rapid.IntRange(0, len(*ps)-1).Draw(t, "drop")
			if !renamedTo(renames, typ, (*ps)[i].Name) {
				*ps = append((*ps)[:i:i], (*ps)[i+1:]...)
			}
		case op == 2:
			i := rapid.IntRange(0, len(*ps)-1).Draw(t, "ren")
			to := rapid.SampledFrom(names).Draw(t, "to")
			if findProp(*ps, to) < 0 && !renamedAway(renames, typ, to) && !touched(renames, typ, (*ps)[i].Name) && findProp(s.propsOf(typ), (*ps)[i].Name) >= 0 {
				renames = append(renames, Rename{Type: typ, From: (*ps)[i].Name, To: to})
				(*ps)[i].Name = to
			}
		case op == 3:
			(*ps)[rapid.IntRange(0, len(*ps)-1).Draw(t, "loosen")].Required = false
		case op == 4 && len(target.Edges) > 0:
			target.Edges[0].Card = Card(0, uint32(rapid.IntRange(1, 3).Draw(t, "card")))
		case op == 5:
			name := rapid.SampledFrom([]string{"C", "D"}).Draw(t, "newtype")
			_, inTarget := target.Node(name)
			if _, inOld := s.Node(name); !inTarget && !inOld { // dropped this round and added back would be a change of the old type
				target.Nodes = append(target.Nodes, NodeType{Name: name, Props: []Property{{Name: "p", Kind: String, Required: true}}})
			}
		case op == 7:
			name := rapid.SampledFrom(names).Draw(t, "add-default")
			if findProp(*ps, name) < 0 && findProp(s.propsOf(typ), name) < 0 && !renamedAway(renames, typ, name) {
				*ps = append(*ps, Property{Name: name, Kind: Int64, Required: rapid.Bool().Draw(t, "required"), Default: "7"})
			}
		case op == 8:
			for i := range *ps {
				if (*ps)[i].Kind == Int32 {
					(*ps)[i].Kind = Int64
					break
				}
			}
		case op == 6:
			for i, n := range target.Nodes {
				if (n.Name == "C" || n.Name == "D") && !touchedType(renames, n.Name) {
					target.Nodes = append(target.Nodes[:i:i], target.Nodes[i+1:]...)
					break
				}
			}
		}
	}
	return target, renames
}

// randomTypeRename may rename one type of target (not one whose
// properties are renamed) to a name s does not have: a type rename keeps
// its table, and a type later added under the old name takes a fresh one.
func randomTypeRename(t *rapid.T, s, target Schema, renames []Rename) (Schema, []TypeRename) {
	if !rapid.Bool().Draw(t, "rename-type") {
		return target, nil
	}
	var types []string
	for _, n := range target.Nodes {
		types = append(types, n.Name)
	}
	for _, e := range target.Edges {
		types = append(types, e.Name)
	}
	from := rapid.SampledFrom(types).Draw(t, "renamed-type")
	to := from + "r"
	if _, inOld := s.TableOf(from); !inOld || touchedType(renames, from) || len(to) > MaxNameBytes {
		return target, nil
	}
	if _, taken := s.TableOf(to); taken {
		return target, nil
	}
	return RenameTypeNames(target, map[string]string{from: to}), []TypeRename{{From: from, To: to}}
}

func (s Schema) propsOf(typ string) []Property {
	p, _ := propsOf(s, typ)
	return p
}

func propsPtr(s *Schema, typ string) *[]Property {
	for i := range s.Nodes {
		if s.Nodes[i].Name == typ {
			return &s.Nodes[i].Props
		}
	}
	for i := range s.Edges {
		if s.Edges[i].Name == typ {
			return &s.Edges[i].Props
		}
	}
	return nil
}

func renamedAway(rs []Rename, typ, name string) bool {
	for _, r := range rs {
		if r.Type == typ && r.From == name {
			return true
		}
	}
	return false
}

func renamedTo(rs []Rename, typ, name string) bool {
	for _, r := range rs {
		if r.Type == typ && r.To == name {
			return true
		}
	}
	return false
}

func touched(rs []Rename, typ, name string) bool {
	return renamedAway(rs, typ, name) || renamedTo(rs, typ, name)
}

func touchedType(rs []Rename, typ string) bool {
	for _, r := range rs {
		if r.Type == typ {
			return true
		}
	}
	return false
}
