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

// recordFsyncs makes fsyncFd record the paths it syncs until the test ends.
func recordFsyncs(t *testing.T) func() map[string]int {
	var mu sync.Mutex
	got := map[string]int{}
	old := fsyncFd
	fsyncFd = func(fd int) error {
		p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if err != nil {
			return err
		}
		mu.Lock()
		got[p]++
		mu.Unlock()
		return old(fd)
	}
	t.Cleanup(func() { fsyncFd = old })
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

// TestDeferredPutThenSync: a deferred write is create-only and visible at
// once; SyncDeferred fsyncs every object file of the batch and every
// directory on their paths, each once.
func TestDeferredPutThenSync(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	keys := []string{"g/R/adj/T/01ABC", "g/R/adj/T/01ABD", "g/R/data/T/01XYZ"}
	for _, k := range keys {
		if _, err := s.PutDeferred(ctx, k, []byte("v "+k)); err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, s, k); string(got.Data) != "v "+k {
			t.Fatalf("%s: got %q", k, got.Data)
		}
	}
	if _, err := s.PutDeferred(ctx, keys[0], []byte("other")); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("deferred write over an existing key: %v, want ErrPreconditionFailed", err)
	}
	synced := recordFsyncs(t)
	if err := s.SyncDeferred(ctx, keys); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, k := range keys {
		names := s.layout.encodeKey(k)
		for i := 0; i <= len(names); i++ {
			want[filepath.Join(append([]string{s.root}, names[:i]...)...)] = 1
		}
	}
	got := synced()
	for p := range want {
		if got[p] != 1 {
			t.Errorf("%s synced %d times, want 1", strings.TrimPrefix(p, s.root), got[p])
		}
	}
	if len(got) != len(want) {
		t.Errorf("synced %d paths, want %d: %v", len(got), len(want), got)
	}
}

// TestDeferredSyncOfAMissingKeyFails: a key that is not there cannot be
// made durable; that is a retryable store error, never success or "not
// found".
func TestDeferredSyncOfAMissingKeyFails(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	if _, err := s.PutDeferred(ctx, "g/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	err := s.SyncDeferred(ctx, []string{"g/a", "g/missing"})
	if !errors.Is(err, objstore.ErrTransient) || errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), "g/missing") {
		t.Fatalf("sync of a missing key: %v, want ErrTransient naming it", err)
	}
}

// TestFailedSyncIsRemembered: a SyncDeferred whose fsync of a key's file
// fails returns a definite ErrTransient with cause objstore.ErrSyncFailed,
// and the Store remembers the keys of that batch: a later SyncDeferred or
// PutAfterDeferred naming one fails again before anything is fsynced or
// placed (on Linux the second fsync would succeed over pages that never
// reached the disk), while a key written again syncs. Red without the
// memory: the second sync fsyncs and succeeds.
func TestFailedSyncIsRemembered(t *testing.T) {
	ctx := context.Background()
	s := openT(t)
	for _, k := range []string{"g/v/1", "g/v/2", "g/w/1"} {
		if _, err := s.PutDeferred(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	failed, synced := 0, 0
	old := fsyncFd
	fsyncFd = func(fd int) error {
		p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(p, "/v.") && failed == 0 && !strings.HasSuffix(filepath.Dir(p), ".tmp") {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				failed++
				return errors.New("injected EIO")
			}
		}
		synced++
		return old(fd)
	}
	t.Cleanup(func() { fsyncFd = old })
	err := s.SyncDeferred(ctx, []string{"g/v/1", "g/v/2"})
	if !errors.Is(err, objstore.ErrSyncFailed) || !errors.Is(err, objstore.ErrTransient) || objstore.IsAmbiguous(err) || failed != 1 {
		t.Fatalf("sync with an fsync failing: %v (%d injected), want a definite ErrTransient with ErrSyncFailed", err, failed)
	}
	mu.Lock()
	synced = 0
	mu.Unlock()
	for _, k := range []string{"g/v/1", "g/v/2"} {
		if err := s.SyncDeferred(ctx, []string{k, "g/w/1"}); !errors.Is(err, objstore.ErrSyncFailed) || !strings.Contains(err.Error(), k) {
			t.Fatalf("sync of %s again: %v, want ErrSyncFailed naming it", k, err)
		}
		if _, err := s.PutAfterDeferred(ctx, "g/m/"+k[len(k)-1:], []byte("m"), objstore.CreateOnly, []string{k}); !errors.Is(err, objstore.ErrSyncFailed) {
			t.Fatalf("publish after %s: %v, want ErrSyncFailed", k, err)
		}
		if _, err := s.Get(ctx, "g/m/"+k[len(k)-1:]); !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("the refused publish placed its object: %v", err)
		}
	}
	if synced != 0 {
		t.Fatalf("%d fsyncs after the failure, want none: the failed keys are refused before any", synced)
	}
	if err := s.SyncDeferred(ctx, []string{"g/w/1"}); err != nil {
		t.Fatalf("sync of an untouched key: %v", err)
	}
	if err := s.Delete(ctx, "g/v/1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutDeferred(ctx, "g/v/1", []byte("again")); err != nil {
		t.Fatal(err)
	}
	if err := s.SyncDeferred(ctx, []string{"g/v/1"}); err != nil {
		t.Fatalf("sync of a failed key written again: %v", err)
	}
}
