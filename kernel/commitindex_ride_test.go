package kernel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
	fsstore "github.com/graphkernel/graphkernel/objstore/fs"
	"github.com/graphkernel/graphkernel/objstore/fs/fstest"
)

// refusedRideStore is an fs store that, while on, makes every commit-index
// write fail in the store: a batched one (the index riding its manifest,
// kernel publishWrite) becomes a request fs refuses (ErrRejected, nothing
// written), a single one is refused outright. rode counts the batches
// that carried a commit index.
type refusedRideStore struct {
	*fsstore.Store
	on   bool
	rode int
}

func isIndexKey(key string) bool { return strings.Contains(key, "/index/commits/") }

func (s *refusedRideStore) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	reqs = append([]objstore.PutRequest(nil), reqs...)
	for i, r := range reqs {
		if isIndexKey(r.Key) {
			s.rode++
			if s.on { // a DeferAll write must be create-only: fs refuses it before writing
				reqs[i].Cond, reqs[i].Durability = objstore.Unconditional, objstore.DeferAll
			}
		}
	}
	return s.Store.PutMany(ctx, reqs)
}

func (s *refusedRideStore) Put(ctx context.Context, key string, b []byte, c objstore.Condition) (string, error) {
	if s.on && isIndexKey(key) {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrRejected, nil)
	}
	return s.Store.Put(ctx, key, b, c)
}

func (s *refusedRideStore) PutDeferredIntact(ctx context.Context, key string, b []byte, c objstore.Condition) (string, bool, error) {
	if s.on && isIndexKey(key) {
		return "", false, objstore.NewError(objstore.OpPut, key, objstore.ErrRejected, nil)
	}
	return s.Store.PutDeferredIntact(ctx, key, b, c)
}

// TestFailedRiddenIndexLeavesThePublish: the new commit's index rides its
// manifest's batch and the manifest names it in After (its sync makes the
// index durable before the manifest's name is placed: kernel
// publishWrite), but an index write that fails never fails the publish:
// the failed request's key is dropped from the manifest's After
// (objstore.PutRequest.After), the publish lands at once, and its commit is
// found by a cold handle without the index. Red if the failed index's key
// stays in After: on fs the manifest's sync of a key that was never
// written fails, every attempt, and the publish with it.
func TestFailedRiddenIndexLeavesThePublish(t *testing.T) {
	st, err := fsstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &refusedRideStore{Store: st}
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	commitTable(t, g, main, "a", "1") // g's view is current, its head's index cached
	store.on, store.rode = true, 0
	c, err := g.Write(ctx, main, []kernel.TableWrite{{Table: "a", Build: func(p kernel.TableVersion) (kernel.TableContent, error) {
		return kernel.TableContent{Fragments: append(append([]string(nil), p.Fragments...), "2"), Rows: p.Rows + 1}, nil
	}}}, kernel.LineageIntent{Actor: "test"})
	if err != nil {
		t.Fatalf("publish whose ridden index write failed: %v", err)
	}
	if store.rode != 1 {
		t.Fatalf("%d batches carried a commit index, want 1 (the publish's, riding its manifest)", store.rode)
	}
	store.on = false
	if _, err := store.Get(ctx, format.NewKeys(root).CommitIndex(c.ID)); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("index of the commit after its refused write: %v, want ErrNotFound", err)
	}
	got, err := coldHandle(t, store).Commit(ctx, c.ID)
	if err != nil || got.ManifestVersion != c.ManifestVersion {
		t.Fatalf("cold Commit(%s) = v%d, %v; want v%d", c.ID, got.ManifestVersion, err, c.ManifestVersion)
	}
}

// TestTornIndexOfUnpublishedCommitIsAbsent: a publish attempt writes its
// commit's index wholly deferred (objstore.DeferAll) and only a placed
// manifest makes it durable, so an attempt whose manifest never landed
// may leave an index an OS crash tore: the fs store reads it as
// objstore.ErrCorruptObject. A client may still look that commit up (to
// check an ambiguous commit): Commit must answer ErrNotFound, as for a
// missing index, never a corruption error (red without verifiedIndex's
// rule). An index the store returns intact that does not decode is still
// ErrCorrupt.
func TestTornIndexOfUnpublishedCommitIsAbsent(t *testing.T) {
	dir := t.TempDir()
	store, err := fsstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := mustInit(t, store, 1)
	main := mustBranch(t, g, "main")
	landed := commitTable(t, g, main, "a", "1")
	id := landed.ID
	id[15] ^= 0xff // a commit id that never landed, its index naming the slot another took
	x := format.CommitIndex{ID: id, At: format.ManifestRef{Branch: landed.Branch, Incarnation: landed.Incarnation, Version: landed.ManifestVersion}}
	b, err := format.EncodeCommitIndex(&x, format.Token{1})
	if err != nil {
		t.Fatal(err)
	}
	key := format.NewKeys(root).CommitIndex(id)
	if res := objstore.PutOne(ctx, store, objstore.PutRequest{Key: key, Data: b, Cond: objstore.CreateOnly, Durability: objstore.DeferAll}); res.Err != nil {
		t.Fatal(res.Err)
	}
	fstest.TearFileHolding(t, dir, b)
	if _, err := store.Get(ctx, key); !errors.Is(err, objstore.ErrCorruptObject) {
		t.Fatalf("get of the torn index: %v, want objstore.ErrCorruptObject", err)
	}
	if c, err := coldHandle(t, store).Commit(ctx, id); !errors.Is(err, kernel.ErrNotFound) {
		t.Fatalf("Commit(unpublished id, torn index) = %+v, %v; want ErrNotFound", c, err)
	}

	id[14] ^= 0xff
	if _, err := store.Put(ctx, format.NewKeys(root).CommitIndex(id), []byte("not an index"), objstore.CreateOnly); err != nil {
		t.Fatal(err)
	}
	if _, err := coldHandle(t, store).Commit(ctx, id); !errors.Is(err, kernel.ErrCorrupt) {
		t.Fatalf("Commit(id) over an intact index that does not decode: %v, want ErrCorrupt", err)
	}
}
