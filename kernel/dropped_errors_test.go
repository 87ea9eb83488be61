package kernel_test

import (
	"errors"

	"context"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestFailedSidecarDeleteIsFinishedBySweep pins a deliberate exception of
// the no-swallowed-error rule (docs/invariants.md, "Errors dropped on
// purpose"): a Write whose publish landed but whose sidecar delete failed
// still reports its commit, and the sidecar it left is finished by the next
// sweep with exactly one audit record and no further commit.
func TestFailedSidecarDeleteIsFinishedBySweep(t *testing.T) {
	store := recInit(t)
	g := recOpenNow(t, store, 11, nil)
	failed := 0
	store.SetHook(sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
		if c.Op == objstore.OpDelete && recIsSidecarKey(c.Key) {
			failed++
			return objstore.NewError(objstore.OpDelete, c.Key, objstore.ErrRejected, nil)
		}
		return nil
	}})
	c := recMustWrite(t, g, "main", map[string]string{"a": "a1"}, "kept despite a failed delete")
	store.SetHook(nil)
	if failed == 0 {
		t.Fatal("the write never tried to delete its sidecar")
	}
	if n := len(recSidecars(t, store)); n != 1 {
		t.Fatalf("%d sidecars after the failed delete, want the 1 left for the sweep", n)
	}
	depth := len(fullLog(t, g, mustRecBranch(t, g)))

	r := recOpen(t, store, 12, nil)
	if _, err := r.Recover(recCtx, kernel.RecoverOptions{IgnoreLease: true}); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if n := len(recSidecars(t, store)); n != 0 {
		t.Errorf("%d sidecars after the sweep, want 0", n)
	}
	if n := recAuditTotal(store); n != 1 {
		t.Errorf("%d audit records, want 1", n)
	}
	if d := len(fullLog(t, r, mustRecBranch(t, r))); d != depth {
		t.Errorf("log has %d commits after the sweep, want %d (the sweep must not publish for a write that landed)", d, depth)
	}
	head, err := r.Head(recCtx, mustRecBranch(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if head.ID != c.ID {
		t.Errorf("head %s, want the write's commit %s", head.ID, c.ID)
	}
}

// TestFailedUndoLeavesSidecarForRollBack pins the second deliberate
// exception (docs/invariants.md, "Errors dropped on purpose"): a strict
// write that lost definitively tries to neutralise its own unpublished
// version (undoDangling); when the store refuses that restore, the caller
// still gets the original definite cause (a version mismatch, not
// ambiguous), the sidecar stays, and the next sweep rolls it back — never
// forward — with one recovery commit named by one audit record.
func TestFailedUndoLeavesSidecarForRollBack(t *testing.T) {
	store := recInit(t)
	ws := []kernel.TableWrite{{Table: "a", Strict: true, BaseVersion: 1, Build: recAppend("a1")}, {Table: "b", Build: recAppend("b1")}}
	rv, done := recParkedWrite(t, store, 54, failpoint.BeforePublish, ws)
	other := recOpenNow(t, store, 55, nil)
	recMustWrite(t, other, "main", map[string]string{"a": "a2"}, "other")
	refused := 0
	store.SetHook(sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
		if c.Op == objstore.OpPut && recIsTableKey(c.Key) {
			refused++
			return objstore.NewError(objstore.OpPut, c.Key, objstore.ErrRejected, nil)
		}
		return nil
	}})
	rv.Release()
	r := <-done
	store.SetHook(nil)
	var mm *kernel.VersionMismatchError
	if !errors.As(r.err, &mm) || errors.Is(r.err, objstore.ErrAmbiguous) {
		t.Fatalf("strict write that lost with its undo refused: %v, want the definite mismatch", r.err)
	}
	if refused == 0 {
		t.Fatal("the writer never tried to write its undo")
	}
	if n := len(recSidecars(t, store)); n != 1 {
		t.Fatalf("%d sidecars after the refused undo, want the writer's 1", n)
	}
	if _, err := recOpen(t, store, 56, nil).Recover(recCtx, kernel.RecoverOptions{IgnoreLease: true}); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	recNoSidecars(t, store)
	a, rc := recOneAudit(t, store), recRecoveryCommits(t, store)
	if a.Decision != format.DecisionRollBack || len(rc) != 1 || a.RecoveryCommit != rc[0].ID {
		t.Fatalf("audit %+v, recovery commits %+v: want one roll-back commit, named by the audit", a, rc)
	}
	if n := recMessages(t, store, "live write"); n != 0 {
		t.Fatal("the definitely failed write became visible")
	}
}
