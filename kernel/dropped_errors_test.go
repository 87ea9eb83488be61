package kernel_test

import (
	"context"
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
