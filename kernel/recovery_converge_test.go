package kernel_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
)

// Two sweeps race one sidecar: sweep A parks at its roll-forward (or
// roll-back) publish; sweep B resolves the sidecar completely; A resumes,
// loses its publish, re-reads, finds the intent satisfied (or audited) and
// finishes. Both opens succeed; exactly one audit record exists; the state
// is the one B left.
func TestConcurrentSweepsConverge(t *testing.T) {
	for _, tc := range []struct {
		name     string
		crashAt  failpoint.Name
		parkAt   failpoint.Name
		decision format.AuditDecision
	}{
		{"roll-forward", failpoint.BeforePublish, failpoint.BeforeRollForwardPublish, format.DecisionRollForward},
		{"roll-back", failpoint.AfterTableCommit, failpoint.BeforeRollBackPublish, format.DecisionRollBack},
		{"after-audit", failpoint.BeforePublish, failpoint.AfterAuditBeforeSidecarDelete, format.DecisionRollForward},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := recInit(t)
			recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, tc.crashAt, 1)
			rv, errA := recParkedOpen(store, 31, tc.parkAt)
			recOpen(t, store, 32, nil) // sweep B: resolves everything
			afterB := recState(t, store)
			rv.Release()
			if err := <-errA; err != nil {
				t.Fatalf("the parked sweep's open failed after the other sweep won: %v", err)
			}
			if a := recOneAudit(t, store); a.Decision != tc.decision {
				t.Fatalf("audit %+v, want %s", a, tc.decision)
			}
			recNoSidecars(t, store)
			if got := recState(t, store); got.String() != afterB.String() {
				t.Fatalf("the late sweep changed the state:\n%s\nwant:\n%s", got, afterB)
			}
		})
	}
}

// A sweep whose roll-forward publish loses to a concurrent plain writer
// re-reads and retries: the writer's commit is kept, the sidecar's versions
// are published on top, one audit record.
func TestRollForwardRetriesAfterUnrelatedWriter(t *testing.T) {
	store := recInit(t)
	w := recOpenNow(t, store, 34, nil) // a live writer in another process, opened before the crash
	recCrashWrite(t, store, "main", map[string]string{"a": "a1"}, failpoint.BeforePublish, 1)
	rv, errA := recParkedOpen(store, 33, failpoint.BeforeRollForwardPublish)
	// The live writer, on another table, publishes (its heal-first leaves
	// the young sidecar alone).
	recMustWrite(t, w, "main", map[string]string{"b": "b1"}, "unrelated")
	rv.Release()
	if err := <-errA; err != nil {
		t.Fatalf("open: %v", err)
	}
	st := recState(t, store)
	if len(st.Branches) != 1 || len(st.Branches[0].Tables) != 2 ||
		st.Branches[0].Tables[0].Fragments[1] != "a1" || st.Branches[0].Tables[1].Fragments[1] != "b1" {
		t.Fatalf("state %s", st)
	}
	if a := recOneAudit(t, store); a.Decision != format.DecisionRollForward || a.Converged {
		t.Fatalf("audit %+v", a)
	}
	recNoSidecars(t, store)
}
