package fs

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/oklog/ulid/v2"
)

// ulidKeys returns n keys dir/<ULID>, ULIDs of one millisecond (so of one
// 32.8-second window) with seeded random parts.
func ulidKeys(dir string, n int) []string {
	entropy := rand.NewChaCha8([32]byte{7})
	ms := ulid.Timestamp(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = dir + ulid.MustNew(ms, entropy).String()
	}
	return keys
}

// Steady state of trie3: once the first ULID of a window has made its
// directories, a durable create-only Put of another ULID of the window
// makes none (Mkdirs 0) and syncs 1 file and 1 directory in 2 rounds,
// where trie2 makes a fresh chain of trie directories for each (8-14:
// the control, which shows the count is sensitive).
func TestTrie3ULIDPutsMakeNoDirectories(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		l         layout
		minMkdirs uint64 // over the steady-state Puts
		maxMkdirs uint64
	}{
		{layoutTrie3, 0, 0},
		{layoutTrie2, 8 * 50, 14 * 50},
	} {
		t.Run(tc.l.marker(), func(t *testing.T) {
			dir := t.TempDir()
			if tc.l != newestLayout { // an older root, as its version left it
				if err := os.Mkdir(filepath.Join(dir, tc.l.marker()), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(dir)
			if err != nil || s.layout != tc.l {
				t.Fatalf("open: %v (layout %d)", err, s.layout)
			}
			keys := ulidKeys("g/data/Person/", 51)
			mustPut(t, s, keys[0], "first", objstore.CreateOnly)
			before := s.SyncStats()
			for _, k := range keys[1:] {
				if _, err := s.Put(ctx, k, []byte("v"), objstore.CreateOnly); err != nil {
					t.Fatal(err)
				}
			}
			d := s.SyncStats().Sub(before)
			t.Logf("%s: 50 Puts: %+v", tc.l.marker(), d)
			if d.Mkdirs < tc.minMkdirs || d.Mkdirs > tc.maxMkdirs {
				t.Errorf("50 ULID Puts made %d directories, want %d..%d", d.Mkdirs, tc.minMkdirs, tc.maxMkdirs)
			}
			if tc.l == layoutTrie3 && d != (SyncStats{Files: 50, Dirs: 50, Rounds: 100}) {
				t.Errorf("50 ULID Puts: %+v, want 50 files and 50 directories in 100 rounds, no mkdir", d)
			}
			requireKeys(t, s, slices.Sorted(slices.Values(keys))...)
		})
	}
}
