package fs

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"golang.org/x/sys/unix"
)

// leafSync is what one SyncDeferred did: the directories its walk opened
// one at a time and those it opened in one openat2, the paths it fsynced
// (below the root, "" the root itself), its SyncStats and its outcome.
type leafSync struct {
	walk, oneShot, oneShotOK int64
	fsynced                  map[string]int
	stats                    SyncStats
	err                      error
	outcome                  string
}

// syncCounted is SyncDeferred of keys on s, counting its directory opens
// (countDirOpens with refusal) and recording its fsyncs.
func syncCounted(t *testing.T, s *Store, keys []string, refusal error) leafSync {
	t.Helper()
	c := countDirOpens(t, refusal)
	synced := recordFsyncs(t)
	before := s.SyncStats()
	err := s.SyncDeferred(context.Background(), keys)
	got := leafSync{walk: c.walk.Load(), oneShot: c.oneShot.Load(), oneShotOK: c.oneShotOK.Load(),
		fsynced: map[string]int{}, stats: s.SyncStats().Sub(before), err: err, outcome: outcome(err)}
	for p, n := range synced() {
		rel, rerr := filepath.Rel(s.Root(), p)
		if rerr != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("fsynced %s, outside the root", p)
		}
		if rel == "." {
			rel = ""
		}
		got.fsynced[rel] = n
	}
	return got
}

// TestDeferredSyncFastPathOpensNoDirectory: in the steady state (a
// commit's fragment and table version in the leaf directories of their
// ULID window, which an earlier sync made known durable) a sync opens
// each leaf in one openat2 from the root and no directory one component
// at a time (the walk opened every directory on both paths, 17 in all),
// and it fsyncs exactly what the walk fsyncs (openat2 refused, ENOSYS:
// every sync walks): the two files and their two leaf directories, in
// one round. Red without the fast path (the walk's opens).
func TestDeferredSyncFastPathOpensNoDirectory(t *testing.T) {
	ctx := context.Background()
	commits := modelCommits(2) // one ULID window: the same two leaves
	for _, refusal := range []error{nil, unix.ENOSYS} {
		name := "openat2"
		if refusal != nil {
			name = "walk only"
		}
		t.Run(name, func(t *testing.T) {
			s := openT(t)
			var runs []leafSync
			for _, c := range commits {
				for _, k := range []string{c.frag, c.version} {
					if _, err := s.PutDeferred(ctx, k, []byte("v")); err != nil {
						t.Fatal(err)
					}
				}
				runs = append(runs, syncCounted(t, s, []string{c.frag, c.version}, refusal))
			}
			c := commits[1]
			all := int64(fullPathDirs(s, c.frag, c.version) - 1) // every directory on both paths, not the root
			first, steady := runs[0], runs[1]
			if first.walk != all || first.oneShotOK != 0 {
				t.Errorf("first sync: %d directories walked, %d opened in one openat2; want %d, 0", first.walk, first.oneShotOK, all)
			}
			wantWalk, wantOneShot := int64(0), int64(2)
			if refusal != nil {
				wantWalk, wantOneShot = all, 1 // ENOSYS is asked once, then remembered
			}
			if steady.walk != wantWalk || steady.oneShot != wantOneShot || steady.oneShotOK != 2-wantWalk/all*2 {
				t.Errorf("steady-state sync: %d directories walked, %d openat2 calls (%d opened); want %d, %d (%d)",
					steady.walk, steady.oneShot, steady.oneShotOK, wantWalk, wantOneShot, 2-wantWalk/all*2)
			}
			want := map[string]int{}
			for _, k := range []string{c.frag, c.version} {
				names := s.layout.encodeKey(k)
				want[filepath.Join(names...)] = 1
				want[filepath.Join(names[:len(names)-1]...)] = 1
			}
			if !maps.Equal(steady.fsynced, want) {
				t.Errorf("steady-state sync fsynced %v, want %v", steady.fsynced, want)
			}
			if steady.stats != (SyncStats{Files: 2, Dirs: 2, Rounds: 1}) || steady.outcome != "ok" {
				t.Errorf("steady-state sync: %+v, %s; want 2 files, 2 directories, 1 round, ok", steady.stats, steady.outcome)
			}
		})
	}
}

