package fs

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/oklog/ulid/v2"
	"golang.org/x/sys/unix"
)

// identityOf is the real dirIdentity (a test may replace dirIdentity):
// the crash model's notion of which inode a name holds.
var identityOf = dirIdentity

// durModel is the crash model over the fsync log across operations: an
// fsync of a directory makes durable the entries it holds at that moment
// (each name with the identity of what it names), an fsync of a file its
// data, and an OS crash keeps exactly what was made durable, nothing else
// (no ordered journal). Directories are known by identity, not path, so
// the entries of a directory removed and made again are not durable until
// it is fsynced again, nor its own entry until its parent is. An object
// survives a crash iff every entry on its path (the root's down to its
// own) is durable with the identity the path holds now, and its data is.
type durModel struct {
	t       *testing.T
	mu      sync.Mutex
	entries map[dirID]map[string]dirID // a directory's entries as of its last fsync (never mutated: replaced)
	data    map[dirID]bool
	// armed makes the Store's next pointPlaced save the state in placed:
	// what a crash at that moment keeps.
	armed  bool
	placed *durState
}

// durState is a copy of a durModel's durable state.
type durState struct {
	entries map[dirID]map[string]dirID
	data    map[dirID]bool
}

// recordDurability installs the crash model on fsyncFd and s's hook until
// the test ends.
func recordDurability(t *testing.T, s *Store) *durModel {
	m := &durModel{t: t, entries: map[dirID]map[string]dirID{}, data: map[dirID]bool{}}
	old := fsyncFd
	fsyncFd = func(fd int) error {
		m.synced(fd)
		return old(fd)
	}
	s.hook = func(point string) {
		if point != pointPlaced {
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.armed {
			m.armed = false
			m.placed = m.stateLocked()
		}
	}
	t.Cleanup(func() { fsyncFd = old; s.hook = nil })
	return m
}

// mustID is identityOf(fd), failing the test where the file system
// reports no birth time (the model needs identities).
func (m *durModel) mustID(fd int) dirID {
	id, ok := identityOf(fd)
	if !ok {
		m.t.Fatalf("no identity for fd %d: the crash model needs statx birth times", fd)
	}
	return id
}

// synced records an fsync of fd.
func (m *durModel) synced(fd int) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		m.t.Errorf("fstat of a synced fd: %v", err)
		return
	}
	id := m.mustID(fd)
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		m.mu.Lock()
		m.data[id] = true
		m.mu.Unlock()
		return
	}
	names, err := osReadDirNames(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		m.t.Errorf("read a synced directory: %v", err)
		return
	}
	ents := map[string]dirID{}
	for _, name := range names {
		c, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			m.t.Errorf("open %s in a synced directory: %v", name, err)
			continue
		}
		ents[name] = m.mustID(c)
		unix.Close(c)
	}
	m.mu.Lock()
	m.entries[id] = ents
	m.mu.Unlock()
}

func (m *durModel) stateLocked() *durState {
	st := &durState{entries: map[dirID]map[string]dirID{}, data: map[dirID]bool{}}
	for k, v := range m.entries {
		st.entries[k] = v
	}
	for k, v := range m.data {
		st.data[k] = v
	}
	return st
}

// now is the durable state now.
func (m *durModel) now() *durState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stateLocked()
}

// lost returns what of key a crash in state st loses ("" if nothing): the
// first entry on its path not durable with the identity it holds now, or
// its data.
func (st *durState) lost(t *testing.T, s *Store, key string) string {
	t.Helper()
	dir, err := unix.Open(s.root, dirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { unix.Close(dir) }()
	cur, ok := identityOf(dir)
	if !ok {
		t.Fatal("no identity for the root")
	}
	names := s.layout.encodeKey(key)
	for i, name := range names {
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("%s: open %s: %v", key, name, err)
		}
		id, _ := identityOf(fd)
		unix.Close(dir)
		dir = fd
		if got, ok := st.entries[cur][name]; !ok || got != id {
			return fmt.Sprintf("the entry %s (durable: %v)", filepath.Join(names[:i+1]...), ok)
		}
		if i == len(names)-1 && !st.data[id] {
			return "its data"
		}
		cur = id
	}
	return ""
}

