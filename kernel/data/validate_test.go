package data

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// tx is one staged call of a validation case.
type tx struct {
	op      Op
	typ     string
	rows    []Row
	ids     []string // deletes
	cascade bool
}

func stage(s *staging, c tx) error {
	if c.op == OpDelete {
		return s.stageDeletes(c.typ, c.ids, c.cascade)
	}
	return s.stageRows(c.op, c.typ, c.rows)
}

// baseGraph: p1 works at c1; p1 knows p2; p1 reports to p2 (Reports 0..2).
func baseGraph() map[string][]Row {
	return map[string][]Row{
		"Person":  {person("p1", "ann"), person("p2", "bob"), person("p3", "cy")},
		"Company": {company("c1"), company("c2")},
		"WorksAt": {edge("w1", "p1", "c1")},
		"Knows":   {edge("k1", "p1", "p2")},
		"Reports": {edge("r1", "p1", "p2")},
	}
}

func withHead(table string, rows ...Row) map[string][]Row {
	h := baseGraph()
	h[table] = append(h[table], rows...)
	return map[string][]Row{table: h[table]}
}

// TestValidateRules pins every validation rule: each case would pass if
// its rule were removed (it is otherwise a valid transaction), so each goes
// red without the code it names.
func TestValidateRules(t *testing.T) {
	ok := error(nil)
	cases := []struct {
		name  string
		head  map[string][]Row // live HEAD overrides; default = base
		calls []tx
		stage error // rejection at staging (before any I/O)
		want  error // rejection at validation
	}{
		// Types and required fields (staging).
		{name: "valid insert", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("p9", "zed")}}}, want: ok},
		{name: "unknown type", calls: []tx{{op: OpInsert, typ: "Robot", rows: []Row{person("x", "y")}}}, stage: ErrUnknownType},
		{name: "required missing", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{{ID: "p9"}}}}, stage: ErrInvalidRow},
		{name: "required null", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{{ID: "p9", Props: map[string]any{"name": nil}}}}}, stage: ErrInvalidRow},
		{name: "wrong go type", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{{ID: "p9", Props: map[string]any{"name": "z", "age": "old"}}}}}, stage: ErrInvalidRow},
		{name: "int32 is not int64", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{{ID: "p9", Props: map[string]any{"name": "z", "age": int32(3)}}}}}, stage: ErrInvalidRow},
		{name: "unknown property", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{{ID: "p9", Props: map[string]any{"name": "z", "height": 2.0}}}}}, stage: ErrInvalidRow},
		{name: "property named like a key", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{{ID: "p9", Props: map[string]any{"name": "z", "id": "x"}}}}}, stage: ErrInvalidRow},
		{name: "empty id", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("", "z")}}}, stage: ErrInvalidRow},
		{name: "long id", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person(strings.Repeat("x", MaxIDBytes+1), "z")}}}, stage: ErrInvalidRow},
		{name: "invalid utf8", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("p9", "\xff")}}}, stage: ErrInvalidRow},
		{name: "timestamp out of range", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{{ID: "p9", Props: map[string]any{"name": "z", "born": time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}}}}}, stage: ErrInvalidRow},
		{name: "edge without from", calls: []tx{{op: OpInsert, typ: "Knows", rows: []Row{edge("k9", "", "p2")}}}, stage: ErrInvalidRow},
		{name: "node with endpoints", calls: []tx{{op: OpInsert, typ: "Company", rows: []Row{{ID: "c9", From: "p1", Props: map[string]any{"name": "n"}}}}}, stage: ErrInvalidRow},
		{name: "delete bad id", calls: []tx{{op: OpDelete, typ: "Knows", ids: []string{""}}}, stage: ErrInvalidRow},

		// Mixing constructive and destructive (staging).
		{name: "insert then delete", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("p9", "z")}}, {op: OpDelete, typ: "Knows", ids: []string{"k1"}}}, stage: ErrMixedTransaction},
		{name: "delete then upsert", calls: []tx{{op: OpDelete, typ: "Knows", ids: []string{"k1"}}, {op: OpUpsert, typ: "Person", rows: []Row{person("p1", "z")}}}, stage: ErrMixedTransaction},

		// Duplicates within the batch.
		{name: "duplicate in one call", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("p9", "a"), person("p9", "b")}}}, want: ErrDuplicateID},
		{name: "duplicate across ops", calls: []tx{{op: OpUpsert, typ: "Person", rows: []Row{person("p1", "a")}}, {op: OpUpdate, typ: "Person", rows: []Row{person("p1", "b")}}}, want: ErrDuplicateID},
		{name: "duplicate delete", calls: []tx{{op: OpDelete, typ: "Knows", ids: []string{"k1", "k1"}}}, want: ErrDuplicateID},
		{name: "same id in two tables is fine", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("x9", "a")}}, {op: OpInsert, typ: "Company", rows: []Row{company("x9")}}}, want: ok},

		// Existence against the table's live HEAD.
		{name: "insert existing", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("p2", "b")}}}, want: ErrIDExists},
		{name: "insert existing only at live head", head: withHead("Person", person("p9", "z")), calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("p9", "b")}}}, want: ErrIDExists},
		{name: "upsert existing", calls: []tx{{op: OpUpsert, typ: "Person", rows: []Row{person("p2", "b")}}}, want: ok},
		{name: "update missing", calls: []tx{{op: OpUpdate, typ: "Person", rows: []Row{person("p9", "b")}}}, want: ErrIDMissing},
		{name: "update existing", calls: []tx{{op: OpUpdate, typ: "Person", rows: []Row{person("p2", "b")}}}, want: ok},
		{name: "delete missing", calls: []tx{{op: OpDelete, typ: "Knows", ids: []string{"k9"}}}, want: ErrIDMissing},

		// Edge endpoints: base plus pending, never placeholders.
		{name: "from missing", calls: []tx{{op: OpInsert, typ: "Knows", rows: []Row{edge("k9", "p9", "p2")}}}, want: ErrDanglingEdge},
		{name: "to missing", calls: []tx{{op: OpInsert, typ: "Knows", rows: []Row{edge("k9", "p1", "p9")}}}, want: ErrDanglingEdge},
		{name: "to of the wrong type", calls: []tx{{op: OpInsert, typ: "WorksAt", rows: []Row{edge("w9", "p2", "p3")}}}, want: ErrDanglingEdge},
		{name: "endpoint only at live head", head: withHead("Person", person("p9", "z")), calls: []tx{{op: OpInsert, typ: "Knows", rows: []Row{edge("k9", "p9", "p2")}}}, want: ErrDanglingEdge},
		{name: "endpoint pending", calls: []tx{{op: OpInsert, typ: "Person", rows: []Row{person("p9", "z")}}, {op: OpInsert, typ: "Knows", rows: []Row{edge("k9", "p9", "p2")}}}, want: ok},
		{name: "upserted edge endpoints", calls: []tx{{op: OpUpsert, typ: "Knows", rows: []Row{edge("k1", "p1", "p9")}}}, want: ErrDanglingEdge},

		// Cardinality against the live HEAD plus pending.
		{name: "card max by pending", calls: []tx{{op: OpInsert, typ: "WorksAt", rows: []Row{edge("w8", "p2", "c1"), edge("w9", "p2", "c2")}}}, want: ErrCardinality},
		{name: "card max by base", calls: []tx{{op: OpInsert, typ: "WorksAt", rows: []Row{edge("w9", "p1", "c2")}}}, want: ErrCardinality},
		{name: "card max by live head only", head: withHead("WorksAt", edge("w5", "p2", "c1")), calls: []tx{{op: OpInsert, typ: "WorksAt", rows: []Row{edge("w9", "p2", "c2")}}}, want: ErrCardinality},
		{name: "card upsert replaces, not adds", calls: []tx{{op: OpUpsert, typ: "WorksAt", rows: []Row{edge("w1", "p1", "c2")}}}, want: ok},
		{name: "card move edge to full source", calls: []tx{{op: OpUpdate, typ: "WorksAt", rows: []Row{edge("w1", "p1", "c2")}}, {op: OpInsert, typ: "WorksAt", rows: []Row{edge("w9", "p2", "c2")}}}, want: ok},
		{name: "card within bounds", calls: []tx{{op: OpInsert, typ: "Reports", rows: []Row{edge("r2", "p1", "p3")}}}, want: ok},
		{name: "card over bounds 0..2", calls: []tx{{op: OpInsert, typ: "Reports", rows: []Row{edge("r2", "p1", "p3"), edge("r3", "p1", "p1")}}}, want: ErrCardinality},
		{name: "unbounded edge", calls: []tx{{op: OpInsert, typ: "Knows", rows: []Row{edge("k2", "p1", "p3"), edge("k3", "p1", "p1")}}}, want: ok},

		// Node deletes: refused with edges unless cascade.
		{name: "delete node with out-edges", calls: []tx{{op: OpDelete, typ: "Person", ids: []string{"p1"}}}, want: ErrHasEdges},
		{name: "delete node with in-edges", calls: []tx{{op: OpDelete, typ: "Company", ids: []string{"c1"}}}, want: ErrHasEdges},
		{name: "delete node cascade", calls: []tx{{op: OpDelete, typ: "Person", ids: []string{"p1"}, cascade: true}}, want: ok},
		{name: "delete node and its edges", calls: []tx{{op: OpDelete, typ: "WorksAt", ids: []string{"w1"}}, {op: OpDelete, typ: "Knows", ids: []string{"k1"}}, {op: OpDelete, typ: "Reports", ids: []string{"r1"}}, {op: OpDelete, typ: "Person", ids: []string{"p1"}}}, want: ok},
		{name: "delete lone node", calls: []tx{{op: OpDelete, typ: "Person", ids: []string{"p3"}}}, want: ok},

		// Bounds (staging).
		{name: "too many rows", calls: []tx{{op: OpInsert, typ: "Company", rows: []Row{company("a"), company("b"), company("c"), company("d"), company("e")}}}, stage: ErrTooLarge},
		{name: "too many bytes", calls: []tx{{op: OpInsert, typ: "Company", rows: []Row{{ID: "big", Props: map[string]any{"name": strings.Repeat("n", 4096)}}}}}, stage: ErrTooLarge},
		{name: "too many deletes", calls: []tx{{op: OpDelete, typ: "Company", ids: []string{"a", "b", "c", "d", "e"}}}, stage: ErrTooLarge},
	}
	cat := testCatalog(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStaging(cat, Limits{MaxRows: 4, MaxBytes: 4000})
			defer s.release()
			var err error
			for _, c := range tc.calls {
				if err = stage(s, c); err != nil {
					break
				}
			}
			if !matches(err, tc.stage) {
				t.Fatalf("staging = %v, want %v", err, tc.stage)
			}
			if tc.stage != nil {
				return
			}
			vs := views(t, cat, baseGraph(), tc.head)
			_, err = validate(s, vs)
			if !matches(err, tc.want) {
				t.Fatalf("validate = %v, want %v", err, tc.want)
			}
		})
	}
}

