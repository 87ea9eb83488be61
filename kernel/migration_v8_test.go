package kernel_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// restampHeadInPlace rewrites name's newest manifest as a format-stamp
// binary of that format would have written it (envelope and payload).
func restampHeadInPlace(t *testing.T, store objstore.Store, name string, stamp uint16) {
	t.Helper()
	page, err := store.List(recCtx, recKeys.BranchPrefix(name), "", 1)
	if err != nil || len(page.Keys) != 1 {
		t.Fatalf("list %s: %v", name, err)
	}
	obj, err := store.Get(recCtx, page.Keys[0])
	if err != nil {
		t.Fatal(err)
	}
	e, err := format.DecodeEnvelope(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	e.Stamp = stamp
	e.Payload = bytes.Replace(e.Payload, fmt.Appendf(nil, `"format_stamp":%d}`, format.CurrentFormat), fmt.Appendf(nil, `"format_stamp":%d}`, stamp), 1)
	if _, err := store.Put(recCtx, page.Keys[0], format.EncodeEnvelope(e), objstore.Unconditional); err != nil {
		t.Fatal(err)
	}
}

// TestV7ToV8SweepsAbandonedSidecarBeforeNamedWrite: a format-7 graph (counter-
// named versions) with an abandoned write (its sidecar durable and its
// version above the pin, young to the next writer, so the open's sweep
// leaves it) opens with a format-8 handle without any rewrite; that
// handle's first write resolves the incarnation's sidecar first (here a
// roll-forward, with its one audit record), then writes its own version
// named per attempt and stamps the branch 8, leaving no sidecar. Without
// the sweep before the first named write the sidecar would outlive it.
func TestV7ToV8SweepsAbandonedSidecarBeforeNamedWrite(t *testing.T) {
	store := sim.New(sim.Config{Seed: 7})
	g7, err := kernel.Init(recCtx, store, recRoot, []byte("v7->v8\n"), kernel.Options{CounterWrites: true, Env: kerneltest.Env(1, nil)})
	if err != nil {
		t.Fatal(err)
	}
	recMustWrite(t, g7, "main", map[string]string{"a": "a0"}, "setup")
	fps := failpoint.NewSet()
	fps.Arm(failpoint.AfterTableCommit, failpoint.Action{Kind: failpoint.Crash})
	crashing := recOpenNow(t, store, 2, fps)
	if _, err := recWrite(crashing, "main", map[string]string{"a": "a1"}, "abandoned"); !errorsIs(err, failpoint.ErrCrashed) {
		t.Fatalf("crashing write: %v", err)
	}
	restampHeadInPlace(t, store, "main", format.FormatV7)
	if n := len(recSidecars(t, store)); n != 1 {
		t.Fatalf("fixture: %d sidecars, want the abandoned one", n)
	}
	writes := store.Counters().Writes()
	g8, err := kernel.Open(recCtx, store, recRoot, kernel.Options{Env: kerneltest.Env(3, nil), SkewMargin: kerneltest.EpochSkewMargin})
	if err != nil {
		t.Fatal(err)
	}
	if w := store.Counters().Writes(); w != writes || len(recSidecars(t, store)) != 1 {
		t.Fatalf("the open wrote %d objects (sidecars left %d): the v7->v8 step rewrites nothing and a young sidecar stays", w-writes, len(recSidecars(t, store)))
	}
	recMustWrite(t, g8, "main", map[string]string{"a": "a2"}, "first named write")
	if n := len(recSidecars(t, store)); n != 0 {
		t.Fatalf("%d sidecars left after the first named write, want 0", n)
	}
	if n := recAuditTotal(store); n != 1 {
		t.Fatalf("%d audit records, want 1 (the abandoned write's)", n)
	}
	b, err := g8.Branch(recCtx, "main")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := g8.SnapshotAt(recCtx, b)
	if err != nil {
		t.Fatal(err)
	}
	pin, ok := snap.Table("a")
	if !ok || pin.Attempt == (format.ID{}) {
		t.Fatalf("pin of a after the first named write: %+v (named %v)", pin, ok)
	}
	tv, err := g8.ReadPinned(recCtx, pin)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tv.Fragments); got != "[a0 a1 a2]" {
		t.Fatalf("content %s, want [a0 a1 a2] (the abandoned write rolled forward, then ours)", got)
	}
	head := newestManifest(t, store, "main")
	if head.FormatStamp != format.CurrentFormat {
		t.Fatalf("head stamped %d, want %d", head.FormatStamp, format.CurrentFormat)
	}
}

func newestManifest(t *testing.T, store objstore.Store, name string) format.Manifest {
	t.Helper()
	page, err := store.List(recCtx, recKeys.BranchPrefix(name), "", 1)
	if err != nil || len(page.Keys) != 1 {
		t.Fatalf("list %s: %v", name, err)
	}
	obj, err := store.Get(recCtx, page.Keys[0])
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := format.DecodeManifest(obj.Data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
