package kernel_test

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

// recSpoilSidecar replaces the only sidecar in store with bad(good) and
// returns its key and op.
func recSpoilSidecar(t *testing.T, store *sim.Store, bad func(good []byte) []byte) (string, format.ID) {
	t.Helper()
	keys := kerneltest.Sidecars(store, recRoot)
	if len(keys) != 1 {
		t.Fatalf("%d sidecars, want 1", len(keys))
	}
	good, _ := store.Peek(keys[0])
	if err := store.Delete(recCtx, keys[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(recCtx, keys[0], bad(good), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	op, err := recKeys.ParseSidecarKey(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	return keys[0], op
}

func recNewerFormat(good []byte) []byte {
	env, err := format.DecodeEnvelope(good)
	if err != nil {
		panic(err)
	}
	env.Stamp = format.CurrentFormat + 1
	return format.EncodeEnvelope(env)
}

func recCorrupt(good []byte) []byte {
	b := append([]byte(nil), good...)
	b[len(b)/2] ^= 0x40
	return b
}

// wantUnreadable checks err is the typed unreadable-sidecar error naming key.
func wantUnreadable(t *testing.T, err error, key string, cause error) {
	t.Helper()
	var ue *kernel.UnreadableSidecarError
	if !errors.As(err, &ue) || ue.Key != key || !errors.Is(err, cause) {
		t.Fatalf("got %v, want *UnreadableSidecarError naming %s and matching %v", err, key, cause)
	}
}

// §3 of the hardening issue: a sidecar the sweep cannot read fails only the
// writes it could concern. A newer-format sidecar still shows its branch
// and tables (its frame and checksum are sound), so a writer on another
// branch, or on other tables, is not stopped; a writer it concerns fails
// with *UnreadableSidecarError naming the sidecar.
func TestNewerFormatSidecarStopsOnlyTheWritesItConcerns(t *testing.T) {
	store := recInit(t)
	g := recOpen(t, store, 40, nil) // opened while the graph is clean; past the lease for epoch sidecars
	main, _ := g.Branch(recCtx, "main")
	if _, err := g.CreateBranch(recCtx, "feat", main); err != nil {
		t.Fatal(err)
	}
	recCrashWrite(t, store, "feat", map[string]string{"a": "fa1"}, failpoint.BeforePublish, 1)
	key, _ := recSpoilSidecar(t, store, recNewerFormat)

	recMustWrite(t, g, "main", map[string]string{"a": "a1"}, "another branch")
	recMustWrite(t, g, "feat", map[string]string{"b": "fb1"}, "another table")
	_, err := recWrite(g, "feat", map[string]string{"a": "fa2"}, "the sidecar's table")
	wantUnreadable(t, err, key, kernel.ErrUnsupportedFormat)
	if _, ok := store.Peek(key); !ok {
		t.Fatalf("the newer-format sidecar was not kept as is")
	}
}

// A corrupt sidecar shows nothing of its scope, so it fails every write's
// heal-first — with the typed error naming it — until an operator moves it
// aside with QuarantineSidecar, which keeps its bytes in a quarantine
// record. Publish never reads sidecars and is not stopped. (A write heals
// first only when it finds a table HEAD above its pin (issue #32): here
// the crashed write's version of a.)
func TestCorruptSidecarIsQuarantined(t *testing.T) {
	store := recInit(t)
	g := recOpen(t, store, 41, nil)
	recCrashWrite(t, store, "main", map[string]string{"a": "a1"}, failpoint.BeforePublish, 1)
	key, op := recSpoilSidecar(t, store, recCorrupt)
	bad, _ := store.Peek(key)

	_, err := recWrite(g, "main", map[string]string{"a": "a1"}, "blocked")
	wantUnreadable(t, err, key, kernel.ErrCorrupt)
	if err := g.QuarantineSidecar(recCtx, op, "operator: corrupt after a disk fault"); err != nil {
		t.Fatalf("QuarantineSidecar: %v", err)
	}
	if _, ok := store.Peek(key); ok {
		t.Fatal("the sidecar is still there after its quarantine")
	}
	q, ok := store.Peek(recKeys.Quarantine(op))
	if !ok {
		t.Fatal("no quarantine record")
	}
	rec, _, err := format.DecodeQuarantine(q)
	if err != nil || rec.Op != op || string(rec.Sidecar) != string(bad) || rec.Reason == "" {
		t.Fatalf("quarantine record %+v, %v: want the op, the reason and the sidecar's bytes", rec, err)
	}
	recMustWrite(t, g, "main", map[string]string{"b": "b1"}, "unblocked")
	if _, err := kernel.Open(recCtx, store, recRoot, kernel.Options{CounterWrites: true, Env: kerneltest.EnvAt(42, nil, kerneltest.Later)}); err != nil {
		t.Fatalf("open after the quarantine: %v", err)
	}
	// Quarantine is for sidecars recovery cannot read; a readable one is
	// recovered, never moved aside.
	recCrashWrite(t, store, "main", map[string]string{"a": "a2"}, failpoint.BeforePublish, 1)
	ok2 := kerneltest.Sidecars(store, recRoot)
	good, _ := recKeys.ParseSidecarKey(ok2[0])
	if err := g.QuarantineSidecar(recCtx, good, "no"); !errors.Is(err, kernel.ErrInvalidArgument) {
		t.Fatalf("quarantine of a readable sidecar: %v, want ErrInvalidArgument", err)
	}
}
