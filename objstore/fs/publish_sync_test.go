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
// temp file, in two rounds (the temp; then the leaf and the new entries'
// parents at once): red if placedTargets skips the made directories (the
// new entries would be durable only by luck), if it syncs directories the
// walk did not make, or if the directories are synced one round each.
func TestPutSyncsNewDirectories(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	mustPut(t, s, "g/x", "seed", objstore.CreateOnly) // g.d exists already
	synced := recordFsyncs(t)
	before := s.SyncStats()
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
	if d := s.SyncStats().Sub(before); d != (SyncStats{Files: 1, Dirs: 3, Rounds: 2, Mkdirs: 2}) {
		t.Errorf("sync stats of the Put = %+v, want 1 file and 3 directories in 2 rounds, 2 mkdirs", d)
	}
	if _, ok := got[root]; ok {
		t.Errorf("synced the root, whose entries did not change")
	}
}
