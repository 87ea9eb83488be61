package sim_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestGetManyIsOneCall: a batched read is one call (one hook call with
// every valid key in Call.Keys, one Get request in Counters); each key is
// answered as Get answers it (bytes and ETag, ErrNotFound, a torn object's
// corruption), BytesRead counts what was read, and an invalid key fails
// alone without being sent.
func TestGetManyIsOneCall(t *testing.T) {
	ctx := t.Context()
	var calls []sim.Call
	s := sim.New(sim.Config{Seed: 2})
	d := s.Deferring()
	etag, err := d.Put(ctx, "a", []byte("abc"), objstore.CreateOnly)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.PutDeferred(ctx, "torn", []byte("lost")); err != nil {
		t.Fatal(err)
	}
	if rep := s.MachineCrash(0, 1); rep.Torn != 1 {
		t.Fatalf("crash report %+v, want one torn", rep)
	}
	if _, err := d.PutDeferred(ctx, "vol", []byte("volatile")); err != nil { // visible, not durable: read as Get reads it
		t.Fatal(err)
	}
	s.SetHook(sim.HookFuncs{Before: func(_ context.Context, c *sim.Call) error {
		calls = append(calls, *c)
		return nil
	}})
	before := s.Counters()
	keys := []string{"vol", "missing", "/bad", "a", "torn"}
	got := objstore.GetMany(ctx, d, keys)
	if len(calls) != 1 || calls[0].Op != objstore.OpGet || calls[0].Key != "vol" ||
		!slices.Equal(calls[0].Keys, []string{"vol", "missing", "a", "torn"}) {
		t.Fatalf("calls %+v, want one get of the four valid keys", calls)
	}
	after := s.Counters()
	if n := after.Get.Requests - before.Get.Requests; n != 1 {
		t.Errorf("%d Get requests counted, want 1", n)
	}
	if n := after.BytesRead - before.BytesRead; n != uint64(len("abc")+len("volatile")) {
		t.Errorf("BytesRead grew by %d, want %d", n, len("abc")+len("volatile"))
	}
	if string(got[0].Object.Data) != "volatile" || got[0].Err != nil {
		t.Errorf("volatile key: %q %v", got[0].Object.Data, got[0].Err)
	}
	wantKind(t, "missing key", got[1].Err, objstore.ErrNotFound, "missing")
	wantKind(t, "invalid key", got[2].Err, objstore.ErrInvalidKey, "/bad")
	if string(got[3].Object.Data) != "abc" || got[3].Object.ETag != etag || got[3].Err != nil {
		t.Errorf("present key: %q %q %v, want abc %q", got[3].Object.Data, got[3].Object.ETag, got[3].Err, etag)
	}
	wantCorrupt(t, "torn key", got[4].Err)
	for i, k := range keys {
		obj, err := d.Get(ctx, k)
		if !slices.Equal(obj.Data, got[i].Object.Data) || obj.ETag != got[i].Object.ETag || errors.Is(err, objstore.ErrNotFound) != errors.Is(got[i].Err, objstore.ErrNotFound) {
			t.Errorf("key %q: GetMany %q %q %v, Get %q %q %v", k, got[i].Object.Data, got[i].Object.ETag, got[i].Err, obj.Data, obj.ETag, err)
		}
	}
	calls = nil
	if got := s.GetMany(ctx, []string{"/x", ""}); len(calls) != 0 || !errors.Is(got[0].Err, objstore.ErrInvalidKey) || !errors.Is(got[1].Err, objstore.ErrInvalidKey) {
		t.Errorf("a batch of invalid keys: %d calls, %v, %v; want no call, ErrInvalidKey", len(calls), got[0].Err, got[1].Err)
	}
	if got := s.GetMany(ctx, nil); len(got) != 0 || len(calls) != 0 {
		t.Errorf("an empty batch: %d results, %d calls", len(got), len(calls))
	}
}

// TestGetManyFaultFailsEveryKey: a fault on a batched read fails every key
// of it (each error naming its own key), and it is one fault decision.
func TestGetManyFaultFailsEveryKey(t *testing.T) {
	ctx := t.Context()
	s := sim.New(sim.Config{Seed: 3})
	for _, k := range []string{"a", "b"} {
		if _, err := s.Put(ctx, k, []byte(k), objstore.CreateOnly); err != nil {
			t.Fatal(err)
		}
	}
	s.SetFaults(sim.Faults{TransientRate: 1})
	got := s.GetMany(ctx, []string{"a", "b", "c"})
	for i, k := range []string{"a", "b", "c"} {
		wantKind(t, "faulted batch", got[i].Err, objstore.ErrTransient, k)
	}
	if c := s.Counters(); c.Faults.Transient != 1 || c.Get.Requests != 1 || c.Get.Errors != 1 {
		t.Errorf("counters %+v, want one faulted Get request", c)
	}
	s.SetFaults(sim.Faults{})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for i, r := range s.GetMany(cctx, []string{"a", "b"}) {
		if !errors.Is(r.Err, objstore.ErrTransient) || !errors.Is(r.Err, context.Canceled) {
			t.Errorf("key %d of a cancelled batch: %v", i, r.Err)
		}
	}
}

// TestGetManyRejectsOversizedBatch: more than objstore.MaxGetBatch keys
// fail every key ErrRejected without a call.
func TestGetManyRejectsOversizedBatch(t *testing.T) {
	calls := 0
	s := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{Before: func(context.Context, *sim.Call) error { calls++; return nil }}})
	keys := make([]string, objstore.MaxGetBatch+1)
	for i := range keys {
		keys[i] = "k"
	}
	for i, r := range s.GetMany(t.Context(), keys) {
		if !errors.Is(r.Err, objstore.ErrRejected) {
			t.Fatalf("key %d: %v, want ErrRejected", i, r.Err)
		}
	}
	if calls != 0 {
		t.Fatalf("%d calls for an oversized batch, want none", calls)
	}
}

// wantKind checks that err is an *objstore.Error of kind naming key.
func wantKind(t *testing.T, what string, err, kind error, key string) {
	t.Helper()
	var e *objstore.Error
	if !errors.Is(err, kind) || !errors.As(err, &e) || e.Key != key {
		t.Errorf("%s: %v, want %v naming %q", what, err, kind, key)
	}
}
