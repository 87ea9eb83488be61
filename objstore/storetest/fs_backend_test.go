package storetest_test

import (
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

// The local-disk store, each subtest in a fresh directory. It stores a
// fresh random write token per Put, so its ETags are unique even for
// identical bytes.
func init() {
	register("fs", func(t *testing.T) objstore.Store {
		s, err := fs.Open(t.TempDir())
		if err != nil {
			t.Fatalf("fs.Open: %v", err)
		}
		return s
	}, storetest.RunOptions{UniqueETags: true})
}

// The fixture-building fs store (fs.Options.NoSync): it skips fsync only,
// so it must keep every rule of the contract.
func init() {
	register("fs-nosync", func(t *testing.T) objstore.Store {
		s, err := fs.OpenWith(t.TempDir(), fs.Options{NoSync: true})
		if err != nil {
			t.Fatalf("fs.OpenWith: %v", err)
		}
		return s
	}, storetest.RunOptions{UniqueETags: true})
}
