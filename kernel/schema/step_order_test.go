package schema

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// naming is what a consumer of steps holds of a schema: each type's name,
// its storage table and its properties' names and storage columns.
type naming map[string]namedType

type namedType struct {
	table string
	props map[string]string // property name -> storage column
}

func namingOf(s Schema) naming {
	out := naming{}
	s = s.Normalized()
	for _, n := range s.Nodes {
		out[n.Name] = namedType{table: n.StorageTable(), props: propColumns(n.Props)}
	}
	for _, e := range s.Edges {
		out[e.Name] = namedType{table: e.StorageTable(), props: propColumns(e.Props)}
	}
	return out
}

func propColumns(props []Property) map[string]string {
	out := map[string]string{}
	for _, p := range props {
		out[p.Name] = p.StorageColumn()
	}
	return out
}

// replaySteps applies steps one after the other to the naming of old,
// each step naming types and properties as the steps before it left them
// (an added type takes new's table and properties), and refuses a step
// that names something absent or takes a name held.
func replaySteps(old, new Schema, steps []Step) (naming, error) {
	m, target := namingOf(old), namingOf(new)
	for i, st := range steps {
		if err := replayStep(m, target, st); err != nil {
			return nil, fmt.Errorf("step %d %s: %w", i, st, err)
		}
	}
	return m, nil
}

func replayStep(m, target naming, st Step) error {
	t, held := m[st.Type]
	switch st.Op {
	case AddNode, AddEdge:
		if held {
			return fmt.Errorf("type %s already held", st.Type)
		}
		m[st.Type] = namedType{table: target[st.Type].table, props: maps.Clone(target[st.Type].props)}
		return nil
	case RenameType:
		from, ok := m[st.From]
		if !ok || held || from.table != st.Table {
			return fmt.Errorf("type %s (held %v) -> %s (held %v)", st.From, ok, st.Type, held)
		}
		m[st.Type] = from
		delete(m, st.From)
		return nil
	}
	if !held {
		return fmt.Errorf("type %s not held", st.Type)
	}
	switch st.Op {
	case DropType:
		delete(m, st.Type)
	case AddProp:
		if _, ok := t.props[st.Prop]; ok {
			return fmt.Errorf("property %s already held", st.Prop)
		}
		t.props[st.Prop] = st.Column
	case DropProp:
		if c, ok := t.props[st.Prop]; !ok || c != st.Column {
			return fmt.Errorf("property %s not held in column %s", st.Prop, st.Column)
		}
		delete(t.props, st.Prop)
	case RenameProp:
		c, ok := t.props[st.From]
		if _, taken := t.props[st.Prop]; !ok || c != st.Column || taken {
			return fmt.Errorf("property %s (held %v) -> %s (held %v)", st.From, ok, st.Prop, taken)
		}
		t.props[st.Prop] = c
		delete(t.props, st.From)
	case LoosenProp, WidenProp:
		if _, ok := t.props[st.Prop]; !ok {
			return fmt.Errorf("property %s not held", st.Prop)
		}
	}
	return nil
}

func sameNaming(a, b naming) bool {
	return maps.EqualFunc(a, b, func(x, y namedType) bool { return x.table == y.table && maps.Equal(x.props, y.props) })
}

// TestCompareStepsReplayInOrder: for any two schemas of one lineage
// (random evolutions, property and type renames included, either
// direction), applying Compare's steps one after the other to the older
// naming — each step naming types and properties as the steps before it
// left them — never names something absent or takes a held name, and
// ends at the newer naming (every type's table, every property's
// column). Red before the steps were ordered for replay: a rename onto a
// dropped name came before the drop, a swap had no free name, an added
// type came before the rename that freed its name.
func TestCompareStepsReplayInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, err := Parse([]byte("node A { p: string q: int64? w: int32? }\nnode B { p: string? }\nedge E: A -> B { r: int64? }\n"))
		if err != nil {
			t.Fatal(err)
		}
		history := []Schema{s}
		for round := rapid.IntRange(1, 8).Draw(t, "rounds"); round > 0; round-- {
			s = randomPlan(t, s).New
			history = append(history, s)
		}
		i := rapid.IntRange(0, len(history)-1).Draw(t, "from")
		j := rapid.IntRange(0, len(history)-1).Draw(t, "to")
		old, new := history[i], history[j]
		steps := Compare(old, new)
		got, err := replaySteps(old, new, steps)
		if err != nil {
			t.Fatalf("%v\nsteps %q\nold:\n%s\nnew:\n%s", err, stepStrings(steps), old, new)
		}
		if want := namingOf(new); !sameNaming(got, want) {
			t.Fatalf("replayed naming %v, want %v\nsteps %q", got, want, stepStrings(steps))
		}
	})
}

// TestStepsReplayInOrderTable pins the orders on the minimal cases.
func TestStepsReplayInOrderTable(t *testing.T) {
	parse := func(text string) Schema {
		s, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name     string
		old, new string
		want     []string
	}{
		{"rename onto a dropped name", "node P { a: string? b: string? }", "node P { b: string? @col(a) }",
			[]string{"drop-property P.b", "rename-property P.a -> b"}},
		{"add a dropped name", "node P { a: string? }", "node P @retired(a) { a: string? @col(a_2) }",
			[]string{"drop-property P.a", "add-property P.a"}},
		{"chain", "node P { a: string? b: string? }", "node P { b: string? @col(a) c: string? @col(b) }",
			[]string{"rename-property P.b -> c", "rename-property P.a -> b"}},
		{"swap", "node P { a: string? b: string? }", "node P { b: string? @col(a) a: string? @col(b) }",
			[]string{"rename-property P.a -> a_2", "rename-property P.b -> a", "rename-property P.a_2 -> b"}},
		{"type renamed onto a dropped type", "node A { x: string? }\nnode B { y: string? }", "node A @table(B) { y: string? }",
			[]string{"drop-type A", "rename-type B -> A"}},
		{"type added under a renamed type's old name", "node A { x: string? }", "node A @table(A_2) { x: string? }\nnode Z @table(A) { x: string? }",
			[]string{"rename-type A -> Z", "add-node A"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, new := parse(tc.old), parse(tc.new)
			steps := Compare(old, new)
			var got []string
			for _, st := range steps {
				got = append(got, st.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Compare = %q, want %q", got, tc.want)
			}
			if _, err := replaySteps(old, new, steps); err != nil {
				t.Fatal(err)
			}
		})
	}
}
