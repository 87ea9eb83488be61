package datamodel

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

const testSchema = `node Person { name: string }
node Company { name: string }
edge WorksAt: Person -> Company @card(0..1) {}
edge Knows: Person -> Person {}
`

func seeded(t *testing.T) *State {
	t.Helper()
	s, err := schema.Parse([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(&s).Apply([]Op{
		{Upsert, "Person", Row{ID: "p1", Props: map[string]any{"name": "ann"}}},
		{Upsert, "Person", Row{ID: "p2", Props: map[string]any{"name": "bob"}}},
		{Upsert, "Company", Row{ID: "c1", Props: map[string]any{"name": "acme"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err = st.Apply([]Op{
		{Insert, "WorksAt", Row{ID: "w1", From: "p1", To: "c1"}},
		{Insert, "Knows", Row{ID: "k1", From: "p1", To: "p2"}},
		{Insert, "Knows", Row{ID: "k2", From: "p2", To: "p1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestApplyRules: each rule the data plane enforces at Commit refuses the
// transaction in the model too, and a refused Apply leaves the state as it
// was.
func TestApplyRules(t *testing.T) {
	cases := []struct {
		name string
		ops  []Op
	}{
		{"insert of an existing id", []Op{{Insert, "Person", Row{ID: "p1"}}}},
		{"update of a missing id", []Op{{Update, "Person", Row{ID: "p9"}}}},
		{"delete of a missing id", []Op{{Delete, "Knows", Row{ID: "k9"}}}},
		{"plain delete of a node with edges", []Op{{Delete, "Person", Row{ID: "p2"}}}},
		{"edge to a missing node", []Op{{Insert, "Knows", Row{ID: "k3", From: "p1", To: "p9"}}}},
		{"@card 0..1 exceeded", []Op{{Insert, "Company", Row{ID: "c2"}}, {Insert, "WorksAt", Row{ID: "w2", From: "p1", To: "c2"}}}},
		{"unknown type", []Op{{Upsert, "Robot", Row{ID: "r1"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := seeded(t)
			if _, err := st.Apply(tc.ops); !errors.Is(err, ErrRejected) {
				t.Fatalf("Apply = %v, want ErrRejected", err)
			}
			if got := strings.Join(IDs(st.Rows("Knows")), ","); got != "k1,k2" {
				t.Fatalf("a refused Apply changed the state: Knows = %s", got)
			}
		})
	}
}

// TestCascadeAndReads: a cascade removes the node's edges of every type,
// both directions, and the reads answer from what is left.
func TestCascadeAndReads(t *testing.T) {
	st := seeded(t)
	after, err := st.Apply([]Op{{DeleteCascade, "Person", Row{ID: "p1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, et := range []string{"WorksAt", "Knows"} {
		if rows := after.Rows(et); len(rows) != 0 {
			t.Fatalf("%s after the cascade: %v", et, IDs(rows))
		}
	}
	if got := strings.Join(IDs(st.Out("Knows", "p1")), ","); got != "k1" || st.InDegree("Knows", "p1") != 1 || st.OutDegree("WorksAt", "p2") != 0 {
		t.Fatalf("Out(Knows, p1) = %s, InDegree = %d", got, st.InDegree("Knows", "p1"))
	}
	if got := strings.Join(IDs(st.GetMany("Person", []string{"p2", "x", "p1", "p2"})), ","); got != "p1,p2" {
		t.Fatalf("GetMany = %s", got)
	}
	e := pred.Or(pred.Eq("name", "bob"), pred.Eq("id", "p1"))
	rows, err := st.ScanWhere("Person", &e)
	if err != nil || strings.Join(IDs(rows), ",") != "p1,p2" {
		t.Fatalf("ScanWhere(%v) = %v, %v", e, IDs(rows), err)
	}
	e = pred.Eq("to", "p1")
	if rows, err = st.ScanWhere("Knows", &e); err != nil || strings.Join(IDs(rows), ",") != "k2" {
		t.Fatalf("ScanWhere(%v) = %v, %v", e, IDs(rows), err)
	}
	bad := pred.Eq("age", 3)
	if _, err := st.ScanWhere("Person", &bad); !errors.Is(err, pred.ErrUnknownProperty) {
		t.Fatalf("unknown property: %v", err)
	}
}
