package check

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// The delete-dependents check reports a fork live before and after an
// acknowledged delete, and nothing for forks that came or went meanwhile.
func TestCheckDeleteDependents(t *testing.T) {
	src := format.ID{1}
	fork := func(name string, id byte, from format.ID, tomb bool) format.Manifest {
		return format.Manifest{Branch: format.BranchIdentity{Name: name, Incarnation: 1, IncarnationID: format.ID{id}},
			ForkOf: &format.ForkPoint{IncarnationID: from}, Tombstone: tomb}
	}
	before := LiveForks([]format.Manifest{
		fork("kept", 2, src, false), fork("went", 3, src, false), fork("dead", 4, src, true), fork("other", 5, format.ID{9}, false),
		{Branch: format.BranchIdentity{Name: "main", Incarnation: 1, IncarnationID: format.ID{6}}},
	}, src)
	if len(before) != 2 {
		t.Fatalf("LiveForks = %v", before)
	}
	after := LiveForks([]format.Manifest{fork("kept", 2, src, false), fork("went", 3, src, true), fork("new", 7, src, false)}, src)
	deleted := format.BranchIdentity{Name: "src", Incarnation: 1, IncarnationID: src}
	vs := CheckDeleteDependents(deleted, before, after)
	if len(vs) != 1 || vs[0].Check != "delete-dependents" {
		t.Fatalf("violations %v, want one delete-dependents for kept", vs)
	}
	if vs := CheckDeleteDependents(deleted, before[1:], after); len(vs) != 0 {
		t.Fatalf("a fork deleted meanwhile reported: %v", vs)
	}
}
