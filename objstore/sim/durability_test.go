package sim_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// wantData fails t unless key holds data (Get succeeds).
func wantData(t *testing.T, s objstore.Store, key, data string) objstore.Object {
	t.Helper()
	obj, err := s.Get(t.Context(), key)
	if err != nil || string(obj.Data) != data {
		t.Fatalf("Get %q = %q, %v; want %q", key, obj.Data, err, data)
	}
	return obj
}

// wantAbsent fails t unless key does not exist.
func wantAbsent(t *testing.T, s objstore.Store, key string) {
	t.Helper()
	if obj, err := s.Get(t.Context(), key); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("Get %q = %q, %v; want ErrNotFound", key, obj.Data, err)
	}
}

// wantCorrupt fails t unless err is a non-ambiguous ErrRejected whose
// cause is ErrCorruptObject (what fs reports for a torn file).
func wantCorrupt(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, objstore.ErrRejected) || !errors.Is(err, objstore.ErrCorruptObject) || objstore.IsAmbiguous(err) {
		t.Fatalf("%s: %v, want ErrRejected caused by ErrCorruptObject", what, err)
	}
}

// TestPlainStoreHasNoDeferral: the Store itself makes every write durable
// (no capability), so runs that never take the Deferring view are as
// before; the view has all three capabilities.
func TestPlainStoreHasNoDeferral(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1})
	var st objstore.Store = s
	if _, ok := st.(objstore.DeferredPutter); ok {
		t.Fatal("the plain Store is a DeferredPutter")
	}
	if _, ok := st.(objstore.IntactDeferredPutter); ok {
		t.Fatal("the plain Store is an IntactDeferredPutter")
	}
	if _, ok := st.(objstore.DeferredPublisher); ok {
		t.Fatal("the plain Store is a DeferredPublisher")
	}
	if _, d, err := objstore.PutDeferred(t.Context(), s, "k", []byte("v")); err != nil || d {
		t.Fatalf("PutDeferred on the plain store: deferred %v, %v", d, err)
	}
	if rep := s.MachineCrash(0, 1); rep != (sim.CrashReport{}) {
		t.Fatalf("a crash of a store with nothing deferred did %+v", rep)
	}
	wantData(t, s, "k", "v")
}

// TestDeferredLostUntilSynced: a PutDeferred object is visible at once, is
// lost by a machine crash until SyncDeferred named it, and survives once
// it has.
func TestDeferredLostUntilSynced(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 2})
	d := s.Deferring()
	for _, k := range []string{"frag/a", "frag/b", "frag/c"} {
		if _, err := d.PutDeferred(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
		wantData(t, d, k, k) // visible at once
	}
	if _, err := d.PutDeferred(ctx, "frag/a", []byte("again")); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("PutDeferred over an existing key: %v, want ErrPreconditionFailed (create-only)", err)
	}
	if err := d.SyncDeferred(ctx, []string{"frag/c", "frag/a"}); err != nil {
		t.Fatal(err)
	}
	if s.IsVolatile("frag/a") || !s.IsVolatile("frag/b") || s.Volatile() != 1 {
		t.Fatalf("volatile after sync: a %v b %v n %d", s.IsVolatile("frag/a"), s.IsVolatile("frag/b"), s.Volatile())
	}
	rep := s.MachineCrash(0, 0)
	if rep != (sim.CrashReport{Lost: 1}) {
		t.Fatalf("crash report %+v, want one lost", rep)
	}
	wantData(t, d, "frag/a", "frag/a")
	wantAbsent(t, d, "frag/b")
	wantData(t, d, "frag/c", "frag/c")
	if got := s.Keys("frag/"); !slices.Equal(got, []string{"frag/a", "frag/c"}) {
		t.Fatalf("keys after the crash %q", got)
	}
	if s.Volatile() != 0 {
		t.Fatalf("%d keys still volatile after a crash", s.Volatile())
	}
}

// TestSyncOfMissingKeyMakesNothingDurable: SyncDeferred naming a key that
// does not exist fails with ErrTransient naming it, and none of its keys
// is then durable.
func TestSyncOfMissingKeyMakesNothingDurable(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 3})
	d := s.Deferring()
	if _, err := d.PutDeferred(ctx, "x/1", []byte("1")); err != nil {
		t.Fatal(err)
	}
	err := d.SyncDeferred(ctx, []string{"x/1", "x/0"})
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Kind != objstore.ErrTransient || oe.Key != "x/0" || oe.Ambiguous {
		t.Fatalf("sync of a missing key: %v, want a definite ErrTransient naming x/0", err)
	}
	s.MachineCrash(0, 0)
	wantAbsent(t, d, "x/1")
}

