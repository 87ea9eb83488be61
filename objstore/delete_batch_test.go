package objstore_test

import (
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestOversizedBatchIsRejected: a BatchDeleter refuses more than
// MaxDeleteBatch keys, every key ErrRejected, and deletes nothing;
// DeleteMany splits such a batch instead.
func TestOversizedBatchIsRejected(t *testing.T) {
	if objstore.OversizedBatch(make([]string, objstore.MaxDeleteBatch)) != nil {
		t.Fatal("a batch at the bound was refused")
	}
	st := sim.New(sim.Config{Seed: 1})
	keys := make([]string, objstore.MaxDeleteBatch+1)
	for i := range keys {
		keys[i] = "k" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
	}
	if _, err := st.Put(t.Context(), keys[0], []byte("x"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	for i, err := range st.DeleteMany(t.Context(), keys) {
		if !errors.Is(err, objstore.ErrRejected) {
			t.Fatalf("key %d of an oversized batch: %v, want ErrRejected", i, err)
		}
	}
	if _, err := st.Head(t.Context(), keys[0]); err != nil {
		t.Fatalf("an oversized batch deleted a key: %v", err)
	}
	for i, err := range objstore.DeleteMany(t.Context(), st, keys) {
		if err != nil {
			t.Fatalf("DeleteMany split: key %d: %v", i, err)
		}
	}
}
