package check

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/merge"
)

func person(id string, a int64) *merge.Row {
	return &merge.Row{ID: id, Props: map[string]any{"name": id, "a": a}}
}

// The merge oracle can fail: a result that brings back a row the target
// deleted (a two-way merge), or loses the target's edit, differs from it;
// the correct three-way result does not; an edge to a node the other side
// deleted is a conflict.
func TestThreeWayMergeCatchesTwoWay(t *testing.T) {
	types := []string{"Person", "Knows"}
	ends := EdgeEnds{"Knows": {"Person", "Person"}}
	base := MergeState{"Person": {"p0": person("p0", 1), "p1": person("p1", 1)}, "Knows": {}}
	src := MergeState{"Person": {"p0": person("p0", 2), "p1": person("p1", 1)}, "Knows": {}}
	tgt := MergeState{"Person": {"p0": person("p0", 1)}, "Knows": {}} // target deleted p1
	want, conflict := ThreeWayMerge(types, ends, base, src, tgt)
	if conflict {
		t.Fatal("clean merge reported a conflict")
	}
	good := MergeState{"Person": {"p0": person("p0", 2)}, "Knows": {}}
	if d := DiffMergeStates(types, good, want); d != "" {
		t.Fatalf("the correct result differs: %s", d)
	}
	if d := DiffMergeStates(types, src, want); d == "" {
		t.Fatal("a two-way result (the source, p1 back) passes the oracle")
	}
	orphan := MergeState{"Person": src["Person"], "Knows": {"k": {ID: "k", From: "p0", To: "p1"}}}
	if _, conflict := ThreeWayMerge(types, ends, base, orphan, tgt); !conflict {
		t.Fatal("an edge to a node the target deleted is not a conflict")
	}
}
