package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphkernel/graphkernel/internal/detlint"
	"pgregory.net/rapid"
)

func node(id string, kv ...any) *Row {
	r := &Row{ID: id, Props: map[string]any{}}
	for i := 0; i < len(kv); i += 2 {
		r.Props[kv[i].(string)] = kv[i+1]
	}
	return r
}

func edge(id, from, to string) *Row { return &Row{ID: id, From: from, To: to, Props: map[string]any{}} }

// TestResolveTable pins the row rule of the issue, row by row, and the
// property-level merge.
func TestResolveTable(t *testing.T) {
	a1 := node("a", "x", int64(1), "y", "p")
	cases := []struct {
		name    string
		in      Images
		want    *Row
		write   bool
		kinds   []Kind
		propsOf []string
	}{
		{"unchanged both", Images{a1, a1, a1}, a1, false, nil, nil},
		{"source unchanged, target changed", Images{a1, a1, node("a", "x", int64(2), "y", "p")}, node("a", "x", int64(2), "y", "p"), false, nil, nil},
		{"source unchanged, target deleted", Images{a1, a1, nil}, nil, false, nil, nil},
		{"source changed, target unchanged", Images{a1, node("a", "x", int64(3), "y", "p"), a1}, node("a", "x", int64(3), "y", "p"), true, nil, nil},
		{"source deleted, target unchanged", Images{a1, nil, a1}, nil, true, nil, nil},
		{"source inserted", Images{nil, a1, nil}, a1, true, nil, nil},
		{"target inserted", Images{nil, nil, a1}, a1, false, nil, nil},
		{"both deleted", Images{a1, nil, nil}, nil, false, nil, nil},
		{"both changed the same", Images{a1, node("a", "x", int64(5)), node("a", "x", int64(5))}, node("a", "x", int64(5)), false, nil, nil},
		{"both inserted the same", Images{nil, a1, a1}, a1, false, nil, nil},
		{"divergent insert", Images{nil, a1, node("a", "x", int64(9))}, nil, false, []Kind{DivergentInsert}, []string{""}},
		{"delete vs update", Images{a1, nil, node("a", "x", int64(9))}, nil, false, []Kind{DeleteVsUpdate}, []string{""}},
		{"update vs delete", Images{a1, node("a", "x", int64(9)), nil}, nil, false, []Kind{DeleteVsUpdate}, []string{""}},
		{"different properties", Images{a1, node("a", "x", int64(2), "y", "p"), node("a", "x", int64(1), "y", "q")},
			node("a", "x", int64(2), "y", "q"), true, nil, nil},
		{"same property, different values", Images{a1, node("a", "x", int64(2), "y", "p"), node("a", "x", int64(3), "y", "q")},
			nil, false, []Kind{DivergentUpdate}, []string{"x"}},
		{"two divergent properties", Images{a1, node("a", "x", int64(2), "y", "s"), node("a", "x", int64(3), "y", "t")},
			nil, false, []Kind{DivergentUpdate, DivergentUpdate}, []string{"x", "y"}},
		{"null vs empty string", Images{node("a"), node("a", "y", ""), node("a", "y", nil, "x", int64(1))},
			node("a", "y", "", "x", int64(1)), true, nil, nil},
		{"empty string vs empty bytes diverge", Images{node("a", "x", int64(1)), node("a", "x", int64(1), "b", ""), node("a", "x", int64(1), "b", []byte{})},
			nil, false, []Kind{DivergentUpdate}, []string{"b"}},
		{"set on one side, cleared to null on the other", Images{node("a", "y", "p"), node("a", "y", "q"), node("a")},
			nil, false, []Kind{DivergentUpdate}, []string{"y"}},
		{"endpoints changed differently", Images{edge("e", "n1", "n2"), edge("e", "n1", "n3"), edge("e", "n1", "n4")},
			nil, false, []Kind{DivergentUpdate}, []string{"to"}},
		{"endpoint on one side, property on the other", Images{edge("e", "n1", "n2"), edge("e", "n3", "n2"), &Row{ID: "e", From: "n1", To: "n2", Props: map[string]any{"w": 1.5}}},
			&Row{ID: "e", From: "n3", To: "n2", Props: map[string]any{"w": 1.5}}, true, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve("T", tc.in)
			var kinds []Kind
			var props []string
			for _, c := range got.Conflicts {
				kinds, props = append(kinds, c.Kind), append(props, c.Property)
				if c.Type != "T" || c.ID != anyID(tc.in.Base, tc.in.Source, tc.in.Target) || c.Message == "" {
					t.Errorf("conflict %+v does not name its type, id and reason", c)
				}
			}
			if d := cmp.Diff(tc.kinds, kinds); d != "" {
				t.Fatalf("conflicts %v: kinds (-want +got):\n%s", got.Conflicts, d)
			}
			if d := cmp.Diff(tc.propsOf, props); d != "" {
				t.Fatalf("conflicts %v: properties (-want +got):\n%s", got.Conflicts, d)
			}
			if tc.kinds != nil {
				return
			}
			if !Same(got.Row, tc.want) || got.Write != tc.write {
				t.Fatalf("resolved %+v write=%v, want %+v write=%v", got.Row, got.Write, tc.want, tc.write)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		base, src, tgt string
		want           Outcome
	}{
		{"b", "h", "h", AlreadyUpToDate},
		{"s", "s", "t", AlreadyUpToDate},
		{"t", "s", "t", FastForward},
		{"b", "s", "t", Merged},
	} {
		if got := Classify(tc.base, tc.src, tc.tgt); got != tc.want {
			t.Errorf("Classify(%s, %s, %s) = %v, want %v", tc.base, tc.src, tc.tgt, got, tc.want)
		}
	}
}

func TestChecks(t *testing.T) {
	exists := func(typ, id string) bool { return id != "gone" }
	cs := CheckEdge("Knows", "Person", "Person", *edge("e", "gone", "gone"), exists)
	if len(cs) != 2 || cs[0].Kind != OrphanEdge || cs[0].Property != "from" || cs[1].Property != "to" {
		t.Fatalf("orphan checks: %v", cs)
	}
	if cs := CheckEdge("Knows", "Person", "Person", *edge("e", "a", "b"), exists); cs != nil {
		t.Fatalf("orphan checks of a whole edge: %v", cs)
	}
	target := []Row{*edge("e1", "a", "b"), *edge("e2", "a", "c")}
	merged := map[string]*Row{"e1": nil, "e3": edge("e3", "a", "d"), "e4": edge("e4", "z", "d"), "e2": edge("e2", "a", "x")}
	if n := OutDegree("a", target, merged); n != 2 {
		t.Fatalf("out-degree %d, want 2 (e2 moved, e3 added, e1 deleted)", n)
	}
	if cs := CheckDegree("Knows", "a", 3, false, "0..2"); len(cs) != 1 || cs[0].Kind != CardinalityViolation {
		t.Fatalf("degree check: %v", cs)
	}
}

func TestSortConflicts(t *testing.T) {
	cs := []Conflict{{Kind: OrphanEdge, Type: "b", ID: "1"}, {Kind: DivergentUpdate, Type: "a", ID: "2", Property: "y"},
		{Kind: DivergentUpdate, Type: "a", ID: "2", Property: "x"}, {Kind: DivergentInsert, Type: "a", ID: "1"}}
	SortConflicts(cs)
	want := []string{"a/1/", "a/2/x", "a/2/y", "b/1/"}
	for i, c := range cs {
		if got := c.Type + "/" + c.ID + "/" + c.Property; got != want[i] {
			t.Fatalf("order %d: %s, want %s", i, got, want[i])
		}
	}
}

// side is a random edit of one row relative to the base: keep, delete, or
// set some properties.
func genRow(t *rapid.T, label string, id string) *Row {
	if rapid.IntRange(0, 4).Draw(t, label+"absent") == 0 {
		return nil
	}
	r := node(id)
	for _, p := range []string{"x", "y", "z"} {
		switch rapid.IntRange(0, 3).Draw(t, label+p) {
		case 1:
			r.Props[p] = ""
		case 2:
			r.Props[p] = int64(rapid.IntRange(0, 2).Draw(t, label+p+"v"))
		case 3:
			r.Props[p] = []byte{}
		}
	}
	return r
}

// TestResolveProperties: for random images, (1) swapping source and target
// gives the same conflicts and, without conflicts, the same row (the rule
// is symmetric); (2) an unconflicted result takes, for every property, the
// value of a side that changed it, or the base value when neither did;
// (3) the result equals the target exactly when Write is false.
func TestResolveProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := Images{genRow(t, "b", "a"), genRow(t, "s", "a"), genRow(t, "t", "a")}
		if in.Base == nil && in.Source == nil && in.Target == nil {
			return
		}
		r := Resolve("T", in)
		sw := Resolve("T", Images{in.Base, in.Target, in.Source})
		if len(r.Conflicts) != len(sw.Conflicts) {
			t.Fatalf("asymmetric conflicts: %v vs %v", r.Conflicts, sw.Conflicts)
		}
		if len(r.Conflicts) > 0 {
			return
		}
		if !Same(r.Row, sw.Row) {
			t.Fatalf("asymmetric result: %+v vs %+v", r.Row, sw.Row)
		}
		if r.Write == Same(r.Row, in.Target) {
			t.Fatalf("Write=%v but result equal to target is %v", r.Write, Same(r.Row, in.Target))
		}
		if r.Row != nil && in.Base != nil && in.Source != nil && in.Target != nil {
			for _, p := range []string{"x", "y", "z"} {
				b, s, tg, got := in.Base.Props[p], in.Source.Props[p], in.Target.Props[p], r.Row.Props[p]
				want := b
				if !ValuesEqual(s, b) {
					want = s
				} else if !ValuesEqual(tg, b) {
					want = tg
				}
				if !ValuesEqual(got, want) {
					t.Fatalf("property %s: got %v, want %v (base %v source %v target %v)", p, got, want, b, s, tg)
				}
			}
		}
	})
}

// TestDeterministic pins the determinism rule for the package.
func TestDeterministic(t *testing.T) {
	for _, tags := range detlint.TagSets {
		findings, err := detlint.Check(".", detlint.Options{Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			t.Errorf("%v %s", tags, f)
		}
	}
}
