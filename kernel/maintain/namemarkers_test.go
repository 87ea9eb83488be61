package maintain_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/maintain"
	"github.com/graphkernel/graphkernel/objstore"
)

// markerCountingStore counts the requests a collection spends on branch-name
// markers: delete requests (single or batched) touching a marker key, and
// LISTs of one branch name's manifests (the re-check after a delete). It
// forwards batched deletes to the store's own (objstore.BatchDeleter).
type markerCountingStore struct {
	objstore.Store
	markerDeletes, nameLists int
}

func (s *markerCountingStore) Delete(ctx context.Context, key string) error {
	if strings.Contains(key, "/names/") {
		s.markerDeletes++
	}
	return s.Store.Delete(ctx, key)
}

func (s *markerCountingStore) DeleteMany(ctx context.Context, keys []string) []error {
	for _, k := range keys {
		if strings.Contains(k, "/names/") {
			s.markerDeletes++
			break
		}
	}
	return objstore.DeleteMany(ctx, s.Store, keys)
}

func (s *markerCountingStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if rest, ok := strings.CutPrefix(prefix, root+"/branches/"); ok && rest != "" {
		s.nameLists++
	}
	return s.Store.List(ctx, prefix, after, limit)
}

// TestCollectBatchesNameMarkers: a collection that finds many dead names
// deletes their markers in batches and looks the names up again with
// listings of the branches, not with one delete and one LIST a name.
// Before, a backlog of dead names (the names rule 3b kept alive while a
// long-lived branch lagged main, released at once when it synced) took two
// requests a name, about a thousand names a bounded minute in the
// simulator: lifetime-10k seed 2 with the feature branch failed
// feature-collect on it.
func TestCollectBatchesNameMarkers(t *testing.T) {
	f := newFixture(t)
	f.seed(f.branch("main"), 0)
	const names = 60
	f.forkedAndDeleted("c", names)
	f.clock.Advance(time.Hour)
	cs := &markerCountingStore{Store: f.store}
	m, err := maintain.New(cs, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{9})})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Collect(ctx, metaPolicy)
	if err != nil || !rep.Complete {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	if rep.NameMarkers.Deleted != names || rep.NameMarkersRestored != 0 {
		t.Fatalf("name markers %+v restored %d, want %d deleted and none restored", rep.NameMarkers, rep.NameMarkersRestored, names)
	}
	requests := cs.markerDeletes + cs.nameLists
	t.Logf("%d dead names' markers: %d delete requests, %d per-name LISTs", names, cs.markerDeletes, cs.nameLists)
	if requests*5 > names {
		t.Errorf("%d markers took %d requests (%d deletes, %d per-name LISTs), want at most a fifth", names, requests, cs.markerDeletes, cs.nameLists)
	}
	if bs, err := f.reopen().Kernel().ListBranches(ctx); err != nil || len(bs) != 1 {
		t.Fatalf("ListBranches after the collection: %v %v, want main alone", bs, err)
	}
}

// listHookStore runs hook once before forwarding the first List of a key
// range starting with prefix.
type listHookStore struct {
	objstore.Store
	prefix string
	hook   func()
	// deleted counts deletes (single or batched) of keys ending in suffix.
	suffix  string
	deleted int
}

func (s *listHookStore) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	if s.hook != nil && strings.HasPrefix(prefix, s.prefix) {
		h := s.hook
		s.hook = nil
		h()
	}
	return s.Store.List(ctx, prefix, after, limit)
}

func (s *listHookStore) Delete(ctx context.Context, key string) error {
	if strings.HasSuffix(key, s.suffix) {
		s.deleted++
	}
	return s.Store.Delete(ctx, key)
}

