package merge

import (
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// handWritten is s as a person would write it: no @col, no @retired.
func handWritten(s schema.Schema) schema.Schema {
	s = s.Normalized()
	for i := range s.Nodes {
		s.Nodes[i].Retired, s.Nodes[i].Table = nil, ""
		for j := range s.Nodes[i].Props {
			s.Nodes[i].Props[j].Column = ""
		}
	}
	for i := range s.Edges {
		s.Edges[i].Retired, s.Edges[i].Table = nil, ""
		for j := range s.Edges[i].Props {
			s.Edges[i].Props[j].Column = ""
		}
	}
	return s
}

// evolveRandomly applies a few random schema changes (schema.EvolveTypes)
// to s: add, drop, rename or loosen a property, re-bound the edge, add a
// type, rename a type (to its name and the side's label: two sides never
// pick one new name).
func evolveRandomly(t *rapid.T, label string, s schema.Schema) schema.Schema {
	for step := rapid.IntRange(0, 4).Draw(t, label+"steps"); step > 0; step-- {
		target := handWritten(s)
		var renames []schema.Rename
		var types []schema.TypeRename
		props := func(typ string) *[]schema.Property {
			for i := range target.Nodes {
				if target.Nodes[i].Name == typ {
					return &target.Nodes[i].Props
				}
			}
			for i := range target.Edges {
				if target.Edges[i].Name == typ {
					return &target.Edges[i].Props
				}
			}
			return nil
		}
		var all []string
		for _, n := range target.Nodes {
			all = append(all, n.Name)
		}
		for _, e := range target.Edges {
			all = append(all, e.Name)
		}
		typ := rapid.SampledFrom(all).Draw(t, label+"type")
		ps := props(typ)
		names := []string{"p", "q", "r", "x", "y"}
		switch op := rapid.IntRange(0, 6).Draw(t, label+"op"); {
		case op == 6: // rename the type
			to := typ + label
			if _, taken := s.TableOf(to); taken || len(to) > schema.MaxNameBytes {
				continue
			}
			target = schema.RenameTypeNames(target, map[string]string{typ: to})
			types = []schema.TypeRename{{From: typ, To: to}}
		case op == 0 || len(*ps) == 0: // add
			name := rapid.SampledFrom(names).Draw(t, label+"add")
			if findProp(*ps, name) >= 0 {
				continue
			}
			kind := rapid.SampledFrom([]schema.Kind{schema.String, schema.Int64}).Draw(t, label+"kind")
			*ps = append(*ps, schema.Property{Name: name, Kind: kind})
		case op == 1: // drop
			i := rapid.IntRange(0, len(*ps)-1).Draw(t, label+"drop")
			*ps = append((*ps)[:i:i], (*ps)[i+1:]...)
		case op == 2: // rename
			i := rapid.IntRange(0, len(*ps)-1).Draw(t, label+"ren")
			to := rapid.SampledFrom(names).Draw(t, label+"to")
			if findProp(*ps, to) >= 0 {
				continue
			}
			renames = []schema.Rename{{Type: typ, From: (*ps)[i].Name, To: to}}
			(*ps)[i].Name = to
		case op == 3: // loosen
			i := rapid.IntRange(0, len(*ps)-1).Draw(t, label+"loosen")
			(*ps)[i].Required = false
		case op == 4: // re-bound
			target.Edges[0].Card = schema.Card(0, uint32(rapid.IntRange(0, 2).Draw(t, label+"card")))
		default: // add a type
			name := rapid.SampledFrom([]string{"C", "D"}).Draw(t, label+"newtype")
			if _, ok := target.Node(name); !ok {
				target.Nodes = append(target.Nodes, schema.NodeType{Name: name, Props: []schema.Property{{Name: "p", Kind: schema.String}}})
			}
		}
		plan, err := schema.EvolveTypes(s, target, types, renames)
		if err != nil {
			t.Fatalf("evolve: %v\n%s", err, target)
		}
		s = plan.New
	}
	return s
}

// columns lists a type's live columns (column -> kind) and retired ones.
func columns(s schema.Schema, typ string) (map[string]schema.Kind, map[string]bool, bool) {
	d, ok := lookup(s, typ)
	if !ok {
		return nil, nil, false
	}
	live := map[string]schema.Kind{}
	for _, p := range d.props {
		live[p.StorageColumn()] = p.Kind
	}
	return live, setOf(d.retired), true
}

func conflictRules(cs []Conflict) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s", c.Rule, c.Type))
	}
	sort.Strings(out)
	return out
}

// TestMergeSchemasProperties (rapid): two sides evolved randomly from one
// base. Swapping them gives the same conflicts (by rule and type) and,
// without conflicts, the same types and properties; a merged schema
// validates and reads every side's fragments: every column any side's
// type holds (live or retired) is, in the merged type, live with the same
// kind or retired.
func TestMergeSchemasProperties(t *testing.T) {
	base, err := schema.Parse([]byte(`node A { x: string y: int64? } node B { z: bool? } edge E: A -> B { w: int64? }`))
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		src, tgt := evolveRandomly(t, "s", base), evolveRandomly(t, "t", base)
		m := MergeSchemas(SchemaInput{Base: base, Source: src, Target: tgt})
		w := MergeSchemas(SchemaInput{Base: base, Source: tgt, Target: src})
		if a, b := conflictRules(m.Conflicts), conflictRules(w.Conflicts); !cmp.Equal(a, b) {
			t.Fatalf("conflicts %v one way, %v the other", m.Conflicts, w.Conflicts)
		}
		if len(m.Conflicts) > 0 {
			return
		}
		if err := m.Schema.Validate(); err != nil {
			t.Fatalf("merged schema invalid: %v", err)
		}
		for _, side := range []schema.Schema{base, src, tgt} {
			for _, typ := range tableNames(side) {
				live, retired, ok := columns(side, typ)
				mLive, mRetired, inMerged := columns(m.Schema, typ)
				if !ok || !inMerged {
					continue
				}
				for c, k := range live {
					if mk, ok := mLive[c]; !(ok && mk == k) && !mRetired[c] {
						t.Fatalf("%s column %s (%s) neither live with its kind nor retired in the merge:\n%s", typ, c, k, m.Schema)
					}
				}
				for c := range retired {
					if !mRetired[c] {
						t.Fatalf("%s retired column %s is not retired in the merge:\n%s", typ, c, m.Schema)
					}
				}
			}
		}
		for _, typ := range tableNames(m.Schema) {
			a, _ := lookup(m.Schema, typ)
			b, _ := lookup(w.Schema, typ)
			sortProps := func(d tdef) tdef {
				d = d.canon()
				sort.Slice(d.props, func(i, j int) bool { return d.props[i].Column < d.props[j].Column })
				return d
			}
			if !cmp.Equal(sortProps(a), sortProps(b), cmp.AllowUnexported(tdef{})) {
				t.Fatalf("%s merges to %+v one way, %+v the other", typ, a, b)
			}
		}
		if !cmp.Equal(tableNames(m.Schema), tableNames(w.Schema)) {
			t.Fatalf("types %v one way, %v the other", tableNames(m.Schema), tableNames(w.Schema))
		}
	})
}

func findProp(props []schema.Property, name string) int {
	for i, p := range props {
		if p.Name == name {
			return i
		}
	}
	return -1
}