// TestCrashTearsDeferAll: a PutDeferred object a crash tears stays listed,
// every read of it reports ErrCorruptObject (as fs reports a torn file),
// a create-only Put finds it, an If-Match Put cannot compare with it, and
// a Delete or an unconditional Put gets rid of it.
func TestCrashTearsDeferAll(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 4})
	d := s.Deferring()
	etag, err := d.PutDeferred(ctx, "v/1", []byte("version"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.PutDeferred(ctx, "v/2", []byte("version")); err != nil {
		t.Fatal(err)
	}
	if rep := s.MachineCrash(0, 1); rep != (sim.CrashReport{Torn: 2}) {
		t.Fatalf("crash report %+v, want two torn", rep)
	}
	if !s.Torn("v/1") || s.Torn("v/0") {
		t.Fatal("Torn does not report the torn key")
	}
	_, err = d.Get(ctx, "v/1")
	wantCorrupt(t, "Get of a torn object", err)
	_, err = d.Head(ctx, "v/1")
	wantCorrupt(t, "Head of a torn object", err)
	if page, err := d.List(ctx, "v/", "", 0); err != nil || !slices.Equal(page.Keys, []string{"v/1", "v/2"}) {
		t.Fatalf("List after a tear: %q %v", page.Keys, err)
	}
	if data, ok := s.Peek("v/1"); !ok || len(data) != 0 {
		t.Fatalf("Peek of a torn object: %q %v, want no bytes, present", data, ok)
	}
	if _, err := d.Put(ctx, "v/1", []byte("x"), objstore.CreateOnly); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("create-only over a torn object: %v", err)
	}
	_, err = d.Put(ctx, "v/1", []byte("x"), objstore.IfMatch(etag))
	wantCorrupt(t, "If-Match over a torn object", err)
	if err := d.Delete(ctx, "v/1"); err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, d, "v/1")
	if _, err := d.Put(ctx, "v/2", []byte("whole"), objstore.Unconditional); err != nil {
		t.Fatal(err)
	}
	wantData(t, d, "v/2", "whole")
}

