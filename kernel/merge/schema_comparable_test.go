package merge

import "testing"

// TestMergeSchemasComparable: with a schema conflict on one type, the
// merge's Comparable schema holds the other merged types (with every
// side's columns), not the conflicted one; without conflicts it is empty.
func TestMergeSchemasComparable(t *testing.T) {
	base := parse(t, "node P { a: int64? }\nnode Q { b: string? }\n")
	src := parse(t, "node P { x: int64? @col(a) }\nnode Q { b: string? c: int64? }\n")
	tgt := parse(t, "node P { y: int64? @col(a) }\nnode Q @retired(b) { }\n")
	sm := MergeSchemas(SchemaInput{Base: base, Source: src, Target: tgt})
	if len(sm.Conflicts) != 1 || sm.Conflicts[0].Type != "P" {
		t.Fatalf("conflicts %v", sm.Conflicts)
	}
	if len(sm.Comparable.Nodes) != 1 || sm.Comparable.Nodes[0].Name != "Q" || len(sm.Comparable.Edges) != 0 {
		t.Fatalf("comparable %v", sm.Comparable)
	}
	q := sm.Comparable.Nodes[0]
	if len(q.Props) != 1 || q.Props[0].Name != "c" || len(q.Retired) != 1 || q.Retired[0] != "b" {
		t.Fatalf("Q keeps every column: %v", q)
	}
	if ok := MergeSchemas(SchemaInput{Base: base, Source: src, Target: base}); len(ok.Conflicts) != 0 || len(ok.Comparable.Nodes) != 0 {
		t.Fatalf("no conflict: %v, comparable %v", ok.Conflicts, ok.Comparable)
	}
}
