package data

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestTxnWriterKind pins that the data plane commits as writer kind "txn":
// a counter-named transaction (format 7's writes) whose publish fails
// after its table commits leaves a sidecar saying "txn", and the audit
// record recovery writes for it says "txn" too.
func TestTxnWriterKind(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	seedGraph(t, initGraph(t, store, Limits{}))
	fps := failpoint.NewSet()
	fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.ReturnError})
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.Env(21, fps), CounterWrites: true}})
	must(t, err)
	tx := begin(t, g)
	must(t, tx.Insert("Knows", edge("k9", "p1", "p3")))
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "ours"}); !errors.Is(err, failpoint.ErrInjected) || !errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("Commit = %v, want the injected, ambiguous failure", err)
	}
	keys := kerneltest.Sidecars(store, testRoot)
	if len(keys) != 1 {
		t.Fatalf("sidecars %v, want the failed write's one", keys)
	}
	b, _ := store.Peek(keys[0])
	s, _, err := format.DecodeSidecar(b)
	must(t, err)
	if s.WriterKind != "txn" {
		t.Fatalf("sidecar writer kind %q, want txn", s.WriterKind)
	}
	if _, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.EnvAt(22, nil, kerneltest.Later)}}); err != nil {
		t.Fatal(err)
	}
	as, err := kerneltest.Audits(store, testRoot)
	must(t, err)
	if len(as) != 1 || as[0].WriterKind != "txn" || as[0].Op != s.Op {
		t.Fatalf("audit records %+v, want one for op %s by a txn", as, s.Op)
	}
}

// TestNamedWriteFailureBeforePublishIsDefinite: a transaction named per
// attempt (format 8) whose publish fails after its table version is
// written leaves no sidecar and reports a definite failure (nothing of it
// can become visible later: its version is garbage for the collector).
func TestNamedWriteFailureBeforePublishIsDefinite(t *testing.T) {
	store := sim.New(sim.Config{Seed: 1})
	seedGraph(t, initGraph(t, store, Limits{}))
	fps := failpoint.NewSet()
	fps.Arm(failpoint.BeforePublish, failpoint.Action{Kind: failpoint.ReturnError})
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kerneltest.Env(21, fps)}})
	must(t, err)
	tx := begin(t, g)
	must(t, tx.Insert("Knows", edge("k9", "p1", "p3")))
	if _, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "ours"}); !errors.Is(err, failpoint.ErrInjected) || errors.Is(err, objstore.ErrAmbiguous) {
		t.Fatalf("Commit = %v, want the injected, definite failure", err)
	}
	if keys := kerneltest.Sidecars(store, testRoot); len(keys) != 0 {
		t.Fatalf("sidecars %v, want none", keys)
	}
}
