package fs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/graphkernel/graphkernel/objstore"
)

// failFsyncs makes the next n fsyncs (fsyncFd) fail with EIO, then pass
// through, until the test ends; it returns how many have failed so far.
func failFsyncs(t *testing.T, n int) func() int {
	t.Helper()
	failed := 0
	old := fsyncFd
	fsyncFd = func(fd int) error {
		if failed < n {
			failed++
			return unix.EIO
		}
		return old(fd)
	}
	t.Cleanup(func() { fsyncFd = old })
	return func() int { return failed }
}

// wantUnlinkSyncFailed fails the test unless err is what a delete of key
// returns once an earlier unlink of key was not made durable: a definite
// ErrTransient with cause objstore.ErrSyncFailed naming key, not "not
// found" and not ambiguous (reading back cannot tell: the key is gone
// either way).
func wantUnlinkSyncFailed(t *testing.T, what, key string, err error) {
	t.Helper()
	if !errors.Is(err, objstore.ErrSyncFailed) || !errors.Is(err, objstore.ErrTransient) ||
		objstore.IsAmbiguous(err) || errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), key) {
		t.Fatalf("%s: %v, want a definite ErrTransient with ErrSyncFailed naming %s", what, err, key)
	}
}

// TestFailedUnlinkSyncIsRemembered: a Delete whose fsync of the key's
// directory fails returns an ambiguous ErrTransient, and the Store
// remembers the key: deleting it again (Delete or DeleteMany), which
// finds it absent, fails with ErrSyncFailed rather than report the
// delete durable, however often it is retried and even after a
// successful fsync of the same directory (another key's delete: on Linux
// that success says nothing about the earlier writeback). Writing the key
// again clears it: the next delete unlinks the new file and syncs, and
// once another Store (another process) deleted the key written again, a
// delete finding it absent is nil again. Red without the memory: the
// retried Delete returns nil; red if a Put does not clear it: the last
// delete fails.
func TestFailedUnlinkSyncIsRemembered(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	for _, k := range []string{"g/m/a", "g/m/b", "g/n/c"} {
		mustPut(t, s, k, "v", objstore.CreateOnly)
	}
	failed := failFsyncs(t, 1)
	if err := s.Delete(ctx, "g/m/a"); !objstore.IsAmbiguous(err) || !errors.Is(err, objstore.ErrTransient) || failed() != 1 {
		t.Fatalf("delete with its directory fsync failing: %v (%d injected), want an ambiguous ErrTransient", err, failed())
	}
	if _, err := s.Get(ctx, "g/m/a"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("g/m/a after the unlink: %v, want not found", err)
	}
	for i := 0; i < 2; i++ {
		wantUnlinkSyncFailed(t, "delete again", "g/m/a", s.Delete(ctx, "g/m/a"))
	}
	if err := s.Delete(ctx, "g/m/b"); err != nil { // the same directory, fsynced fine
		t.Fatalf("delete of a neighbour: %v", err)
	}
	wantUnlinkSyncFailed(t, "delete after the directory synced", "g/m/a", s.Delete(ctx, "g/m/a"))
	errs := objstore.DeleteMany(ctx, s, []string{"g/n/c", "g/m/a", "g/n/absent"})
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("batch beside the failed key: %v", errs)
	}
	wantUnlinkSyncFailed(t, "batched delete", "g/m/a", errs[1])
	if err := s.Delete(ctx, "g/never"); err != nil {
		t.Fatalf("delete of a key never written: %v", err)
	}

	mustPut(t, s, "g/m/a", "again", objstore.CreateOnly)
	for i := 0; i < 2; i++ {
		if err := s.Delete(ctx, "g/m/a"); err != nil {
			t.Fatalf("delete %d of the key written again: %v", i, err)
		}
	}
	wantUnlinkSyncFailed(t, "delete of the key never written again", "g/m/b", failAgain(t, s, "g/m/b"))
	mustPut(t, s, "g/m/b", "again", objstore.CreateOnly)
	o, err := Open(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Delete(ctx, "g/m/b"); err != nil {
		t.Fatalf("another Store's delete: %v", err)
	}
	if err := s.Delete(ctx, "g/m/b"); err != nil {
		t.Fatalf("delete of a key written again, deleted elsewhere: %v", err)
	}
}

// failAgain deletes key from s (present) with its directory fsync
// failing, then returns what deleting it again returns.
func failAgain(t *testing.T, s *Store, key string) error {
	t.Helper()
	ctx := context.Background()
	mustPut(t, s, key, "v", objstore.CreateOnly)
	failFsyncs(t, 1)
	if err := s.Delete(ctx, key); !objstore.IsAmbiguous(err) {
		t.Fatalf("delete of %s with its fsync failing: %v, want ambiguous", key, err)
	}
	return s.Delete(ctx, key)
}

