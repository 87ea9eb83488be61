package data

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// crashStore is a deferStore that also defers table versions
// (objstore.IntactDeferredPutter, modeled as PutDeferred) and models an OS
// crash: every object still unsynced when a manifest was written may be
// lost, and crash loses them all (the worst case).
type crashStore struct {
	*deferStore
	mu   sync.Mutex
	lost map[string]bool // unsynced when some manifest was written
}

func (s *crashStore) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	if cond != objstore.CreateOnly {
		etag, err := s.deferStore.Store.Put(ctx, key, data, cond) // a commit index: losing it is allowed
		return etag, true, err
	}
	etag, err := s.deferStore.PutDeferred(ctx, key, data)
	return etag, true, err
}

func (s *crashStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if strings.Contains(key, "/branches/") {
		s.deferStore.mu.Lock()
		s.mu.Lock()
		for k := range s.deferStore.pending {
			s.lost[k] = true
		}
		s.mu.Unlock()
		s.deferStore.mu.Unlock()
	}
	return s.deferStore.Put(ctx, key, data, cond)
}

// crash deletes every object a crash may have lost.
func (s *crashStore) crash(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.lost {
		must(t, s.deferStore.Store.Delete(ctx, k))
	}
}

// TestCrashAfterPublishKeepsWhatTheManifestNames is the kernel half of the
// fs durability rule (docs/invariants.md): a commit's table version is
// written with deferred durability, and the manifest write makes it durable
// first, so an OS crash at any moment after a manifest was written loses
// nothing that manifest names: a fresh handle reads every committed row.
// Red if the publish writes its manifest without objstore.PutAfterDeferred
// (the version, unsynced, is lost and the table cannot be read).
func TestCrashAfterPublishKeepsWhatTheManifestNames(t *testing.T) {
	st := &crashStore{deferStore: newDeferStore(), lost: map[string]bool{}}
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Person", person("crash-1", "n")) })
	if st.deferred == 0 {
		t.Fatal("nothing was deferred")
	}
	want := scanIDs(t, snap(t, g), "Person")
	st.crash(t)
	if got := scanIDs(t, snap(t, openGraph(t, st.deferStore.Store, 2)), "Person"); got != want {
		t.Fatalf("after the crash Person = %s, want %s", got, want)
	}
}