// TestIntactRevertsNeverTorn: a PutDeferredIntact object is never torn: a
// crash leaves the key as it durably was (absent, or the replaced object
// with its ETag), even after several unsynced replacements.
func TestIntactRevertsNeverTorn(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 5})
	d := s.Deferring()
	old, err := d.Put(ctx, "idx", []byte("old"), objstore.CreateOnly)
	if err != nil {
		t.Fatal(err)
	}
	e1, deferred, err := d.PutDeferredIntact(ctx, "idx", []byte("new1"), objstore.IfMatch(old))
	if err != nil || !deferred {
		t.Fatalf("PutDeferredIntact: deferred %v, %v", deferred, err)
	}
	if _, _, err := d.PutDeferredIntact(ctx, "idx", []byte("new2"), objstore.IfMatch(e1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.PutDeferredIntact(ctx, "slot", []byte("fresh"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	wantData(t, d, "idx", "new2")
	if rep := s.MachineCrash(0, 1); rep != (sim.CrashReport{Lost: 1, Reverted: 1}) {
		t.Fatalf("crash report %+v, want one lost and one reverted (never torn)", rep)
	}
	if obj := wantData(t, d, "idx", "old"); obj.ETag != old {
		t.Fatalf("reverted ETag %q, want %q", obj.ETag, old)
	}
	wantAbsent(t, d, "slot")
	if _, _, err := d.PutDeferredIntact(ctx, "idx", []byte("new3"), objstore.IfMatch(old)); err != nil {
		t.Fatal(err)
	}
	if err := d.SyncDeferred(ctx, []string{"idx"}); err != nil {
		t.Fatal(err)
	}
	s.MachineCrash(0, 1)
	wantData(t, d, "idx", "new3")
}

// TestDurableWriteSettlesVolatileKey: a Put or a Delete is durable at
// once, also over a volatile object.
func TestDurableWriteSettlesVolatileKey(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 6})
	d := s.Deferring()
	for _, k := range []string{"a", "b", "c", "e"} {
		if _, _, err := d.PutDeferredIntact(ctx, k, []byte("deferred"), objstore.Unconditional); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Put(ctx, "a", []byte("durable"), objstore.Unconditional); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	for i, err := range objstore.DeleteMany(ctx, d, []string{"c", "e"}) { // a batched delete too
		if err != nil {
			t.Fatalf("DeleteMany key %d: %v", i, err)
		}
	}
	if s.Volatile() != 0 {
		t.Fatalf("%d keys volatile after durable writes", s.Volatile())
	}
	s.MachineCrash(0, 1)
	wantData(t, d, "a", "durable")
	for _, k := range []string{"b", "c", "e"} {
		wantAbsent(t, d, k)
	}
}

// TestPutAfterDeferredSurvivesOnlyWithItsObjects: a manifest written with
// PutAfterDeferred survives a crash only with the deferred objects it
// names: they are durable once it succeeded (and, as on fs, once it
// reached its write at all: even if its condition failed), while a
// deferred key that does not exist fails it before it is written.
func TestPutAfterDeferredSurvivesOnlyWithItsObjects(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 7})
	d := s.Deferring()
	for _, k := range []string{"t/1", "t/2", "t/3"} {
		if _, err := d.PutDeferred(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.PutAfterDeferred(ctx, "m/1", []byte("manifest"), objstore.CreateOnly, []string{"t/1"}); err != nil {
		t.Fatal(err)
	}
	// Its condition fails, but its deferred key was synced before.
	if _, err := d.PutAfterDeferred(ctx, "m/1", []byte("loser"), objstore.CreateOnly, []string{"t/2"}); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("create-only over m/1: %v", err)
	}
	_, err := d.PutAfterDeferred(ctx, "m/2", []byte("manifest"), objstore.CreateOnly, []string{"t/3", "t/0"})
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Kind != objstore.ErrTransient || oe.Key != "t/0" || oe.Ambiguous {
		t.Fatalf("PutAfterDeferred with a missing deferred key: %v, want a definite ErrTransient naming t/0", err)
	}
	wantAbsent(t, d, "m/2")
	if rep := s.MachineCrash(0, 1); rep != (sim.CrashReport{Torn: 1}) {
		t.Fatalf("crash report %+v, want t/3 alone torn", rep)
	}
	wantData(t, d, "m/1", "manifest")
	wantData(t, d, "t/1", "t/1")
	wantData(t, d, "t/2", "t/2")
	wantAbsent(t, d, "m/2")
}

// TestPutManyAfterInBatch: objstore.PutMany on the view honours After
// within a batch: a manifest naming the batch's DeferAll index is durable
// only with it; if the manifest fails the index stays volatile.
func TestPutManyAfterInBatch(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 8})
	d := s.Deferring()
	batch := func(index, manifest string) []objstore.PutResult {
		return objstore.PutMany(ctx, d, []objstore.PutRequest{
			{Key: index, Data: []byte(index), Cond: objstore.CreateOnly, Durability: objstore.DeferAll},
			{Key: manifest, Data: []byte(manifest), Cond: objstore.CreateOnly, After: []string{index}},
		})
	}
	res := batch("ix/1", "mf/1")
	if res[0].Err != nil || !res[0].Deferred || res[1].Err != nil {
		t.Fatalf("batch 1: %+v", res)
	}
	if s.IsVolatile("ix/1") {
		t.Fatal("the index is volatile after the manifest that names it succeeded")
	}
	// A second batch whose manifest loses its slot: on this store the
	// request still made its After durable first (as fs's sync round
	// does), so check a batch whose manifest fails before its write: an
	// injected transient fault.
	s.SetFaults(sim.Faults{TransientRate: 1})
	res = batch("ix/2", "mf/2")
	s.SetFaults(sim.Faults{})
	if res[0].Err == nil || res[1].Err == nil {
		t.Fatalf("batch 2 under transient faults: %+v", res)
	}
	if _, err := d.PutDeferred(ctx, "ix/3", []byte("ix/3")); err != nil {
		t.Fatal(err)
	}
	s.SetFaults(sim.Faults{TransientRate: 1})
	if _, err := d.PutAfterDeferred(ctx, "mf/3", []byte("mf/3"), objstore.CreateOnly, []string{"ix/3"}); !errors.Is(err, objstore.ErrTransient) {
		t.Fatalf("manifest under a transient fault: %v", err)
	}
	s.SetFaults(sim.Faults{})
	s.MachineCrash(0, 0)
	wantData(t, d, "ix/1", "ix/1")
	wantData(t, d, "mf/1", "mf/1")
	wantAbsent(t, d, "ix/3") // its manifest never got to sync it
	wantAbsent(t, d, "mf/3")
}

// TestMachineCrashSeeded: which volatile objects a crash keeps, tears or
// loses is drawn from the seed: the same seed and writes give the same
// outcome, keep 1 keeps everything, and the draws do not disturb the
// latency or fault streams.
func TestMachineCrashSeeded(t *testing.T) {
	outcome := func(seed uint64) ([]string, sim.CrashReport) {
		s := sim.New(sim.Config{Seed: seed})
		d := s.Deferring()
		for i := range 64 {
			k := fmt.Sprintf("k/%02d", i)
			if i%2 == 0 {
				_, _ = d.PutDeferred(t.Context(), k, []byte("x"))
			} else {
				_, _, _ = d.PutDeferredIntact(t.Context(), k, []byte("x"), objstore.CreateOnly)
			}
		}
		rep := s.MachineCrash(0.3, 0.5)
		var state []string
		for _, k := range s.Keys("k/") {
			if s.Torn(k) {
				k += " torn"
			}
			state = append(state, k)
		}
		return state, rep
	}
	a, ra := outcome(11)
	b, rb := outcome(11)
	if !slices.Equal(a, b) || ra != rb {
		t.Fatalf("one seed, two outcomes: %+v vs %+v", ra, rb)
	}
	if ra.Kept == 0 || ra.Torn == 0 || ra.Lost == 0 || ra.Kept+ra.Torn+ra.Lost != 64 {
		t.Fatalf("crash report %+v: want some kept, torn and lost, 64 in all", ra)
	}
	c, _ := outcome(12)
	if slices.Equal(a, c) {
		t.Fatal("two seeds, one outcome")
	}
	s := sim.New(sim.Config{Seed: 1})
	if _, err := s.Deferring().PutDeferred(t.Context(), "z", nil); err != nil {
		t.Fatal(err)
	}
	if rep := s.MachineCrash(1, 1); rep != (sim.CrashReport{Kept: 1}) {
		t.Fatalf("keep 1: %+v", rep)
	}
}

