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
