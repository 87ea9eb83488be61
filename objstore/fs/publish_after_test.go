package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// syncLog records, in order, the paths fsynced (fsyncFd) and the crash
// points a Store hits ("@placed"), until the test ends. It is the crash
// model of the tests below: an OS crash at event i keeps exactly what was
// fsynced before i (a name needs every directory on its path fsynced, its
// data the file itself).
type syncLog struct {
	mu     sync.Mutex
	events []string
}

func recordSyncLog(t *testing.T, s *Store) *syncLog {
	l := &syncLog{}
	old := fsyncFd
	fsyncFd = func(fd int) error {
		p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if err != nil {
			return err
		}
		l.add(p)
		return old(fd)
	}
	s.hook = func(point string) { l.add("@" + point) }
	t.Cleanup(func() { fsyncFd = old; s.hook = nil })
	return l
}

func (l *syncLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// before returns the events before the first occurrence of e.
func (l *syncLog) before(t *testing.T, e string) map[string]bool {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	for _, x := range l.events {
		if x == e {
			return seen
		}
		seen[x] = true
	}
	t.Fatalf("event %s never happened (events %q)", e, l.events)
	return nil
}

// pathOf is every path a crash must keep for key to survive: the root,
// each directory on its path, and its object file.
func pathOf(s *Store, key string) []string {
	names := s.layout.encodeKey(key)
	out := []string{s.root}
	for i := range names {
		out = append(out, filepath.Join(append([]string{s.root}, names[:i+1]...)...))
	}
	return out
}

// TestPutAfterDeferredSyncsBeforePlacing is the fs durability rule of a
// publish (docs/invariants.md): by the time PutAfterDeferred places its
// name (the earliest moment the name can become durable), every object
// PutDeferred or PutDeferredIntact wrote under the deferred keys has been
// fsynced with every directory on its path (a fresh Store knows no
// directory durable; TestDeferredSyncSkipsDurableDirectories checks the
// steady state), so a crash can never keep a
// manifest naming an object it lost; and it does so in the round of its
// own temp file (2 rounds in all, like a Put). Red if the deferred sync is
// skipped or comes after the name is placed.
func TestPutAfterDeferredSyncsBeforePlacing(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	deferred := []string{"g/data/T/01JGJFGR48XEKVHR5ZSPHN8PKH", "g/tables/T/01JG/18446744073709551613"}
	if _, err := s.PutDeferred(ctx, deferred[0], []byte("fragment")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.PutDeferredIntact(ctx, deferred[1], []byte("version"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	l := recordSyncLog(t, s)
	before := s.SyncStats()
	if _, err := s.PutAfterDeferred(ctx, "g/branches/main/18446744073709551613", []byte("manifest"), objstore.CreateOnly, deferred); err != nil {
		t.Fatal(err)
	}
	synced := l.before(t, "@"+pointPlaced)
	for _, k := range deferred {
		for _, p := range pathOf(s, k) {
			if !synced[p] {
				t.Errorf("%s: %s not fsynced before the manifest's name was placed", k, strings.TrimPrefix(p, s.root))
			}
		}
	}
	if d := s.SyncStats().Sub(before); d.Rounds != 2 {
		t.Errorf("PutAfterDeferred waited %d rounds, want 2 (the deferred objects with its temp file, then its name)", d.Rounds)
	}
	if got := string(mustGet(t, s, "g/branches/main/18446744073709551613").Data); got != "manifest" {
		t.Fatalf("manifest = %q", got)
	}
}

// TestPutAfterDeferredSyncFailureWritesNothing: a deferred key that cannot
// be made durable fails the write before its name is placed, as a definite
// ErrTransient naming that key; the key stays free.
func TestPutAfterDeferredSyncFailureWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	_, err := s.PutAfterDeferred(ctx, "g/m", []byte("m"), objstore.CreateOnly, []string{"g/missing"})
	if !errors.Is(err, objstore.ErrTransient) || objstore.IsAmbiguous(err) || !strings.Contains(err.Error(), "g/missing") {
		t.Fatalf("PutAfterDeferred with a missing deferred key: %v, want a definite ErrTransient naming it", err)
	}
	if _, err := s.Get(ctx, "g/m"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("get after the failed write: %v, want ErrNotFound", err)
	}
}

// TestPutDeferredIntactSyncsDataNotName: PutDeferredIntact fsyncs its temp
// file before the link (after a crash the object is absent or whole, never
// torn) and nothing after it (its name waits for a SyncDeferred or
// PutAfterDeferred): one round. Red if the temp is not synced before the
// link, or if directories are.
func TestPutDeferredIntactSyncsDataNotName(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	l := recordSyncLog(t, s)
	before := s.SyncStats()
	if _, deferred, err := s.PutDeferredIntact(ctx, "g/tables/T/01JG/18446744073709551613", []byte("v"), objstore.CreateOnly); err != nil || !deferred {
		t.Fatalf("intact-deferred write: deferred %v, %v", deferred, err)
	}
	if _, _, err := s.PutDeferredIntact(ctx, "g/tables/T/01JG/18446744073709551613", []byte("w"), objstore.CreateOnly); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("second intact-deferred write: %v, want ErrPreconditionFailed", err)
	}
	synced := l.before(t, "@"+pointPlaced)
	temps := 0
	for p := range synced {
		if filepath.Dir(p) == filepath.Join(s.root, tmpDirName) {
			temps++
		}
	}
	if temps != 1 {
		t.Errorf("%d temp files fsynced before the link, want 1 (events %q)", temps, l.events)
	}
	if d := s.SyncStats().Sub(before); d.Dirs != 0 || d.Rounds != 2 || d.Files != 2 {
		t.Errorf("sync stats of two intact-deferred writes = %+v, want 2 files in 2 rounds, no directory", d)
	}
}
