package maintain

import (
	"context"
	"errors"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// TestImmutableCacheBounds: an entry neither of the last two collections
// used is dropped at a collection's end, an insert past maxImmutableBytes
// is skipped, and bytes a decode refused are never kept (the next read
// goes to the store again).
func TestImmutableCacheBounds(t *testing.T) {
	var c immutableCache
	c.beginRun()
	c.put("a", "1", 1)
	c.put("b", "2", 1)
	c.endRun()
	c.beginRun()
	if _, ok := c.get("a"); !ok {
		t.Fatal("a, read in the last collection, was dropped")
	}
	c.endRun()
	c.beginRun()
	c.endRun() // b unused by this run and the one before: dropped
	if _, ok := c.get("b"); ok {
		t.Error("b, unused by the last two collections, was kept")
	}
	if c.bytes != 1 {
		t.Errorf("bytes = %d after dropping b, want 1", c.bytes)
	}
	c.put("big", "big", maxImmutableBytes)
	if _, ok := c.get("big"); ok || c.bytes != 1 {
		t.Errorf("an insert past the bound was kept (bytes %d)", c.bytes)
	}

	ctx := context.Background()
	st := sim.New(sim.Config{Seed: 1})
	if _, err := st.Put(ctx, "k", []byte("bad"), objstore.Condition{}); err != nil {
		t.Fatal(err)
	}
	m := &Maintainer{store: st}
	refuse := errors.New("corrupt")
	for i := 0; i < 2; i++ {
		if _, _, err := readImmutable(ctx, m, "k", func([]byte) (string, error) { return "", refuse }); !errors.Is(err, refuse) {
			t.Fatalf("read %d: err = %v, want the decode's", i, err)
		}
		if _, ok := m.immut.get("k"); ok {
			t.Fatalf("read %d: bytes the decode refused were cached", i)
		}
	}
}
