package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/graphkernel/graphkernel/objstore"
)

// TestDeleteManySyncsEachDirectoryOnce: a batched delete of 20 keys in
// two directories (g/adj/a0* and g/data/a0* map to g.d/adj.d/a0.c and
// g.d/data.d/a0.c) and one absent key removes them all, fsyncs each
// directory once, both in one round, and prunes the directories it
// emptied, where one Delete a key (objstore.DeleteMany's fallback) made
// 20 rounds of one fsync each (red without DeleteMany).
func TestDeleteManySyncsEachDirectoryOnce(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	var keys []string
	for i := 0; i < 10; i++ {
		keys = append(keys, fmt.Sprintf("g/adj/a%02d", i), fmt.Sprintf("g/data/a%02d", i))
	}
	for _, k := range keys {
		mustPut(t, s, k, "v", objstore.CreateOnly)
	}
	mustPut(t, s, "g/keep", "stays", objstore.CreateOnly)
	fsyncs := recordFsyncs(t)
	before := s.SyncStats()
	errs := objstore.DeleteMany(ctx, s, append(keys, "g/adj/absent"))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	for _, k := range keys {
		if _, err := s.Get(ctx, k); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("%s after the batch: %v, want not found", k, err)
		}
	}
	if d := s.SyncStats().Sub(before); d.Rounds != 1 || d.Dirs != 2 || d.Files != 0 {
		t.Errorf("the batch synced %+v, want 1 round of 2 directories", d)
	}
	got := fsyncs()
	if len(got) != 2 {
		t.Errorf("fsynced %v, want each emptied directory once", got)
	}
	for p, n := range got {
		if n != 1 {
			t.Errorf("%s fsynced %d times", p, n)
		}
	}
	for _, d := range []string{"adj.d", "data.d"} {
		if _, err := os.Stat(filepath.Join(s.Root(), "g.d", d)); !os.IsNotExist(err) {
			t.Errorf("g.d/%s not pruned: %v", d, err)
		}
	}
	if _, err := s.Get(ctx, "g/keep"); err != nil {
		t.Fatalf("g/keep: %v", err)
	}
}

// TestDeleteManyFailedSyncIsAmbiguous: when the round's fsync fails,
// every key the batch unlinked is an ambiguous ErrTransient (the unlink
// happened, its durability is unknown) and deleting them again, batched
// or not, fails with ErrSyncFailed (the Store remembers them) instead of
// reporting the absent keys deleted; written again, they delete. Red
// without the memory: the second batch returns nil for every key.
func TestDeleteManyFailedSyncIsAmbiguous(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	keys := []string{"g/adj/a", "g/adj/b", "g/data/c"}
	for _, k := range keys {
		mustPut(t, s, k, "v", objstore.CreateOnly)
	}
	old := fsyncFd
	fsyncFd = func(int) error { return unix.EIO }
	t.Cleanup(func() { fsyncFd = old })
	for i, err := range objstore.DeleteMany(ctx, s, keys) {
		if !objstore.IsAmbiguous(err) || !errors.Is(err, objstore.ErrTransient) {
			t.Fatalf("key %s: %v, want an ambiguous ErrTransient", keys[i], err)
		}
	}
	fsyncFd = old
	for i, err := range objstore.DeleteMany(ctx, s, keys) {
		wantUnlinkSyncFailed(t, "batched delete again", keys[i], err)
	}
	wantUnlinkSyncFailed(t, "delete again", keys[0], s.Delete(ctx, keys[0]))
	for _, k := range keys {
		mustPut(t, s, k, "again", objstore.CreateOnly)
	}
	for i, err := range objstore.DeleteMany(ctx, s, keys) {
		if err != nil {
			t.Fatalf("deleting %s written again: %v", keys[i], err)
		}
	}
	for _, k := range keys {
		if _, err := s.Get(ctx, k); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("%s: %v, want not found", k, err)
		}
	}
}

// TestDeleteManySharesAnFsyncOnlyWithinOneIdentity: keys of one path
// whose directory had another identity at each unlink (as if removed and
// made again between them: dirIdentity replaced to say so) get an fsync
// each, so an unlink in a later incarnation is never reported durable by
// the sync of an earlier one; a directory without an identity is synced
// for each key too.
func TestDeleteManySharesAnFsyncOnlyWithinOneIdentity(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		id   func(orig func(int) (dirID, bool)) func(int) (dirID, bool)
	}{
		{"new identity each time", func(orig func(int) (dirID, bool)) func(int) (dirID, bool) {
			var n uint32
			return func(fd int) (dirID, bool) {
				id, ok := orig(fd)
				n++
				id.gen += n
				return id, ok
			}
		}},
		{"no identity", func(func(int) (dirID, bool)) func(int) (dirID, bool) {
			return func(int) (dirID, bool) { return dirID{}, false }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openT(t)
			keys := []string{"g/adj/a1", "g/adj/a2", "g/adj/a3"}
			for _, k := range keys {
				mustPut(t, s, k, "v", objstore.CreateOnly)
			}
			old := dirIdentity
			dirIdentity = tc.id(old)
			t.Cleanup(func() { dirIdentity = old })
			before := s.SyncStats()
			for i, err := range objstore.DeleteMany(ctx, s, keys) {
				if err != nil {
					t.Fatalf("key %s: %v", keys[i], err)
				}
			}
			if d := s.SyncStats().Sub(before); d.Dirs != uint64(len(keys)) || d.Rounds != 1 {
				t.Errorf("synced %+v, want %d directory fsyncs in one round", d, len(keys))
			}
		})
	}
}

// TestDeleteManyBoundsItsOpenDirectories: keys in 40 directories are
// deleted in two rounds, 32 directories (deleteGroupDirs) and 8, so a
// batch never holds more than 32 directory chains open; every key goes.
func TestDeleteManyBoundsItsOpenDirectories(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	var keys []string
	for i := 0; i < 40; i++ {
		keys = append(keys, fmt.Sprintf("g/d%02d/x", i))
		mustPut(t, s, keys[i], "v", objstore.CreateOnly)
	}
	before := s.SyncStats()
	for i, err := range objstore.DeleteMany(ctx, s, keys) {
		if err != nil {
			t.Fatalf("key %s: %v", keys[i], err)
		}
	}
	if d := s.SyncStats().Sub(before); d.Rounds != 2 || d.Dirs != 40 {
		t.Errorf("synced %+v, want 40 directories in 2 rounds (32 and 8)", d)
	}
	for _, k := range keys {
		if _, err := s.Get(ctx, k); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("%s: %v, want not found", k, err)
		}
	}
}