// putAfterDeferredModeled is PutAfterDeferred of key after deferred, and
// fails the test unless a crash at the moment its name was placed keeps
// every deferred object (its file and every entry on its path).
func putAfterDeferredModeled(t *testing.T, s *Store, m *durModel, key string, deferred []string) {
	t.Helper()
	m.mu.Lock()
	m.armed, m.placed = true, nil
	m.mu.Unlock()
	if _, err := s.PutAfterDeferred(context.Background(), key, []byte("manifest "+key), objstore.CreateOnly, deferred); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	st := m.placed
	m.mu.Unlock()
	if st == nil {
		t.Fatalf("%s: never placed", key)
	}
	for _, k := range deferred {
		if what := st.lost(t, s, k); what != "" {
			t.Errorf("a crash when %s was placed loses %s of deferred %s", key, what, k)
		}
	}
}

// modelCommit is one commit's keys, shaped as the kernel's: a fragment and
// a table version named by ULIDs (PutDeferred, PutDeferredIntact), and a
// manifest named by its inverted version (PutAfterDeferred).
type modelCommit struct {
	frag, version, manifest string
	newWindow               bool // its ULIDs are the first of their 32.8-second window
}

// modelCommits returns n commits, a new ULID window every 4 (8.192 s
// apart), all in one 17.5-minute window (so a new window makes exactly
// one directory for each ULID-named key), the manifests' versions
// counting down from 2^64-2 (a new trie directory every 10).
func modelCommits(n int) []modelCommit {
	entropy := rand.NewChaCha8([32]byte{9})
	base := ulid.Timestamp(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)) &^ (1<<20 - 1)
	table := ulid.MustNew(base, entropy).String()
	out := make([]modelCommit, n)
	for i := range out {
		ms := base + uint64(i)*8192
		out[i] = modelCommit{
			frag:      "g/data/T/" + ulid.MustNew(ms, entropy).String(),
			version:   "g/tables/T/" + table + "/a/" + ulid.MustNew(ms, entropy).String(),
			manifest:  fmt.Sprintf("g/branches/main/%d", uint64(1<<64-2)-uint64(i)),
			newWindow: i%4 == 0,
		}
	}
	return out
}

// modelCost is a manifest write's SyncStats, with the leaf directories
// its deferred sync took on the fast path and the directories its walk
// opened (syncCounters.fastLeaves, walkedDirs).
type modelCost struct {
	SyncStats
	fast, walked uint64
}

