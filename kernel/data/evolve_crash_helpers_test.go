package data

import (
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// crashingHandle opens another handle (entropy seed 21) on store whose
// process dies at failpoint fp: the call reaching it fails with
// failpoint.ErrCrashed, leaving what it wrote so far.
func crashingHandle(t testing.TB, store *sim.Store, fp failpoint.Name) *Graph {
	t.Helper()
	fps := failpoint.NewSet()
	fps.Arm(fp, failpoint.Action{Kind: failpoint.Crash})
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.Env(21, fps)}})
	must(t, err)
	return g
}

// reopenLater opens store as another process an hour later (seed 22):
// its open recovers what a crash left.
func reopenLater(t testing.TB, store *sim.Store) *Graph {
	t.Helper()
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.EnvAt(22, nil, kerneltest.Later)}})
	must(t, err)
	return g
}

// recoverOnce is reopenLater that requires exactly one recovery audit,
// with decision want.
func recoverOnce(t testing.TB, store *sim.Store, want format.AuditDecision) *Graph {
	t.Helper()
	g := reopenLater(t, store)
	as, err := kerneltest.Audits(store, testRoot)
	must(t, err)
	if len(as) != 1 || as[0].Decision != want {
		t.Fatalf("audits %+v, want one %s", as, want)
	}
	return g
}

// crashingCounterHandle is crashingHandle writing counter-named table
// versions (format 7's, kernel.Options.CounterWrites): a write that dies
// before its publish leaves a sidecar for recovery to resolve, where one
// named per attempt leaves nothing to roll forward or back.
func crashingCounterHandle(t testing.TB, store *sim.Store, fp failpoint.Name) *Graph {
	t.Helper()
	fps := failpoint.NewSet()
	fps.Arm(fp, failpoint.Action{Kind: failpoint.Crash})
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.Env(21, fps), CounterWrites: true}})
	must(t, err)
	return g
}