// TestCollectKeepsTheMarkerOfANameCreatedDuringIt: a branch created after
// the collection listed the manifests, before its marker sweep, keeps its
// marker: the sweep looks a name it listed no manifest of up again before
// deleting its marker. Before, the sweep deleted the marker and the
// re-check put it back, and in between ListBranches missed a branch whose
// create was acknowledged (the lifetime soak's collections did so for
// about ten new branches a run).
func TestCollectKeepsTheMarkerOfANameCreatedDuringIt(t *testing.T) {
	for _, others := range []int{0, 5} {
		t.Run(fmt.Sprintf("others=%d", others), func(t *testing.T) {
			f := newFixture(t)
			f.seed(f.branch("main"), 0)
			f.forkedAndDeleted("gone", others)
			f.clock.Advance(time.Hour)
			hs := &listHookStore{Store: f.store, prefix: root + "/names/", suffix: "/names/late"}
			hs.hook = func() { f.fork("late", f.branch("main")) }
			m := f.maintainerOver(hs)
			rep, err := m.Collect(ctx, metaPolicy)
			if err != nil || !rep.Complete {
				t.Fatalf("collect: %+v %v", rep, err)
			}
			if hs.hook != nil {
				t.Fatal("the collection never listed the name markers")
			}
			if hs.deleted != 0 || rep.NameMarkersRestored != 0 || rep.NameMarkers.Deleted != others {
				t.Fatalf("late's marker deleted %d times; report %+v restored %d; want it untouched and %d others deleted", hs.deleted, rep.NameMarkers, rep.NameMarkersRestored, others)
			}
		})
	}
}

// forkedAndDeleted forks n branches named prefix0, prefix1, ... from main
// and deletes each, never committing on it.
func (f *fixture) forkedAndDeleted(prefix string, n int) {
	f.t.Helper()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		f.fork(name, f.branch("main"))
		if err := f.g.Kernel().DeleteBranch(ctx, name); err != nil {
			f.t.Fatal(err)
		}
	}
}

// TestCollectPutsBackNoMarkerOfANameGoneMeanwhile: a collection puts back
// the marker of a name it listed manifests of only if the name still has
// one. A concurrent collection (another policy, or a clock ahead) that
// deletes the name whole during this one's run deletes its marker too;
// before, this run put the marker back from its stale listing, and the
// next collection deleted it again.
func TestCollectPutsBackNoMarkerOfANameGoneMeanwhile(t *testing.T) {
	f := newFixture(t)
	f.seed(f.branch("main"), 0)
	f.forkedAndDeleted("x", 1)
	f.clock.Advance(time.Hour)
	hs := &listHookStore{Store: f.store, prefix: root + "/names/", suffix: "/names/x0"}
	hs.hook = func() { // the other collection deletes x0 whole, its marker last
		page, err := f.store.List(ctx, root+"/branches/x0/", "", objstore.MaxListLimit)
		if err != nil || len(page.Keys) == 0 {
			t.Fatalf("x0's manifests: %v %v", page.Keys, err)
		}
		for _, k := range append(page.Keys, root+"/names/x0") {
			if err := f.store.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	m := f.maintainerOver(hs)
	keepAll := metaPolicy
	keepAll.KeepFor = 24 * time.Hour // this collection keeps x0's history
	rep, err := m.Collect(ctx, keepAll)
	if err != nil || !rep.Complete {
		t.Fatalf("collect: %+v %v", rep, err)
	}
	if hs.hook != nil {
		t.Fatal("the collection never listed the name markers")
	}
	if rep.NameMarkersRestored != 0 {
		t.Fatalf("restored %d markers, want none: x0 has no manifest left", rep.NameMarkersRestored)
	}
	if _, err := f.store.Get(ctx, root+"/names/x0"); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("x0's marker after the collection: %v, want ErrNotFound", err)
	}
}

// maintainerOver returns a fresh Maintainer of f's graph reading and
// writing through store (a hook around f's store).
func (f *fixture) maintainerOver(store objstore.Store) *maintain.Maintainer {
	f.t.Helper()
	m, err := maintain.New(store, root, kernel.Env{Clock: f.clock, Entropy: rand.NewChaCha8([32]byte{9})})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}