// TestFailedSyncsBounded: a failedSyncs holds at most failedSyncsLimit
// keys, forgetting the oldest note first; a key forgotten and noted again
// counts from its new note (its stale place in the order evicts nothing),
// and the order of notes stays bounded however many keys pass through.
// forgetNotedBy clears only notes at most its mark.
func TestFailedSyncsBounded(t *testing.T) {
	var f failedSyncs
	for i := 0; i < failedSyncsLimit; i++ {
		f.note([]string{fmt.Sprint("k", i)})
	}
	f.forget("k0")
	f.note([]string{"k0"}) // now the newest
	f.note([]string{"extra"})
	if !f.has("k0") || f.has("k1") || !f.has("k2") || !f.has("extra") || len(f.keys) != failedSyncsLimit {
		t.Fatalf("after one past the limit: k0 %v k1 %v k2 %v extra %v, %d keys; want k1 (the oldest note) forgotten",
			f.has("k0"), f.has("k1"), f.has("k2"), f.has("extra"), len(f.keys))
	}
	for i := 0; i < 10*failedSyncsLimit; i++ {
		f.note([]string{fmt.Sprint("x", i)})
		if len(f.keys) > failedSyncsLimit || len(f.order) > 2*failedSyncsLimit+1 {
			t.Fatalf("after %d more notes: %d keys, %d notes kept", i+1, len(f.keys), len(f.order))
		}
	}
	m := f.mark()
	f.note([]string{"late"})
	f.forgetNotedBy("late", m)
	f.forgetNotedBy(fmt.Sprint("x", 10*failedSyncsLimit-1), m)
	if !f.has("late") || f.has(fmt.Sprint("x", 10*failedSyncsLimit-1)) {
		t.Fatalf("forgetNotedBy: a note after the mark cleared (%v) or one before it kept", !f.has("late"))
	}
}

// TestFailedUnlinkSurvivesARacingPut: a create-only Put places its file,
// and before the Put returns a Delete unlinks that file and its
// directory's fsync fails. The Put succeeds, but the Delete's failure is
// about the Put's own file, so the Put must not clear it: deleting again
// fails with ErrSyncFailed. Red if a Put forgets every failure noted
// before it returns (rather than those noted before it began).
func TestFailedUnlinkSurvivesARacingPut(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	failing := false
	old := fsyncFd
	fsyncFd = func(fd int) error {
		if failing {
			failing = false
			return unix.EIO
		}
		return old(fd)
	}
	t.Cleanup(func() { fsyncFd = old; s.hook = nil })
	var delErr error
	s.hook = func(point string) {
		if point != pointPlaced {
			return
		}
		s.hook = nil
		failing = true
		delErr = s.Delete(ctx, "g/m/a")
	}
	if _, err := s.Put(ctx, "g/m/a", []byte("v"), objstore.CreateOnly); err != nil {
		t.Fatalf("put: %v", err)
	}
	if !objstore.IsAmbiguous(delErr) || failing {
		t.Fatalf("the racing delete: %v (injection consumed: %v), want an ambiguous error", delErr, !failing)
	}
	if _, err := s.Get(ctx, "g/m/a"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("g/m/a: %v, want not found", err)
	}
	wantUnlinkSyncFailed(t, "delete again", "g/m/a", s.Delete(ctx, "g/m/a"))
}

// TestFailedUnlinkSurvivesARacingBatchSync: a DeleteMany unlinks a key
// and, while its round's fsync runs (before it clears the key), the key
// is written again and deleted by a Delete whose fsync fails. The batch's
// round succeeds, but it synced an earlier unlink, so it must not clear
// the later failure: deleting again fails with ErrSyncFailed. Red if a
// batch forgets every failure noted before its round ends (rather than
// those noted before its unlink).
func TestFailedUnlinkSurvivesARacingBatchSync(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	mustPut(t, s, "g/m/a", "v", objstore.CreateOnly)
	old := fsyncFd
	t.Cleanup(func() { fsyncFd = old })
	var putErr, delErr error
	raced, failing := false, false
	fsyncFd = func(fd int) error {
		if failing {
			failing = false
			return unix.EIO
		}
		if !raced { // the batch's round: race a write and a failing delete into it
			raced = true
			_, putErr = s.Put(ctx, "g/m/a", []byte("again"), objstore.CreateOnly)
			failing = true
			delErr = s.Delete(ctx, "g/m/a")
		}
		return old(fd)
	}
	if errs := objstore.DeleteMany(ctx, s, []string{"g/m/a"}); errs[0] != nil {
		t.Fatalf("batch: %v", errs[0])
	}
	if putErr != nil || !objstore.IsAmbiguous(delErr) || failing {
		t.Fatalf("racing put: %v; racing delete: %v, want an ambiguous error", putErr, delErr)
	}
	wantUnlinkSyncFailed(t, "delete again", "g/m/a", s.Delete(ctx, "g/m/a"))
}