// runModelCommits writes the commits on s, checking each manifest
// against the crash model, and returns each manifest write's cost
// (PutAfterDeferred: the deferred keys' sync, its temp file, its name).
func runModelCommits(t *testing.T, s *Store, m *durModel, commits []modelCommit, after func(i int)) []modelCost {
	t.Helper()
	ctx := context.Background()
	costs := make([]modelCost, len(commits))
	for i, c := range commits {
		if _, err := s.PutDeferred(ctx, c.frag, []byte("fragment")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.PutDeferredIntact(ctx, c.version, []byte("version"), objstore.CreateOnly); err != nil {
			t.Fatal(err)
		}
		before, fast, walked := s.SyncStats(), s.stats.fastLeaves.Load(), s.stats.walkedDirs.Load()
		putAfterDeferredModeled(t, s, m, c.manifest, []string{c.frag, c.version})
		costs[i] = modelCost{s.SyncStats().Sub(before), s.stats.fastLeaves.Load() - fast, s.stats.walkedDirs.Load() - walked}
		if after != nil {
			after(i)
		}
	}
	return costs
}

// fullPathDirs is how many directories a sync of keys fsyncs without the
// cache: every directory on their paths and the root, each once.
func fullPathDirs(s *Store, keys ...string) uint64 {
	dirs := map[string]bool{"": true}
	for _, k := range keys {
		names := s.layout.encodeKey(k)
		for i := 1; i < len(names); i++ {
			dirs[strings.Join(names[:i], "/")] = true
		}
	}
	return uint64(len(dirs))
}

// TestDeferredSyncSkipsDurableDirectories: in the steady state a publish
// (PutAfterDeferred of a fragment and a table version, as a kernel
// commit) fsyncs the two object files, their two leaf directories (each
// holds a new entry), its temp file and its own leaf, and no other
// directory: the others this Store fsynced the parents of before (the
// first commit syncs every directory on the paths and the root). A new
// ULID window's directory, which PutDeferred made, costs its parent's
// fsync; a new manifest trie directory its parent's, as for any Put. And
// in the crash model every object a placed manifest names is durable,
// counting what earlier commits made durable: red if the leaf directory
// of a deferred file or the parent of a directory not known durable is
// skipped. A steady-state commit takes the fast path for both leaves
// (openKnownLeaves: each opened in one openat2, none walked); a commit
// in a new window walks both paths (its leaves are new).
func TestDeferredSyncSkipsDurableDirectories(t *testing.T) {
	s := openT(t)
	m := recordDurability(t, s)
	commits := modelCommits(24)
	costs := runModelCommits(t, s, m, commits, nil)
	var total, full uint64
	for i, c := range commits {
		d := costs[i]
		total += d.Dirs
		full += fullPathDirs(s, c.frag, c.version) + 1 + d.Mkdirs
		var want SyncStats
		switch {
		case i == 0:
			want = SyncStats{Files: 3, Dirs: fullPathDirs(s, c.frag, c.version) + 1 + d.Mkdirs, Rounds: 2, Mkdirs: d.Mkdirs}
		case c.newWindow:
			want = SyncStats{Files: 3, Dirs: 3 + 2 + d.Mkdirs, Rounds: 2, Mkdirs: d.Mkdirs}
		default:
			want = SyncStats{Files: 3, Dirs: 3 + d.Mkdirs, Rounds: 2, Mkdirs: d.Mkdirs}
		}
		if d.SyncStats != want {
			t.Errorf("commit %d (new window %v): %+v, want %+v", i, c.newWindow, d.SyncStats, want)
		}
		wantFast, wantWalked := uint64(2), uint64(0)
		if i == 0 || c.newWindow {
			wantFast, wantWalked = 0, fullPathDirs(s, c.frag, c.version)-1
		}
		if d.fast != wantFast || d.walked != wantWalked {
			t.Errorf("commit %d (new window %v): %d leaves on the fast path, %d directories walked; want %d, %d",
				i, c.newWindow, d.fast, d.walked, wantFast, wantWalked)
		}
	}
	t.Logf("24 publishes fsynced %d directories; syncing every directory on the paths: %d", total, full)
}

// TestDeferredSyncAgainAfterDirectoryRecreated: a directory this Store
// knows durable that is removed and made again is a new directory whose
// entry in its parent is not durable: the next sync of a key below it
// fsyncs that parent again (and the directory itself, which holds the new
// entry), and a crash keeps the key. Three ways:
//   - another Store on the root (another process) deletes the directory's
//     last key and prunes it, while the old directory is held open (so the
//     new one cannot take its inode number), and this Store's PutDeferred
//     makes it again: red if the cache trusts a path without checking the
//     identity;
//   - another process removes the directory and makes it again at once,
//     on a file system whose birth times have one-second granularity
//     (dirIdentity's birth time truncated; ext4 hands the new directory
//     the freed inode number, so device, inode and birth time all match):
//     red if the identity omits the inode's generation;
//   - this Store's Delete prunes it: the prune forgets it (red without
//     durableDirs.drop: the size check) and the next sync fsyncs the
//     parent again.
//
// Before the change a sync of a key below x.d takes the fast path
// (openKnownLeaves: x.d known, opened in one openat2); after it, x.d has
// a new identity (or is forgotten) and the sync walks: the first two
// ways are red if the fast path trusts a known path without comparing
// the identity it opened.
func TestDeferredSyncAgainAfterDirectoryRecreated(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []string{"another store", "another process, coarse birth times", "this store's delete"} {
		t.Run(tc, func(t *testing.T) {
			if tc == "another process, coarse birth times" {
				old := dirIdentity
				dirIdentity = func(fd int) (dirID, bool) {
					id, ok := old(fd)
					id.btimeNsec = 0
					return id, ok
				}
				t.Cleanup(func() { dirIdentity = old })
			}
			s := openT(t)
			m := recordDurability(t, s)
			if _, err := s.PutDeferred(ctx, "g/k", []byte("keeps g.d")); err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutDeferred(ctx, "g/x/k0", []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := s.SyncDeferred(ctx, []string{"g/k", "g/x/k0"}); err != nil {
				t.Fatal(err)
			}
			xd := filepath.Join(s.Root(), "g.d", "x.d")
			idOf := func() dirID {
				fd, err := unix.Open(xd, dirFlags, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer unix.Close(fd)
				id, ok := dirIdentity(fd)
				if !ok {
					t.Fatal("no identity for x.d")
				}
				return id
			}
			old := idOf()
			if !s.durable.known("g.d/x.d", old) || s.durable.size() != 2 {
				t.Fatalf("after the sync the store knows %d directories, x.d %v; want g.d and x.d", s.durable.size(), s.durable.known("g.d/x.d", old))
			}
			fast := s.stats.fastLeaves.Load()
			if err := s.SyncDeferred(ctx, []string{"g/x/k0"}); err != nil {
				t.Fatal(err)
			}
			if n := s.stats.fastLeaves.Load() - fast; n != 1 {
				t.Fatalf("a steady-state sync below x.d took %d leaves on the fast path, want 1", n)
			}
			switch tc {
			case "another store":
				o, err := Open(s.Root())
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(xd)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := o.Delete(ctx, "g/x/k0"); err != nil {
					t.Fatal(err)
				}
			case "another process, coarse birth times":
				// Moved out, not removed: its inode stays taken, so the
				// inode number ext4 frees next is x.d's.
				if err := os.Rename(filepath.Join(xd, "k0.o"), filepath.Join(s.Root(), tmpDirName, "k0.moved")); err != nil {
					t.Fatal(err)
				}
				for attempt := 1; ; attempt++ {
					if err := os.Remove(xd); err != nil {
						t.Fatal(err)
					}
					if err := os.Mkdir(xd, 0o755); err != nil {
						t.Fatal(err)
					}
					now := idOf()
					same := now.devMajor == old.devMajor && now.devMinor == old.devMinor && now.ino == old.ino && now.btimeSec == old.btimeSec
					if same || attempt == 50 {
						t.Logf("attempt %d: device, inode and birth second the same as before: %v (before %+v, now %+v)", attempt, same, old, now)
						break
					}
				}
			case "this store's delete":
				if err := s.Delete(ctx, "g/x/k0"); err != nil {
					t.Fatal(err)
				}
				if s.durable.size() != 1 {
					t.Fatalf("this store pruned x.d but knows %d directories, want 1 (g.d)", s.durable.size())
				}
			}
			if _, err := os.Stat(filepath.Join(xd, "k0.o")); !os.IsNotExist(err) {
				t.Fatalf("k0 still there: %v", err)
			}
			if _, err := s.PutDeferred(ctx, "g/x/k1", []byte("v")); err != nil {
				t.Fatal(err)
			}
			synced := recordFsyncs(t)
			fast = s.stats.fastLeaves.Load()
			if err := s.SyncDeferred(ctx, []string{"g/x/k1"}); err != nil {
				t.Fatal(err)
			}
			if n := s.stats.fastLeaves.Load() - fast; n != 0 {
				t.Errorf("the sync below the new x.d took %d leaves on the fast path, want 0", n)
			}
			if what := m.now().lost(t, s, "g/x/k1"); what != "" {
				t.Errorf("a crash after the sync loses %s of g/x/k1", what)
			}
			want := map[string]int{filepath.Join(s.Root(), "g.d"): 1, xd: 1, filepath.Join(xd, "k1.o"): 1}
			if got := synced(); !maps.Equal(got, want) {
				t.Errorf("the sync below the new x.d fsynced %v, want %v", got, want)
			}
		})
	}
}

// TestDurableDirsEvictionKeepsCorrectness: with room for 5 directories
// (a commit's paths cross 17), the cache evicts on every commit, is never
// larger than its limit, and costs fsyncs (more directories than with
// room for all), yet every object a placed manifest names is durable in
// the crash model: red if record stops evicting (the bound).
func TestDurableDirsEvictionKeepsCorrectness(t *testing.T) {
	const limit = 5
	s := openT(t)
	s.durable = newDurableDirs(limit)
	m := recordDurability(t, s)
	commits := modelCommits(12)
	costs := runModelCommits(t, s, m, commits, func(i int) {
		if n := s.durable.size(); n > limit {
			t.Fatalf("commit %d: the cache holds %d directories, limit %d", i, n, limit)
		}
	})
	extra, fast := 0, uint64(0)
	for _, d := range costs {
		fast += d.fast
	}
	if fast == 0 {
		t.Errorf("no commit took the fast path: the eviction is not exercised against it")
	}
	for i, c := range commits[1:] {
		steady := uint64(3)
		if c.newWindow {
			steady += 2
		}
		if d := costs[i+1]; d.Dirs > steady+d.Mkdirs {
			extra++
		}
	}
	if extra == 0 {
		t.Errorf("no commit synced more directories than with an unbounded cache: nothing was evicted?")
	}
}

// TestDeferredSyncWithoutBirthTimeSyncsEveryDirectory: where the file
// system reports no birth time nothing is cached, and every sync fsyncs
// every directory on the keys' paths and the root, as before the cache:
// red if a directory without an identity is trusted. Also where the
// birth times vanish after the Store cached the paths (a leaf known, but
// opened without an identity): the fast path refuses the leaf (red if it
// trusts a leaf without an identity) and the walk, trusting nothing,
// fsyncs everything.
func TestDeferredSyncWithoutBirthTimeSyncsEveryDirectory(t *testing.T) {
	for _, cachedFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached first %v", cachedFirst), func(t *testing.T) {
			testDeferredSyncWithoutBirthTime(t, cachedFirst)
		})
	}
}

