package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
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

// placements returns the events before each occurrence of e, in order.
func (l *syncLog) placements(e string) []map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]bool
	for i, x := range l.events {
		if x == e {
			seen := map[string]bool{}
			for _, y := range l.events[:i] {
				seen[y] = true
			}
			out = append(out, seen)
		}
	}
	return out
}

// TestPutManyAfterSyncsBatchedAidBeforePlacing is the fs durability rule
// of a publish whose commit index rides its manifest (kernel
// publishWrite, docs/invariants.md S11): in one PutMany, the manifest
// names the index's key in After, so by the time the manifest's name is
// placed the index's object file and every directory on its path (a fresh
// Store knows none durable) have been fsynced, with the objects deferred
// before the batch, in the manifest's first round; the index's own write
// is wholly deferred (a DeferAll create: no round of its own) or, on a
// later attempt, an intact-deferred overwrite (DeferName: its temp file's
// round) whose rename the manifest's sync makes durable. The manifest's
// temp file is written concurrently; only its sync round waits for the
// index (the index's write here dawdles after its temp file, so a
// manifest that did not wait would find it missing). Red if fs PutMany's
// dependent does not wait for the index, or does not sync it. (PutMany
// runs a batch this small in order since session 23, inOrderBatch; the
// test drives the concurrent path larger batches take.)
func TestPutManyAfterSyncsBatchedAidBeforePlacing(t *testing.T) {
	ctx := context.Background()
	const index, fragment = "g/index/commits/01JGJFGR48XEKVHR5ZSPHN8PKH", "g/data/T/01JGJFGR48XEKVHR5ZSPHN8PKJ"
	for _, tc := range []struct {
		name       string
		cond       objstore.Condition
		durability objstore.Durability
		rounds     uint64
	}{
		{"create", objstore.CreateOnly, objstore.DeferAll, 2},
		{"overwrite", objstore.Unconditional, objstore.DeferName, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openT(t)
			if _, err := s.PutDeferred(ctx, fragment, []byte("fragment")); err != nil {
				t.Fatal(err)
			}
			if tc.cond.Kind != objstore.CondCreateOnly { // an earlier attempt's index, never synced
				if _, err := s.PutDeferred(ctx, index, []byte("old index")); err != nil {
					t.Fatal(err)
				}
			}
			l := recordSyncLog(t, s)
			record := s.hook
			var dawdled atomic.Bool
			s.hook = func(point string) {
				record(point)
				if point == pointTempWritten && !dawdled.Swap(true) { // the first temp written is the index's
					for range 10000 {
						runtime.Gosched()
					}
				}
			}
			before := s.SyncStats()
			manifest := "g/branches/main/18446744073709551613"
			// Concurrently, as PutMany runs a batch larger than
			// inOrderBatch: in order the dependent waits trivially.
			res := s.putMany(ctx, []objstore.PutRequest{
				{Key: index, Data: []byte("index"), Cond: tc.cond, Durability: tc.durability},
				{Key: manifest, Data: []byte("manifest"), Cond: objstore.CreateOnly, After: []string{fragment, index}},
			}, syncWorkers)
			for i, r := range res {
				if r.Err != nil {
					t.Fatalf("request %d: %v", i, r.Err)
				}
			}
			placed := l.placements("@" + pointPlaced)
			if len(placed) != 2 {
				t.Fatalf("%d names placed, want 2 (the index, then the manifest; events %q)", len(placed), l.events)
			}
			indexPlaced, manifestPlaced := placed[0], placed[1]
			for _, p := range pathOf(s, fragment) {
				if !manifestPlaced[p] {
					t.Errorf("%s: %s not fsynced before the manifest's name was placed", fragment, strings.TrimPrefix(p, s.root))
				}
			}
			for _, p := range pathOf(s, index) { // synced after the index's name was placed: its link or rename is durable
				if !manifestPlaced[p] || indexPlaced[p] {
					t.Errorf("%s: %s not fsynced between the index's placement and the manifest's", index, strings.TrimPrefix(p, s.root))
				}
			}
			if d := s.SyncStats().Sub(before); d.Rounds != tc.rounds {
				t.Errorf("the batch waited %d sync rounds, want %d (the manifest's two, the index's own %d)", d.Rounds, tc.rounds, tc.rounds-2)
			}
			for key, want := range map[string]string{index: "index", manifest: "manifest"} {
				if got := string(mustGet(t, s, key).Data); got != want {
					t.Fatalf("%s = %q, want %q", key, got, want)
				}
			}
		})
	}
}