// TestCloneKeepsVolatility: a clone knows which of its objects are
// volatile or torn, independently of the original.
func TestCloneKeepsVolatility(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 9})
	d := s.Deferring()
	if _, err := d.PutDeferred(ctx, "a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	c := s.Clone()
	if err := d.SyncDeferred(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if !c.IsVolatile("a") {
		t.Fatal("the clone lost the volatility of a")
	}
	c.MachineCrash(0, 0)
	wantAbsent(t, c, "a")
	wantData(t, s, "a", "a")
}

// TestSyncFaultMakesNothingDurable: SyncDeferred fails with the store's
// transient rate (an fsync that fails), definite, with cause
// objstore.ErrSyncFailed, and makes none of its keys durable; its draw
// shifts no call's. As on Linux, no later sync makes a failed key durable:
// the store refuses to sync it again (red without the memory: the second
// sync succeeds), the Forgetful view lets the sync succeed and the key
// stays volatile (a crash loses it), and a new write of the key clears it.
func TestSyncFaultMakesNothingDurable(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 10})
	d := s.Deferring()
	for _, k := range []string{"f/1", "f/2", "f/3"} {
		if _, err := d.PutDeferred(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	s.SetFaults(sim.Faults{TransientRate: 1})
	err := d.SyncDeferred(ctx, []string{"f/1", "f/2", "f/3"})
	if !errors.Is(err, objstore.ErrTransient) || !errors.Is(err, objstore.ErrSyncFailed) || objstore.IsAmbiguous(err) || s.SyncFaults() != 1 {
		t.Fatalf("sync under transient rate 1: %v (%d injected), want a definite ErrTransient with ErrSyncFailed", err, s.SyncFaults())
	}
	if s.Counters().Requests() != 3 {
		t.Fatalf("a sync counted as a request: %+v", s.Counters())
	}
	s.SetFaults(sim.Faults{})
	if err := d.SyncDeferred(ctx, []string{"f/2"}); !errors.Is(err, objstore.ErrSyncFailed) || !errors.Is(err, objstore.ErrTransient) {
		t.Fatalf("sync of a key whose sync failed: %v, want ErrSyncFailed again", err)
	}
	if err := s.Forgetful().SyncDeferred(ctx, []string{"f/2"}); err != nil || !s.IsVolatile("f/2") {
		t.Fatalf("forgetful sync of a failed key: %v, volatile %v; want success, still volatile", err, s.IsVolatile("f/2"))
	}
	if _, _, err := d.PutDeferredIntact(ctx, "f/3", []byte("f/3 again"), objstore.Unconditional); err != nil {
		t.Fatal(err)
	}
	if err := d.SyncDeferred(ctx, []string{"f/3"}); err != nil {
		t.Fatalf("sync of a failed key written again: %v", err)
	}
	s.MachineCrash(0, 0)
	wantAbsent(t, d, "f/1")
	wantAbsent(t, d, "f/2")
	wantData(t, d, "f/3", "f/3 again")
}

// TestPublishSyncFault: PutAfterDeferred's sync of its deferred keys fails
// as SyncDeferred's does (FailSyncs, or a fault draw), definite, before
// the key is written, and marks the deferred keys failed: the next
// PutAfterDeferred naming them fails again.
func TestPublishSyncFault(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 10})
	d := s.Deferring()
	if _, err := d.PutDeferred(ctx, "v/1", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s.FailSyncs(1)
	for i := range 2 {
		_, err := d.PutAfterDeferred(ctx, "m/1", []byte("m"), objstore.CreateOnly, []string{"v/1"})
		if !errors.Is(err, objstore.ErrSyncFailed) || objstore.IsAmbiguous(err) {
			t.Fatalf("publish %d after a failed sync: %v, want a definite ErrSyncFailed", i, err)
		}
		wantAbsent(t, d, "m/1")
	}
}
