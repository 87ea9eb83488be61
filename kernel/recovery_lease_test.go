package kernel_test

import (
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
)

// A read-write open while another process's write is in flight (young
// sidecar, tables committed, publish pending) leaves it alone: the writer
// publishes its own commit, nobody writes an audit record, and the history
// holds no recovery commit.
func TestOpenLeavesLiveWriterAlone(t *testing.T) {
	store := recInit(t)
	rv := failpoint.NewRendezvous()
	fps := failpoint.NewSet()
	fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.Pause, Rendezvous: rv, Times: 1})
	w := recOpenNow(t, store, 40, fps)
	type result struct {
		c   kernel.Commit
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := recWrite(w, "main", map[string]string{"a": "a1", "b": "b1"}, "live")
		done <- result{c, err}
	}()
	<-rv.Reached()
	recOpenNow(t, store, 41, nil) // another process opens meanwhile
	rv.Release()
	r := <-done
	if r.err != nil || r.c.Actor != "tester" || r.c.Kind != format.KindCommit {
		t.Fatalf("live write: %+v, %v", r.c, r.err)
	}
	if n := recAuditTotal(store); n != 0 {
		t.Fatalf("%d audit records: an open acted on a live write", n)
	}
	for _, m := range recState(t, store).Branches[0].History {
		if strings.HasPrefix(m, kernel.RecoveryMessagePrefix) {
			t.Fatalf("recovery commit %q in the history", m)
		}
	}
	g := recOpenRO(t, store)
	log, _ := g.Log(recCtx, mustRecBranch(t, g), "", 0)
	for _, c := range log.Commits {
		if c.Actor == kernel.RecoveryActor {
			t.Fatalf("recovery commit %+v", c)
		}
	}
}

// A crashed write's sidecar is left alone until it is older than the
// recovery lease by the opener's clock; then the open resolves it.
func TestOpenRecoversOnlyPastTheLease(t *testing.T) {
	store := recInit(t)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1"}, failpoint.BeforePublish, 1)
	writes := store.Counters().Writes()
	early, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(42, nil, kerneltest.Epoch.Add(time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	_ = early
	if store.Counters().Writes() != writes || len(kerneltest.Sidecars(store, recRoot)) != 1 {
		t.Fatalf("an open within the lease acted on the sidecar")
	}
	if _, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(43, nil, kerneltest.Epoch.Add(kernel.RecoveryLease+time.Second))}); err != nil {
		t.Fatal(err)
	}
	recOneAudit(t, store)
	recNoSidecars(t, store)
}

// Recover with IgnoreLease resolves even a young sidecar (for callers that
// know no writer is live); without it the young sidecar is reported and
// kept. A read-only handle refuses to recover.
func TestRecoverIgnoreLease(t *testing.T) {
	store := recInit(t)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, failpoint.AfterTableCommit, 1)
	g := recOpenNow(t, store, 44, nil)
	rep, err := g.Recover(recCtx, kernel.RecoverOptions{})
	if err != nil || rep != (kernel.RecoveryReport{Young: 1}) || len(kerneltest.Sidecars(store, recRoot)) != 1 {
		t.Fatalf("Recover within the lease: %+v, %v", rep, err)
	}
	rep, err = g.Recover(recCtx, kernel.RecoverOptions{IgnoreLease: true})
	if err != nil || rep != (kernel.RecoveryReport{Resolved: 1}) {
		t.Fatalf("Recover ignoring the lease: %+v, %v", rep, err)
	}
	if a := recOneAudit(t, store); a.Decision != format.DecisionRollBack {
		t.Fatalf("audit %+v", a)
	}
	recNoSidecars(t, store)
	if _, err := recOpenRO(t, store).Recover(recCtx, kernel.RecoverOptions{IgnoreLease: true}); !errorsIs(err, kernel.ErrReadOnly) {
		t.Fatalf("read-only Recover: %v", err)
	}
}

// A writer heals first: before it advances a table, an abandoned sidecar on
// that table (past the lease) is resolved — here rolled forward — and the
// new write builds on the result.
func TestWriterHealsAbandonedSidecarFirst(t *testing.T) {
	store := recInit(t)
	w := recOpen(t, store, 45, nil) // opened before the crash; its clock is past the lease
	recCrashWrite(t, store, "main", map[string]string{"a": "a1"}, failpoint.BeforePublish, 1)
	recMustWrite(t, w, "main", map[string]string{"a": "a2"}, "after the crash")
	if a := recOneAudit(t, store); a.Decision != format.DecisionRollForward {
		t.Fatalf("audit %+v", a)
	}
	recNoSidecars(t, store)
	tables := recState(t, store).Branches[0].Tables
	if !cmp.Equal(tables[0].Fragments, []string{"a0", "a1", "a2"}) {
		t.Fatalf("table a %+v: the write did not build on the healed state\ndiff (-tables[0].Fragments +[]string{'a0', 'a1', 'a2'}):\n%s", tables[0], cmp.Diff(tables[0].Fragments, []string{"a0", "a1", "a2"}))
	}
}

// Heal-first is scoped: it leaves a young sidecar (a live writer's, as far
// as anyone can tell) and an abandoned sidecar on tables it does not write;
// the write succeeds on top of the published pin either way.
func TestHealFirstScope(t *testing.T) {
	store := recInit(t)
	late := recOpen(t, store, 46, nil)
	now := recOpenNow(t, store, 47, nil)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1"}, failpoint.BeforePublish, 1)
	recMustWrite(t, late, "main", map[string]string{"b": "b1"}, "other table")
	recMustWrite(t, now, "main", map[string]string{"a": "a2"}, "young sidecar")
	if n := len(kerneltest.Sidecars(store, recRoot)); n != 1 || recAuditTotal(store) != 0 {
		t.Fatalf("%d sidecars, %d audits: heal-first acted out of scope", n, recAuditTotal(store))
	}
	tables := recState(t, store).Branches[0].Tables
	if !cmp.Equal(tables[0].Fragments, []string{"a0", "a2"}) || !cmp.Equal(tables[1].Fragments, []string{"b0", "b1"}) {
		t.Fatalf("tables %+v\ndiff (-tables[0].Fragments +[]string{'a0', 'a2'}):\n%s\ndiff (-tables[1].Fragments +[]string{'b0', 'b1'}):\n%s", tables, cmp.Diff(tables[0].Fragments, []string{"a0", "a2"}), cmp.Diff(tables[1].Fragments, []string{"b0", "b1"}))
	}
	// The abandoned write is resolved later, and can no longer roll
	// forward: table a moved past it.
	recOpen(t, store, 48, nil)
	if a := recOneAudit(t, store); a.Decision != format.DecisionRollBack {
		t.Fatalf("audit %+v", a)
	}
	if got := recState(t, store).Branches[0].Tables[0].Fragments; !cmp.Equal(got, []string{"a0", "a2"}) {
		t.Fatalf("table a after the late roll-back: %v\ndiff (-got +[]string{'a0', 'a2'}):\n%s", got, cmp.Diff(got, []string{"a0", "a2"}))
	}
}

func mustRecBranch(t *testing.T, g *kernel.Graph) kernel.BranchRef {
	t.Helper()
	b, err := g.Branch(recCtx, "main")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
