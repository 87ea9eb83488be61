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
	g, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, ReadOnly: true, Env: kerneltest.EnvAt(98, nil, kerneltest.Later)})
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

// recParkedOpen starts a read-write open (a recoverer past the lease) that
// parks at the first hit of point; the returned channel yields its error
// once it is released and done.
func recParkedOpen(store *sim.Store, seed uint64, point failpoint.Name) (*failpoint.Rendezvous, <-chan error) {
	rv := failpoint.NewRendezvous()
	fps := failpoint.NewSet()
	fps.Arm(point, failpoint.Action{Kind: failpoint.Pause, Rendezvous: rv, Times: 1})
	done := make(chan error, 1)
	go func() {
		_, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(seed, fps, kerneltest.Later)})
		done <- err
	}()
	<-rv.Reached()
	return rv, done
}

// recoveryRaceCases are the reproductions of R5: a write crashes
// before its publish; another write publishes on top (so the sidecar can
// only roll back); recoverer A publishes its roll-back and is held before
// its audit record; recoverer B recovers the same sidecar.
var recoveryRaceCases = []struct {
	name    string
	frags   map[string]string
	crashAt failpoint.Name
}{
	// The write's only table was written over: nothing is left to restore.
	{"nothing-to-restore", map[string]string{"a": "a1"}, failpoint.BeforePublish},
	// Table b was never written: its restore is pinned by the roll-back.
	{"restore", map[string]string{"a": "a1", "b": "b1"}, failpoint.AfterTableCommit},
}

// recRaceRecoverers runs one race case and returns the audit record and the
// recovery commits on main.
func recRaceRecoverers(t *testing.T, frags map[string]string, crashAt failpoint.Name) (format.Audit, []kernel.Commit) {
	t.Helper()
	store := recInit(t)
	w := recOpenNow(t, store, 34, nil) // a live writer, opened before the crash
	recCrashWrite(t, store, "main", frags, crashAt, 1)
	recMustWrite(t, w, "main", map[string]string{"a": "a2"}, "on top")
	rv, errA := recParkedOpen(store, 31, failpoint.AfterRecoveryPublishBeforeAudit)
	recOpen(t, store, 32, nil) // recoverer B
	rv.Release()
	if err := <-errA; err != nil {
		t.Fatalf("recoverer A: %v", err)
	}
	recNoSidecars(t, store)
	return recOneAudit(t, store), recRecoveryCommits(t, store)
}

// R5: an abandoned write yields at most one recovery commit and exactly one
// audit record, which names it, however many recoverers race: B finds A's
// landed plan and publishes nothing.
func TestRacingRecoverersPublishOneRecoveryCommit(t *testing.T) {
	for _, tc := range recoveryRaceCases {
		t.Run(tc.name, func(t *testing.T) {
			a, rc := recRaceRecoverers(t, tc.frags, tc.crashAt)
			if len(rc) != 1 {
				t.Fatalf("%d recovery commits for one abandoned write, want 1: %+v", len(rc), rc)
			}
			if a.Decision != format.DecisionRollBack || a.RecoveryCommit != rc[0].ID {
				t.Fatalf("audit %+v does not name the one recovery commit %s", a, rc[0].ID)
			}
		})
	}
}

// A plan whose slot is taken before its publish is dead: the recoverer
// observes again, replaces it with a plan of the next generation and
// publishes that one. Still one recovery commit, named by the audit, and
// the rolled-back tables hold their pinned content.
func TestDeadPlanIsReplaced(t *testing.T) {
	store := recInit(t)
	w := recOpenNow(t, store, 34, nil)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, failpoint.AfterTableCommit, 1)
	rv, errA := recParkedOpen(store, 31, failpoint.BeforeRollBackPublish)      // the open sweeps: a moved under the write, so it rolls back
	recMustWrite(t, w, "main", map[string]string{"c": "c1"}, "takes the slot") // the sidecar is young to w
	rv.Release()
	if err := <-errA; err != nil {
		t.Fatalf("recoverer: %v", err)
	}
	recNoSidecars(t, store)
	a, rc := recOneAudit(t, store), recRecoveryCommits(t, store)
	if len(rc) != 1 || a.RecoveryCommit != rc[0].ID {
		t.Fatalf("recovery commits %+v, audit %+v: want one, named by the audit", rc, a)
	}
	p := recPlan(t, store, a.Op)
	if p.Gen != 2 || p.Commit != rc[0].ID {
		t.Fatalf("plan %+v: want generation 2 naming the recovery commit %s", p, rc[0].ID)
	}
	st := recState(t, store)
	for _, tb := range st.Branches[0].Tables {
		if tb.Table == "a" || tb.Table == "b" {
			if got := tb.Fragments; len(got) != 1 || got[0] != tb.Table+"0" {
				t.Fatalf("table %s after the roll-back holds %v, want its pinned content", tb.Table, got)
			}
		}
	}
}

// recPlan decodes the stored roll-back plan of op.
func recPlan(t *testing.T, store *sim.Store, op format.ID) format.RecoveryPlan {
	t.Helper()
	b, ok := store.Peek(recKeys.RecoveryPlan(op))
	if !ok {
		t.Fatalf("no roll-back plan for op %s", op)
	}
	p, _, err := format.DecodeRecoveryPlan(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
