package fs

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// TestPutSyncsNewDirectories: a durable Put that makes directories fsyncs,
// before it returns, the placed name's directory and the parent of every
// directory it made (each a mkdir's entry), and nothing else besides its
// temp file: red if syncMade is skipped (the new entries would be durable
// only by luck) or if it syncs directories the walk did not make.
func TestPutSyncsNewDirectories(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	mustPut(t, s, "g/x", "seed", objstore.CreateOnly) // g.d exists already
	synced := recordFsyncs(t)
	// g.d (exists), h.d (new), 12.c (new: the trie's first chunk), then "ab.o".
	if _, err := s.Put(ctx, "g/h/12ab", []byte("v"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	root := s.Root()
	g := filepath.Join(root, "g.d")
	h := filepath.Join(g, "h.d")
	leaf := filepath.Join(h, "12.c")
	want := map[string]bool{leaf: true, h: true, g: true} // the leaf; parents of 12.c and h.d
	got := synced()
	for p := range want {
		if got[p] != 1 {
			t.Errorf("directory %s synced %d times, want 1 (all: %v)", p, got[p], got)
		}
	}
	for p, n := range got {
		if want[p] || filepath.Dir(p) == filepath.Join(root, tmpDirName) {
			continue // a wanted directory, or the temp file
		}
		t.Errorf("synced %s (%d times), which the Put did not make or place into", p, n)
	}
	if _, ok := got[root]; ok {
		t.Errorf("synced the root, whose entries did not change")
	}
}