// TestDeferredSyncFastPathRefusesSymlink: a directory the Store knows
// durable, the leaf or one above it, moved elsewhere in the root and
// replaced by a symlink to it (so the leaf reached through the link has
// the very identity the Store knows it by, and RESOLVE_BENEATH alone
// would let the kernel follow it): the fast path's openat2 refuses the
// link and the walk gives its exact error (the same outcome as with
// openat2 absent, ENOSYS), an ErrTransient caused by errNotStorable;
// nothing is fsynced. Red if the fast path follows a symlink above the
// leaf (the sync then succeeds through the link).
func TestDeferredSyncFastPathRefusesSymlink(t *testing.T) {
	ctx := context.Background()
	for _, p := range []struct{ name, moved, to, target string }{
		{name: "ancestor", moved: "g.d", to: "h.d", target: "h.d"},
		{name: "leaf", moved: "g.d/x.d", to: "g.d/y.d", target: "y.d"},
	} {
		t.Run(p.name, func(t *testing.T) {
			run := func(t *testing.T, refusal error) leafSync {
				s := openT(t)
				for _, k := range []string{"g/x/k0", "g/x/k1"} {
					if _, err := s.PutDeferred(ctx, k, []byte("v")); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.SyncDeferred(ctx, []string{"g/x/k0"}); err != nil {
					t.Fatal(err)
				}
				if s.durable.size() != 2 {
					t.Fatalf("the store knows %d directories, want g.d and x.d", s.durable.size())
				}
				if err := os.Rename(filepath.Join(s.Root(), p.moved), filepath.Join(s.Root(), p.to)); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(p.target, filepath.Join(s.Root(), p.moved)); err != nil {
					t.Fatal(err)
				}
				fast := s.stats.fastLeaves.Load()
				got := syncCounted(t, s, []string{"g/x/k1"}, refusal)
				if n := s.stats.fastLeaves.Load() - fast; n != 0 {
					t.Errorf("took %d leaves on the fast path through a symlink", n)
				}
				if len(got.fsynced) != 0 {
					t.Errorf("fsynced %v through a symlink", got.fsynced)
				}
				return got
			}
			oneShot := run(t, nil)
			if oneShot.oneShot != 1 || oneShot.oneShotOK != 0 {
				t.Errorf("the fast path made %d openat2 calls, %d opened; want 1, 0", oneShot.oneShot, oneShot.oneShotOK)
			}
			walked := run(t, unix.ENOSYS)
			if oneShot.outcome != walked.outcome {
				t.Errorf("fast path %q, walk %q", oneShot.outcome, walked.outcome)
			}
			if !errors.Is(walked.err, objstore.ErrTransient) || !errors.Is(walked.err, errNotStorable) {
				t.Errorf("walk: %q, want ErrTransient caused by errNotStorable", walked.outcome)
			}
		})
	}
}

// TestDeferredSyncFastPathMissingKey: a missing key below a leaf taken on
// the fast path fails exactly as below a walked one.
func TestDeferredSyncFastPathMissingKey(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	if _, err := s.PutDeferred(ctx, "g/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	keys := []string{"g/a", "g/missing"}
	walked := s.SyncDeferred(ctx, keys)
	if err := s.SyncDeferred(ctx, []string{"g/a"}); err != nil {
		t.Fatal(err)
	}
	fast := s.stats.fastLeaves.Load()
	err := s.SyncDeferred(ctx, keys)
	if n := s.stats.fastLeaves.Load() - fast; n != 1 {
		t.Errorf("took %d leaves on the fast path, want 1 (g.d)", n)
	}
	if walked == nil || err == nil || outcome(err) != outcome(walked) || errors.Is(err, errNotStorable) {
		t.Errorf("fast path %q, walk %q; want the same failure", outcome(err), outcome(walked))
	}
}

// BenchmarkDeferredSyncDirs times the directory work of a steady-state
// deferred sync (a commit's fragment and table version, both leaves
// known durable) without its fsyncs (fsyncFd made a no-op, so the
// figure is what the sync spends besides the file system's commit):
// fast, the leaves opened in one openat2 each (openKnownLeaves); walk,
// openat2 made to report ENOSYS, so the sync walks both paths (15
// directories) as before the fast path. Reports the directories walked
// a sync (walked/sync); ns/op is the sync's time.
func BenchmarkDeferredSyncDirs(b *testing.B) {
	ctx := context.Background()
	c := modelCommits(1)[0]
	keys := []string{c.frag, c.version}
	for _, side := range []string{"fast", "walk"} {
		b.Run(side, func(b *testing.B) {
			s, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				if _, err := s.PutDeferred(ctx, k, []byte("v")); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.SyncDeferred(ctx, keys); err != nil {
				b.Fatal(err)
			}
			oldSync, old2 := fsyncFd, openat2
			fsyncFd = func(int) error { return nil }
			if side == "walk" {
				openat2 = func(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }
			}
			defer func() { fsyncFd, openat2 = oldSync, old2; noOpenat2.Store(false) }()
			walked := s.stats.walkedDirs.Load()
			n := 0
			for b.Loop() {
				if err := s.SyncDeferred(ctx, keys); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(s.stats.walkedDirs.Load()-walked)/float64(n), "walked/sync")
		})
	}
}