func testDeferredSyncWithoutBirthTime(t *testing.T, cachedFirst bool) {
	ctx := context.Background()
	s := openT(t)
	var cached int
	if cachedFirst {
		for _, k := range []string{"g/R/adj/T/01ABC", "g/R/adj/T/01ABD"} {
			if _, err := s.PutDeferred(ctx, k, []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := s.SyncDeferred(ctx, []string{k}); err != nil {
				t.Fatal(err)
			}
		}
		if cached = s.durable.size(); cached == 0 || s.stats.fastLeaves.Load() != 1 {
			t.Fatalf("with birth times the store knows %d directories and took %d leaves on the fast path, want some and 1",
				cached, s.stats.fastLeaves.Load())
		}
	}
	old := dirIdentity
	dirIdentity = func(int) (dirID, bool) { return dirID{}, false }
	t.Cleanup(func() { dirIdentity = old })
	fast := s.stats.fastLeaves.Load()
	for i := range 3 {
		k := fmt.Sprintf("g/R/adj/T/01AB%d", i)
		if _, err := s.PutDeferred(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
		before := s.SyncStats()
		if err := s.SyncDeferred(ctx, []string{k}); err != nil {
			t.Fatal(err)
		}
		if d, want := s.SyncStats().Sub(before), fullPathDirs(s, k); d.Dirs != want {
			t.Errorf("sync %d fsynced %d directories, want every one on the path and the root, %d", i, d.Dirs, want)
		}
	}
	if n := s.durable.size(); n != cached {
		t.Errorf("cached %d directories without birth times, want the %d known before", n, cached)
	}
	if n := s.stats.fastLeaves.Load() - fast; n != 0 {
		t.Errorf("took %d leaves on the fast path without birth times", n)
	}
}

// TestDeferredSyncRacingOwnPruneRecordsNothing: a sync during which this
// Store removed a directory (its Delete's prune, here from inside the
// sync's round) records nothing, since what it opened may be what was
// removed (then a directory made again in its place could take its inode
// number, and, where no generation is reported, its identity); the next
// sync syncs the whole path again and records it. Likewise a sync that
// takes the fast path for one leaf (x.d) and walks to a new one (y.d)
// while this Store prunes: it records nothing (y.d stays unknown, and
// the next sync below it fsyncs g.d again). Red without the removals
// check in durableDirs.record.
func TestDeferredSyncRacingOwnPruneRecordsNothing(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	mustPut(t, s, "h/y", "pruned with h.d", objstore.CreateOnly)
	if _, err := s.PutDeferred(ctx, "g/x/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	old := fsyncFd
	var deleting atomic.Bool
	pruneKey := "h/y"
	fsyncFd = func(fd int) error {
		if deleting.CompareAndSwap(false, true) { // once (the Delete's own fsync comes here too)
			if err := s.Delete(ctx, pruneKey); err != nil {
				t.Error(err)
			}
		}
		return old(fd)
	}
	t.Cleanup(func() { fsyncFd = old })
	if err := s.SyncDeferred(ctx, []string{"g/x/a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "h.d")); !os.IsNotExist(err) {
		t.Fatalf("h.d not pruned during the sync: %v", err)
	}
	if n := s.durable.size(); n != 0 {
		t.Errorf("a sync racing this store's prune recorded %d directories, want none", n)
	}
	before := s.SyncStats()
	if err := s.SyncDeferred(ctx, []string{"g/x/a"}); err != nil {
		t.Fatal(err)
	}
	if d := s.SyncStats().Sub(before); d.Dirs != 3 || s.durable.size() != 2 {
		t.Errorf("the next sync fsynced %d directories and knows %d, want 3 (x.d, g.d, the root) and 2", d.Dirs, s.durable.size())
	}

	mustPut(t, s, "h/y", "pruned with h.d", objstore.CreateOnly)
	if _, err := s.PutDeferred(ctx, "g/y/b", []byte("v")); err != nil {
		t.Fatal(err)
	}
	deleting.Store(false)
	fast := s.stats.fastLeaves.Load()
	if err := s.SyncDeferred(ctx, []string{"g/x/a", "g/y/b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "h.d")); !os.IsNotExist(err) {
		t.Fatalf("h.d not pruned during the second sync: %v", err)
	}
	if n := s.stats.fastLeaves.Load() - fast; n != 1 || s.durable.size() != 2 {
		t.Errorf("a sync racing this store's prune took %d leaves on the fast path and knows %d directories, want 1 (x.d) and 2 (y.d not recorded)", n, s.durable.size())
	}
	before = s.SyncStats()
	if err := s.SyncDeferred(ctx, []string{"g/y/b"}); err != nil {
		t.Fatal(err)
	}
	if d := s.SyncStats().Sub(before); d.Dirs != 2 || s.durable.size() != 3 {
		t.Errorf("the next sync below y.d fsynced %d directories and knows %d, want 2 (y.d, g.d) and 3", d.Dirs, s.durable.size())
	}
}
