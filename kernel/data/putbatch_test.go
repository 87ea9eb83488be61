package data

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// deferStore gives a sim store the DeferredPutter capability and records
// every ordinary (durable) write made while a deferred key was not yet
// synced: the kernel may reference a deferred object only after its sync,
// except from a table version named per attempt (format 8), which is
// garbage until a manifest pins it and may go out in one batch with the
// objects it names (the manifest write syncs them first), and except a
// commit index, which names manifests and commits, never a table object,
// and rides the manifest's batch (kernel publishWrite).
type deferStore struct {
	objstore.Store
	failSync error

	mu       sync.Mutex
	pending  map[string]bool
	deferred int
	early    []string
}

func newDeferStore() *deferStore {
	return &deferStore{Store: sim.New(sim.Config{Seed: 1}), pending: map[string]bool{}}
}

func (s *deferStore) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	etag, err := s.Store.Put(ctx, key, data, objstore.CreateOnly)
	if err == nil {
		s.mu.Lock()
		s.pending[key] = true
		s.deferred++
		s.mu.Unlock()
	}
	return etag, err
}

func (s *deferStore) SyncDeferred(ctx context.Context, keys []string) error {
	if s.failSync != nil {
		return s.failSync
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if !s.pending[k] {
			return fmt.Errorf("sync of %s, which was not deferred", k)
		}
		delete(s.pending, k)
	}
	return nil
}

// pendingData is the deferred keys not yet synced, commit indexes left
// out: an index follows its publish and nothing syncs it (an aid an OS
// crash may lose; kernel publishWrite), and no write references it.
func (s *deferStore) pendingData() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingDataLocked()
}

// pendingDataLocked is pendingData with s.mu held.
func (s *deferStore) pendingDataLocked() []string {
	var keys []string
	for k := range s.pending {
		if !strings.Contains(k, "/index/commits/") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func (s *deferStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	s.mu.Lock()
	if len(s.pendingDataLocked()) > 0 && !(strings.Contains(key, "/tables/") && strings.Contains(key, "/a/")) && !strings.Contains(key, "/index/commits/") {
		s.early = append(s.early, key)
	}
	s.mu.Unlock()
	return s.Store.Put(ctx, key, data, cond)
}

// manyEdges is n Knows edges among the base graph's persons.
func manyEdges(n int) []Row {
	var rows []Row
	for i := range n {
		rows = append(rows, edge(fmt.Sprintf("k%05d", i), []string{"p1", "p2", "p3"}[i%3], []string{"p2", "p3", "p1"}[i%3]))
	}
	return rows
}

// TestDeferredObjectsSyncedBeforeReferenced: a commit on a store that can
// defer durability writes its fragments and index pages deferred and syncs
// them all before any ordinary write that references them durably (the
// manifest; a format-7 sidecar or counter-named version), for a first
// version (index from scratch) and a later one (incremental pages). Red
// without materialize's SyncDeferred (bulk) or the publish's
// objstore.PutAfterDeferred of the batch's keys (kernel/write_batch.go).
func TestDeferredObjectsSyncedBeforeReferenced(t *testing.T) {
	st := newDeferStore()
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	commitTx(t, g, func(tx *Txn) error { return tx.Insert("Knows", manyEdges(3*AdjPageRows)...) })
	if st.deferred == 0 {
		t.Fatal("no write was deferred")
	}
	if len(st.early) > 0 || len(st.pendingData()) > 0 {
		t.Fatalf("%d writes while deferred objects were unsynced (%v); %d never synced", len(st.early), st.early, len(st.pendingData()))
	}
	if got := scanIDs(t, snap(t, g), "Knows"); len(got) == 0 {
		t.Fatal("no Knows rows after the commit")
	}
}

// TestDeferredSyncFailureFailsTheCommit: when the batch cannot be made
// durable the commit fails with the store's error and publishes nothing.
func TestDeferredSyncFailureFailsTheCommit(t *testing.T) {
	noAdjDelta(t) // its edge commits write pages
	st := newDeferStore()
	g := initGraph(t, st, Limits{})
	seedGraph(t, g)
	before := heads(t, g)
	st.failSync = objstore.NewError(objstore.OpPut, "x", objstore.ErrRejected, errors.New("disk gone"))
	tx := begin(t, g)
	must(t, tx.Insert("Knows", manyEdges(10)...))
	_, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "test", Message: "commit"})
	if !errors.Is(err, objstore.ErrRejected) {
		t.Fatalf("commit with a failing sync: %v, want the store's ErrRejected", err)
	}
	if after := heads(t, g); after != before {
		t.Fatalf("heads moved from %s to %s", before, after)
	}
}