func matches(err, want error) bool {
	if want == nil {
		return err == nil
	}
	var ve *ValidationError
	return errors.Is(err, want) && errors.Is(err, ErrValidation) && errors.As(err, &ve)
}

// TestValidateMinCardinality pins the @card minimum: a new source node
// needs its edges in the same transaction, and deleting an edge may not
// take a source below the minimum unless the source goes too.
func TestValidateMinCardinality(t *testing.T) {
	cat := catalogOf(t, `
node P { }
node C { }
edge Owns: P -> C @card(1..2)
`)
	base := map[string][]Row{
		"P":    {{ID: "p1"}, {ID: "p2"}},
		"C":    {{ID: "c1"}, {ID: "c2"}},
		"Owns": {edge("o1", "p1", "c1"), edge("o2", "p2", "c1"), edge("o3", "p2", "c2")},
	}
	cases := []struct {
		name  string
		calls []tx
		want  error
	}{
		{"new source without edge", []tx{{op: OpInsert, typ: "P", rows: []Row{{ID: "p9"}}}}, ErrCardinality},
		{"new source with edge", []tx{{op: OpInsert, typ: "P", rows: []Row{{ID: "p9"}}}, {op: OpInsert, typ: "Owns", rows: []Row{edge("o9", "p9", "c2")}}}, nil},
		{"upserted existing source", []tx{{op: OpUpsert, typ: "P", rows: []Row{{ID: "p1"}}}}, nil},
		{"delete last edge", []tx{{op: OpDelete, typ: "Owns", ids: []string{"o1"}}}, ErrCardinality},
		{"delete one of two", []tx{{op: OpDelete, typ: "Owns", ids: []string{"o3"}}}, nil},
		{"delete source with cascade", []tx{{op: OpDelete, typ: "P", ids: []string{"p1"}, cascade: true}}, nil},
		{"cascade from target drops a source below min", []tx{{op: OpDelete, typ: "C", ids: []string{"c1"}, cascade: true}}, ErrCardinality},
		{"move the last edge away", []tx{{op: OpUpdate, typ: "Owns", rows: []Row{edge("o1", "p2", "c2")}}}, ErrCardinality},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStaging(cat, Limits{})
			defer s.release()
			for _, c := range tc.calls {
				if err := stage(s, c); err != nil {
					t.Fatal(err)
				}
			}
			_, err := validate(s, views(t, cat, base, nil))
			if !matches(err, tc.want) {
				t.Fatalf("validate = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestValidateCascadePlan pins what a cascade deletes: every edge, of
// every edge type, incident to the node, in or out; and nothing else.
func TestValidateCascadePlan(t *testing.T) {
	cat := testCatalog(t)
	base := baseGraph()
	base["Knows"] = append(base["Knows"], edge("k2", "p3", "p1"), edge("k3", "p2", "p3"))
	s := newStaging(cat, Limits{})
	defer s.release()
	if err := s.stageDeletes("Person", []string{"p1"}, true); err != nil {
		t.Fatal(err)
	}
	plans, err := validate(s, views(t, cat, base, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"Person": {"p1"}, "WorksAt": {"w1"}, "Knows": {"k1", "k2"}, "Reports": {"r1"}}
	if len(plans) != len(want) {
		t.Fatalf("plans for %v, want %v", keys(plans), want)
	}
	for table, ids := range want {
		p := plans[table]
		if got := keys(p.deletes); strings.Join(got, ",") != strings.Join(ids, ",") || !p.strict {
			t.Fatalf("%s deletes %v (strict %v), want %v", table, got, p.strict, ids)
		}
	}
}

// TestValidateErrorsName pins that a rejection names the table, the id and
// what to do, so the caller can act on it.
func TestValidateErrorsName(t *testing.T) {
	cat := testCatalog(t)
	s := newStaging(cat, Limits{})
	defer s.release()
	if err := s.stageRows(OpInsert, "WorksAt", []Row{edge("w9", "p1", "c2")}); err != nil {
		t.Fatal(err)
	}
	_, err := validate(s, views(t, cat, baseGraph(), nil))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Table != "WorksAt" || !strings.Contains(ve.Msg, `"p1" would have 2 out-edges`) {
		t.Fatalf("validate = %v", err)
	}
	err = s.stageDeletes("Knows", []string{"k1"}, false)
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "split the transaction") {
		t.Fatalf("mixed = %v, want a message telling the caller to split the transaction", err)
	}
}

// TestPlainDeleteAfterCascade pins rule 4's order independence: a plain
// delete of a node whose only edges a cascade in the same transaction
// removes is valid, although its type (Company) is checked before the
// cascading one (Person). Found by TestWriteChecksMatchNaive.
func TestPlainDeleteAfterCascade(t *testing.T) {
	cat := testCatalog(t)
	s := newStaging(cat, Limits{MaxRows: 8, MaxBytes: 4000})
	defer s.release()
	for _, c := range []tx{{op: OpDelete, typ: "Company", ids: []string{"c1"}}, {op: OpDelete, typ: "Person", ids: []string{"p1"}, cascade: true}} {
		if err := stage(s, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := validate(s, views(t, cat, baseGraph(), nil)); err != nil {
		t.Fatalf("validate = %v, want nil", err)
	}
}
