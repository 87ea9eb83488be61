package storetest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

// The local-disk store, each subtest in a fresh directory (so in the
// layout new roots get, trie3). It stores a fresh random write token per
// Put, so its ETags are unique even for identical bytes.
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

// The local-disk store over a root in an older layout, trie1 or trie2, as
// an earlier version left it (its marker directory .layout-trie1 or
// .layout-trie2): such a root keeps its mapping and must keep every rule
// of the contract.
func init() {
	for _, l := range []string{"trie1", "trie2"} {
		register("fs-"+l, func(t *testing.T) objstore.Store {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, ".layout-"+l), 0o755); err != nil {
				t.Fatal(err)
			}
			s, err := fs.Open(dir)
			if err != nil {
				t.Fatalf("fs.Open: %v", err)
			}
			return s
		}, storetest.RunOptions{UniqueETags: true})
	}
}
