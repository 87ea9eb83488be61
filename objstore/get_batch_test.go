package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestOversizedGetBatchIsRejected: a BatchGetter refuses more than
// MaxGetBatch keys, every key ErrRejected naming it, and sends nothing;
// GetMany splits such a batch instead (one call a MaxGetBatch keys).
func TestOversizedGetBatchIsRejected(t *testing.T) {
	if objstore.OversizedGetBatch(make([]string, objstore.MaxGetBatch)) != nil {
		t.Fatal("a batch at the bound was refused")
	}
	calls := 0
	st := sim.New(sim.Config{Seed: 1, Hook: sim.HookFuncs{Before: func(_ context.Context, _ *sim.Call) error { calls++; return nil }}})
	keys := make([]string, objstore.MaxGetBatch+1)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%04d", i)
	}
	if _, err := st.Put(t.Context(), keys[len(keys)-1], []byte("x"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	calls = 0
	for i, r := range st.GetMany(t.Context(), keys) {
		var e *objstore.Error
		if !errors.Is(r.Err, objstore.ErrRejected) || !errors.As(r.Err, &e) || e.Key != keys[i] {
			t.Fatalf("key %d of an oversized batch: %v, want ErrRejected naming it", i, r.Err)
		}
	}
	if calls != 0 {
		t.Fatalf("an oversized batch made %d calls, want none", calls)
	}
	got := objstore.GetMany(t.Context(), st, keys)
	if calls != 2 {
		t.Fatalf("GetMany split %d keys into %d calls, want 2", len(keys), calls)
	}
	for i, r := range got[:len(keys)-1] {
		if !errors.Is(r.Err, objstore.ErrNotFound) {
			t.Fatalf("GetMany split: key %d: %v, want ErrNotFound", i, r.Err)
		}
	}
	if r := got[len(keys)-1]; r.Err != nil || string(r.Object.Data) != "x" {
		t.Fatalf("GetMany split: the last key: %q %v", r.Object.Data, r.Err)
	}
}
