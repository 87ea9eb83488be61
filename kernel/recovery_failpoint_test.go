package kernel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// recActions are the three ways a test or the simulator arms a failpoint.
var recActions = []struct {
	name string
	kind failpoint.Kind
}{{"error", failpoint.ReturnError}, {"crash", failpoint.Crash}, {"pause", failpoint.Pause}}

// recArm arms point with kind on a fresh set over cs; for Pause it returns
// the rendezvous.
func recArm(cs *recCrashStore, point failpoint.Name, kind failpoint.Kind) (*failpoint.Set, *failpoint.Rendezvous) {
	fps := recCrashingSet(cs)
	a := failpoint.Action{Kind: kind, Times: 1}
	var rv *failpoint.Rendezvous
	if kind == failpoint.Pause {
		rv = failpoint.NewRendezvous()
		a.Rendezvous = rv
	}
	fps.Arm(point, a)
	return fps, rv
}

// recConverges recovers everything and checks the recovery invariants
// against the pre- and post-states.
func recConverges(t *testing.T, store *sim.Store, pre, post string) {
	t.Helper()
	if _, err := recOpenNow(t, store, 79, nil).Recover(recCtx, kernel.RecoverOptions{IgnoreLease: true}); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	recNoSidecars(t, store)
	for op, n := range kerneltest.AuditCounts(store, recRoot) {
		if n != 1 {
			t.Fatalf("op %s has %d audit records", op, n)
		}
	}
	if st := recState(t, store).String(); st != pre && st != post {
		t.Fatalf("state after recovery is a mix:\n%s", st)
	}
	recCheckNoStrays(t, store)
}

// Every writer failpoint site, armed to return an error, crash, or pause:
// the site is reached, the write fails (or, paused, completes) accordingly,
// and recovery then converges to the pre- or post-state with at most one
// audit record and no sidecar or stray left.
func TestWriterFailpointMatrix(t *testing.T) {
	post := func() string {
		store := recInit(t)
		recMustWrite(t, recOpenNow(t, store, 70, nil), "main", map[string]string{"a": "a1", "b": "b1"}, "fp")
		return recState(t, store).String()
	}()
	for _, point := range []failpoint.Name{failpoint.AfterSidecarWrite, failpoint.AfterTableCommit, failpoint.BeforePublish, failpoint.AfterPublishBeforeSidecarDelete} {
		for _, act := range recActions {
			t.Run(string(point)+"/"+act.name, func(t *testing.T) {
				store := recInit(t)
				pre := recState(t, store).String()
				cs := &recCrashStore{Store: store}
				fps, rv := recArm(cs, point, act.kind)
				w := recOpenNow(t, cs, 71, fps)
				done := make(chan error, 1)
				go func() {
					_, err := recWrite(w, "main", map[string]string{"a": "a1", "b": "b1"}, "fp")
					done <- err
				}()
				if rv != nil {
					<-rv.Reached()
					rv.Release()
				}
				err := <-done
				switch act.kind {
				case failpoint.Pause:
					if err != nil {
						t.Fatalf("paused write: %v", err)
					}
				case failpoint.Crash:
					if !errors.Is(err, failpoint.ErrCrashed) {
						t.Fatalf("crashed write: %v", err)
					}
				case failpoint.ReturnError:
					if !errors.Is(err, failpoint.ErrInjected) {
						t.Fatalf("write with an injected error: %v", err)
					}
				}
				if fps.Hits(point) == 0 {
					t.Fatalf("site %s never reached", point)
				}
				recConverges(t, store, pre, post)
			})
		}
	}
}

// Every recovery failpoint site, armed the same three ways, on a sidecar
// that rolls forward (or back): an error or a crash fails that open and a
// later one finishes with exactly one audit record; a pause holds the
// recoverer at the site until released.
func TestRecoveryFailpointMatrix(t *testing.T) {
	for _, tc := range []struct {
		point   failpoint.Name
		crashAt failpoint.Name // where the write under recovery crashed
	}{
		{failpoint.BeforeRollForwardPublish, failpoint.BeforePublish},
		{failpoint.BeforeRollBackPublish, failpoint.AfterTableCommit},
		{failpoint.AfterAuditBeforeSidecarDelete, failpoint.BeforePublish},
		{failpoint.AfterAuditBeforeSidecarDelete, failpoint.AfterTableCommit},
	} {
		for _, act := range recActions {
			t.Run(string(tc.point)+"/"+string(tc.crashAt)+"/"+act.name, func(t *testing.T) {
				store := recInit(t)
				pre := recState(t, store).String()
				recCrashWrite(t, store, "main", map[string]string{"a": "a1", "b": "b1"}, tc.crashAt, 1)
				mid := recState(t, store).String()
				cs := &recCrashStore{Store: store}
				fps, rv := recArm(cs, tc.point, act.kind)
				done := make(chan error, 1)
				go func() {
					_, err := kernel.Open(recCtx, cs, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(72, fps, kerneltest.Later)})
					done <- err
				}()
				if rv != nil {
					<-rv.Reached()
					if n := recAuditTotal(store); tc.point != failpoint.AfterAuditBeforeSidecarDelete && n != 0 {
						t.Fatalf("%d audit records before the parked action's publish", n)
					}
					rv.Release()
				}
				err := <-done
				switch act.kind {
				case failpoint.Pause:
					if err != nil {
						t.Fatalf("paused open: %v", err)
					}
				case failpoint.Crash:
					if !errors.Is(err, failpoint.ErrCrashed) {
						t.Fatalf("crashed open: %v", err)
					}
				case failpoint.ReturnError:
					if !errors.Is(err, failpoint.ErrInjected) {
						t.Fatalf("open with an injected error: %v", err)
					}
				}
				if fps.Hits(tc.point) == 0 {
					t.Fatalf("site %s never reached", tc.point)
				}
				recOpen(t, store, 73, nil)
				recOneAudit(t, store)
				recNoSidecars(t, store)
				if st := recState(t, store).String(); st != pre && st != mid && !recIsPost(st) {
					t.Fatalf("state after recovery:\n%s", st)
				}
			})
		}
	}
}

// recIsPost: the crashed write's content is visible on both tables.
func recIsPost(st string) bool {
	return strings.Contains(st, `"a0" "a1"`) && strings.Contains(st, `"b0" "b1"`)
}
