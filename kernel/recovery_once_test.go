package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// recRecoveryCommits lists the recovery commits (kind recovery) on main.
func recRecoveryCommits(t *testing.T, store *sim.Store) []kernel.Commit {
	t.Helper()
	g, err := kernel.Open(recCtx, store, recRoot, kernel.Options{ReadOnly: true, Env: kerneltest.EnvAt(98, nil, kerneltest.Later)})
	if err != nil {
		t.Fatalf("read-only Open: %v", err)
	}
	main, err := g.Branch(recCtx, "main")
	if err != nil {
		t.Fatal(err)
	}
	var out []kernel.Commit
	for _, c := range fullLog(t, g, main) {
		if c.Kind == format.KindRecovery {
			out = append(out, c)
		}
	}
	return out
}

// R5: an abandoned write yields at most one recovery commit and exactly one
// audit record, which names it, however many recoverers race. The issue's
// reproduction: a write crashes before its publish; another write publishes
// on top (so the sidecar can only roll back); recoverer A publishes its
// roll-back and is held before its audit record; recoverer B recovers the
// same sidecar. B must find A's commit instead of publishing its own.
func TestRacingRecoverersPublishOneRecoveryCommit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		frags   map[string]string
		crashAt failpoint.Name
	}{
		// The write's only table was written over: nothing is left to restore.
		{"nothing-to-restore", map[string]string{"a": "a1"}, failpoint.BeforePublish},
		// Table b was never written: its restore is pinned by the roll-back.
		{"restore", map[string]string{"a": "a1", "b": "b1"}, failpoint.AfterTableCommit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := recInit(t)
			w := recOpenNow(t, store, 34, nil) // a live writer, opened before the crash
			recCrashWrite(t, store, "main", tc.frags, tc.crashAt, 1)
			recMustWrite(t, w, "main", map[string]string{"a": "a2"}, "on top")
			rv := failpoint.NewRendezvous()
			fps := failpoint.NewSet()
			fps.Arm(failpoint.AfterRecoveryPublishBeforeAudit, failpoint.Action{Kind: failpoint.Pause, Rendezvous: rv, Times: 1})
			errA := make(chan error, 1)
			go func() {
				_, err := kernel.Open(recCtx, store, recRoot, kernel.Options{Env: kerneltest.EnvAt(31, fps, kerneltest.Later)})
				errA <- err
			}()
			<-rv.Reached()
			recOpen(t, store, 32, nil) // recoverer B
			rv.Release()
			if err := <-errA; err != nil {
				t.Fatalf("recoverer A: %v", err)
			}
			a := recOneAudit(t, store)
			rc := recRecoveryCommits(t, store)
			if len(rc) != 1 {
				t.Fatalf("%d recovery commits for one abandoned write, want 1: %+v", len(rc), rc)
			}
			if a.Decision != format.DecisionRollBack || a.RecoveryCommit != rc[0].ID {
				t.Fatalf("audit %+v does not name the one recovery commit %s", a, rc[0].ID)
			}
			recNoSidecars(t, store)
		})
	}
}
