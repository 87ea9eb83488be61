package kernel_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
)

// R5 across a branch delete: a recoverer publishes an abandoned write's
// roll-back and fails before its audit record; the branch is then deleted;
// the next sweep finds the sidecar of a gone branch. Its audit must name
// the roll-back commit the stored plan landed (a roll-back, not a discard
// naming nothing): every recovery commit is named by exactly one audit.
// (The simulator's core/heavy seed 1 hit this once a schedule shift let a
// branch delete in between.)
func TestLandedRollBackOfDeletedBranchIsAudited(t *testing.T) {
	store := recInit(t)
	g := recOpen(t, store, 20, nil)
	main, _ := g.Branch(recCtx, "main")
	if _, err := g.CreateBranch(recCtx, "feat", main); err != nil {
		t.Fatal(err)
	}
	w := recOpenNow(t, store, 34, nil) // a live writer, opened before the crash
	recCrashWrite(t, store, "feat", map[string]string{"a": "fa1", "b": "fb1"}, failpoint.AfterTableCommit, 1)
	op := recSidecars(t, store)[0].Op
	recMustWrite(t, w, "feat", map[string]string{"a": "fa2"}, "on top") // the sidecar can only roll back

	fps := failpoint.NewSet()
	fps.Arm(failpoint.AfterRecoveryPublishBeforeAudit, failpoint.Action{Kind: failpoint.ReturnError, Times: 1})
	if _, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(31, fps, kerneltest.Later)}); !errors.Is(err, failpoint.ErrInjected) {
		t.Fatalf("recoverer failing before its audit: Open = %v, want the injected failure", err)
	}
	plan := recPlan(t, store, op)
	ro := recOpenRO(t, store)
	feat, err := ro.Branch(recCtx, "feat")
	if err != nil {
		t.Fatal(err)
	}
	var rc []kernel.Commit
	for _, c := range fullLog(t, ro, feat) {
		if c.Kind == format.KindRecovery {
			rc = append(rc, c)
		}
	}
	if len(rc) != 1 || rc[0].ID != plan.Commit || recAuditTotal(store) != 0 {
		t.Fatalf("setup: recovery commits %+v, plan commit %s, %d audits: want the plan's roll-back landed, unaudited", rc, plan.Commit, recAuditTotal(store))
	}

	if err := g.DeleteBranch(recCtx, "feat"); err != nil {
		t.Fatal(err)
	}
	recOpen(t, store, 32, nil) // the next sweep: the sidecar's branch is gone
	recNoSidecars(t, store)
	a := recOneAudit(t, store)
	if a.Op != op || a.Decision != format.DecisionRollBack || a.RecoveryCommit != plan.Commit {
		t.Fatalf("audit %+v: want a roll-back naming the landed recovery commit %s", a, plan.Commit)
	}
}

// The same through the writer: its write is parked before its publish; a
// recoverer (past the lease) rolls it back and fails before its audit
// record; the branch is deleted; the writer's publish finds the branch
// gone. Its own cleanup must audit the landed roll-back, never delete the
// sidecar bare (which would leave the recovery commit named by no audit).
func TestWriterOfDeletedBranchAuditsLandedRollBack(t *testing.T) {
	store := recInit(t)
	g := recOpen(t, store, 20, nil)
	main, _ := g.Branch(recCtx, "main")
	if _, err := g.CreateBranch(recCtx, "feat", main); err != nil {
		t.Fatal(err)
	}
	other := recOpenNow(t, store, 34, nil)
	rv := failpoint.NewRendezvous()
	wfps := failpoint.NewSet()
	wfps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.Pause, Rendezvous: rv, Times: 1})
	w := recOpenNow(t, store, 35, wfps)
	done := make(chan error, 1)
	go func() {
		_, err := recWrite(w, "feat", map[string]string{"a": "fa1", "b": "fb1"}, "parked write")
		done <- err
	}()
	<-rv.Reached()
	op := recSidecars(t, store)[0].Op
	recMustWrite(t, other, "feat", map[string]string{"a": "fa2"}, "on top") // the parked write can only roll back

	fps := failpoint.NewSet()
	fps.Arm(failpoint.AfterRecoveryPublishBeforeAudit, failpoint.Action{Kind: failpoint.ReturnError, Times: 1})
	if _, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(31, fps, kerneltest.Later)}); !errors.Is(err, failpoint.ErrInjected) {
		t.Fatalf("recoverer failing before its audit: Open = %v, want the injected failure", err)
	}
	plan := recPlan(t, store, op)
	if err := g.DeleteBranch(recCtx, "feat"); err != nil {
		t.Fatal(err)
	}
	rv.Release()
	if err := <-done; !errors.Is(err, kernel.ErrBranchNotFound) {
		t.Fatalf("parked write = %v, want ErrBranchNotFound", err)
	}
	recNoSidecars(t, store)
	a := recOneAudit(t, store)
	if a.Op != op || a.Decision != format.DecisionRollBack || a.RecoveryCommit != plan.Commit {
		t.Fatalf("audit %+v: want a roll-back naming the landed recovery commit %s", a, plan.Commit)
	}
}
