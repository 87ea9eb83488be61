package schema

import (
	"errors"
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"
)

func req(name string, k Kind) Property { return Property{Name: name, Kind: k, Required: true} }
func opt(name string, k Kind) Property { return Property{Name: name, Kind: k} }

// social is a valid schema used across the tests.
func social() Schema {
	return Schema{
		Nodes: []NodeType{
			{Name: "Person", Props: []Property{req("name", String), opt("age", Int64)}},
			{Name: "Company", Props: []Property{req("name", String)}},
		},
		Edges: []EdgeType{
			{Name: "WorksAt", From: "Person", To: "Company", Props: []Property{opt("since", Timestamp)}, Card: Card(0, 1)},
			{Name: "Knows", From: "Person", To: "Person"},
		},
	}
}

// TestValidate pins every schema rule: each case breaks exactly one rule
// and must be rejected with a ValidationError naming the culprit.
func TestValidate(t *testing.T) {
	many := Schema{}
	for i := 0; i <= MaxTypes; i++ {
		many.Nodes = append(many.Nodes, NodeType{Name: "N" + strings.Repeat("x", i%10) + string(rune('a'+i%26)) + itoa(i)})
	}
	wide := NodeType{Name: "Wide"}
	for i := 0; i <= MaxPropsPerType; i++ {
		wide.Props = append(wide.Props, opt("p"+itoa(i), Int64))
	}
	cases := []struct {
		name     string
		mutate   func(s *Schema)
		wantType string
		wantProp string
		wantMsg  string
	}{
		{"valid", func(s *Schema) {}, "", "", ""},
		{"too many types", func(s *Schema) { *s = many }, "", "", "more than the limit"},
		{"too many props", func(s *Schema) { s.Nodes = append(s.Nodes, wide) }, "Wide", "", "properties, more than the limit"},
		{"empty type name", func(s *Schema) { s.Nodes[0].Name = "" }, "", "", "name is empty"},
		{"type name starts with _", func(s *Schema) { s.Nodes[1].Name = "_Co" }, "_Co", "", "must start with an ASCII letter"},
		{"type name bad char", func(s *Schema) { s.Nodes[1].Name = "Co-op" }, "Co-op", "", "invalid character"},
		{"type name too long", func(s *Schema) { s.Nodes[1].Name = strings.Repeat("C", MaxNameBytes+1) }, strings.Repeat("C", MaxNameBytes+1), "", "longer than"},
		{"type name keyword", func(s *Schema) { s.Nodes[1].Name = "edge" }, "edge", "", "reserved keyword"},
		{"duplicate node names", func(s *Schema) { s.Nodes[1].Name = "Person" }, "Person", "", "duplicate type name"},
		{"edge name equals node name", func(s *Schema) { s.Edges[1].Name = "Person" }, "Person", "", "duplicate type name"},
		{"duplicate edge names", func(s *Schema) { s.Edges[1].Name = "WorksAt" }, "WorksAt", "", "duplicate type name"},
		{"prop reserved id", func(s *Schema) { s.Nodes[0].Props[1].Name = "id" }, "Person", "id", "reserved"},
		{"prop reserved from", func(s *Schema) { s.Edges[0].Props[0].Name = "from" }, "WorksAt", "from", "reserved"},
		{"prop reserved to", func(s *Schema) { s.Nodes[0].Props[1].Name = "to" }, "Person", "to", "reserved"},
		{"prop starts with _", func(s *Schema) { s.Nodes[0].Props[1].Name = "_x" }, "Person", "_x", "must start with an ASCII letter"},
		{"duplicate prop", func(s *Schema) { s.Nodes[0].Props[1].Name = "name" }, "Person", "name", "duplicate property"},
		{"invalid kind", func(s *Schema) { s.Nodes[0].Props[1].Kind = 0 }, "Person", "age", "invalid kind"},
		{"kind out of range", func(s *Schema) { s.Nodes[0].Props[1].Kind = lastKind + 1 }, "Person", "age", "invalid kind"},
		{"edge from unknown", func(s *Schema) { s.Edges[0].From = "Persn" }, "WorksAt", "", "from type \"Persn\""},
		{"edge to unknown", func(s *Schema) { s.Edges[0].To = "Acme" }, "WorksAt", "", "to type \"Acme\""},
		{"edge to an edge type", func(s *Schema) { s.Edges[0].To = "Knows" }, "WorksAt", "", "is not a node type"},
		{"card min > max", func(s *Schema) { s.Edges[0].Card = Card(2, 1) }, "WorksAt", "", "min > max"},
		{"card max too big", func(s *Schema) { s.Edges[0].Card = Card(0, MaxCardinality+1) }, "WorksAt", "", "exceeds the limit"},
		{"card min too big", func(s *Schema) { s.Edges[0].Card = Card(MaxCardinality+1, Unbounded) }, "WorksAt", "", "exceeds the limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := social()
			tc.mutate(&s)
			err := s.Validate()
			if tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Validate = %v, want a *ValidationError matching ErrInvalidSchema", err)
			}
			if ve.Type != tc.wantType || ve.Prop != tc.wantProp || !strings.Contains(ve.Msg, tc.wantMsg) {
				t.Fatalf("Validate = {Type %q Prop %q Msg %q}, want {%q %q ~%q}", ve.Type, ve.Prop, ve.Msg, tc.wantType, tc.wantProp, tc.wantMsg)
			}
			if _, err := s.Contract(); !errors.Is(err, ErrInvalidSchema) {
				t.Fatalf("Contract of an invalid schema = %v, want ErrInvalidSchema", err)
			}
		})
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestCardinality pins Allows for bounded, min-only and default cards.
func TestCardinality(t *testing.T) {
	cases := []struct {
		c    Cardinality
		n    uint64
		want bool
	}{
		{Card(0, 1), 0, true}, {Card(0, 1), 1, true}, {Card(0, 1), 2, false},
		{Card(1, 3), 0, false}, {Card(1, 3), 3, true}, {Card(1, 3), 4, false},
		{Card(2, Unbounded), 1, false}, {Card(2, Unbounded), 1 << 40, true},
		{Cardinality{}, 0, true}, {Cardinality{}, 1 << 40, true},
	}
	for _, tc := range cases {
		if got := tc.c.Allows(tc.n); got != tc.want {
			t.Errorf("%s.Allows(%d) = %v, want %v", tc.c, tc.n, got, tc.want)
		}
	}
}

// TestLookup pins Node, Edge and EdgesTouching.
func TestLookup(t *testing.T) {
	s := social()
	if n, ok := s.Node("Company"); !ok || n.Name != "Company" {
		t.Fatalf("Node(Company) = %v, %v", n, ok)
	}
	if _, ok := s.Node("WorksAt"); ok {
		t.Fatal("Node(WorksAt) found an edge type")
	}
	if e, ok := s.Edge("WorksAt"); !ok || e.Card != Card(0, 1) {
		t.Fatalf("Edge(WorksAt) = %v, %v", e, ok)
	}
	if got, want := s.EdgesTouching("Person"), []string{"Knows", "WorksAt"}; !cmp.Equal(got, want) {
		t.Fatalf("EdgesTouching(Person) = %v, want %v\ndiff (-got +want):\n%s", got, want, cmp.Diff(got, want))
	}
	if got := s.EdgesTouching("Nobody"); len(got) != 0 {
		t.Fatalf("EdgesTouching(Nobody) = %v", got)
	}
}
