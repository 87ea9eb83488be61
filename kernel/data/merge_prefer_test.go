package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/merge"
)

// TestMergeTruthTablePrefer runs every conflicted cell of the truth table
// under MergeOptions.Prefer source and target. A resolvable conflict
// (DivergentInsert, DeleteVsUpdate, DivergentUpdate) is resolved and
// listed in MergeResult.Resolved: the target then holds, for each resolved
// id, the preferred side's row (each op of the table changes one field of
// one id, so the property-level pick is the whole row), and everything
// else as the default merge leaves it. A cell with an OrphanEdge is still
// refused and leaves the target untouched. The zero policy still refuses
// every cell (TestMergeTruthTable, and checked here first).
func TestMergeTruthTablePrefer(t *testing.T) {
	cells := 0
	for s := mergeOp(0); s < numMergeOps; s++ {
		for tg := mergeOp(0); tg < numMergeOps; tg++ {
			want := truthTable[s][tg]
			if len(want.cs) == 0 {
				continue
			}
			cells++
			for _, side := range []merge.Side{merge.PreferSource, merge.PreferTarget} {
				t.Run(s.String()+"/"+tg.String()+"/"+side.String(), func(t *testing.T) {
					runPreferCell(t, s, tg, want, side)
				})
			}
		}
	}
	if cells < 10 {
		t.Fatalf("only %d conflicted cells in the truth table", cells)
	}
}

func runPreferCell(t *testing.T, s, tg mergeOp, want cell, side merge.Side) {
	f := newMergeFixture(t)
	src := f.branch("feature", f.main)
	s.do(t, f, src, true)
	tg.do(t, f, f.main, false)
	before := f.state(f.main)
	srcState := f.state(src)
	beforeHead, _ := f.g.Kernel().Head(ctx, f.main)
	srcHead, _ := f.g.Kernel().Head(ctx, src)

	if _, err := f.merge(src, f.main, MergeOptions{DryRun: true}); !sameConflicts(conflictKeys(t, err), want.cs) {
		t.Fatalf("default policy: conflicts %v, want %v", conflictKeys(t, err), want.cs)
	}
	var remain, resolved []conflictKey
	for _, c := range want.cs {
		if merge.Resolvable(c.Kind) {
			resolved = append(resolved, c)
		} else {
			remain = append(remain, c)
		}
	}
	res, err := f.merge(src, f.main, MergeOptions{Prefer: merge.PreferAll(side)})
	if got := conflictKeys(t, err); !sameConflicts(got, remain) {
		t.Fatalf("conflicts %v, want %v", got, remain)
	}
	var gotResolved []conflictKey
	for _, c := range res.Resolved {
		gotResolved = append(gotResolved, conflictKey{c.Kind, c.Type, c.ID, c.Property})
	}
	if !sameConflicts(gotResolved, resolved) {
		t.Fatalf("resolved %v, want %v", gotResolved, resolved)
	}
	head, _ := f.g.Kernel().Head(ctx, f.main)
	expect := before
	if len(remain) > 0 {
		if head.ID != beforeHead.ID {
			t.Fatal("a refused merge moved the target head")
		}
	} else {
		if len(head.Parents) != 2 || head.Parents[0] != beforeHead.ID || head.Parents[1] != srcHead.ID {
			t.Fatalf("merge commit %+v, want parents %s, %s", head, beforeHead.ID, srcHead.ID)
		}
		expect = cloneState(before)
		if side == merge.PreferSource {
			for _, c := range resolved {
				if r, ok := srcState[c.Type][c.ID]; ok {
					expect[c.Type][c.ID] = r
				} else {
					delete(expect[c.Type], c.ID)
				}
			}
		}
	}
	if d := sameState(f.state(f.main), expect); d != "" {
		t.Fatalf("target after merge: %s", d)
	}
}
