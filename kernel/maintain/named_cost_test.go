package maintain_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// getCounter counts GETs per key.
type getCounter struct {
	objstore.Store
	mu   sync.Mutex
	gets map[string]int
}

func (s *getCounter) Get(ctx context.Context, key string) (objstore.Object, error) {
	s.mu.Lock()
	s.gets[key]++
	s.mu.Unlock()
	return s.Store.Get(ctx, key)
}

// take returns the counts since the last take and resets them.
func (s *getCounter) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gets
	s.gets = map[string]int{}
	return g
}

// namedKeys lists the store's table versions named per attempt.
func namedKeys(f *fixture) map[string]bool {
	out := map[string]bool{}
	for _, k := range f.store.Store.(*getCounter).Store.(*sim.Store).Keys(root + "/tables/") {
		if strings.Contains(k, "/a/") {
			out[k] = true
		}
	}
	return out
}

// collectCounted runs one collection and returns its GETs of table versions
// (by key) and the named versions it deleted.
func collectCounted(f *fixture) (tvGets map[string]int, deleted []string, total int) {
	f.t.Helper()
	gc := f.store.Store.(*getCounter)
	before := namedKeys(f)
	gc.take()
	f.collect(policy)
	tvGets = map[string]int{}
	for k, n := range gc.take() {
		total += n
		if strings.HasPrefix(k, root+"/tables/") {
			tvGets[k] = n
		}
	}
	after := namedKeys(f)
	for k := range before {
		if !after[k] {
			deleted = append(deleted, k)
		}
	}
	return tvGets, deleted, total
}

// TestCollectReadsNamedVersionsByWhatChanged: a collection reads a table
// version named per attempt at most once (markVersion, for a kept one: its
// number comes from the pin that keeps it) and never one it deletes (no
// sidecar names its table, so its number cannot matter), so after a
// history of n commits the collection that deletes it makes no read per
// deleted version, and a steady-state collection makes the same number of
// requests whether the history behind it is 10 or 60 commits long.
// Before gc.NamedVersion every old unpinned named version was read once
// more (attemptVersion) per collection that met it.
func TestCollectReadsNamedVersionsByWhatChanged(t *testing.T) {
	steady := map[int]int{}
	for _, n := range []int{10, 60} {
		f := newFixture(t)
		f.store.Store = &getCounter{Store: f.store.Store, gets: map[string]int{}}
		main := f.branch("main")
		f.seed(main, n)
		f.clock.Advance(10 * time.Minute)
		for round, label := range []string{"history", "steady"} {
			if round == 1 {
				for i := 0; i < 5; i++ {
					f.commit(main, func(tx *data.Txn) error { return tx.Update("Person", person("p01", fmt.Sprint("s", i))) })
				}
				f.clock.Advance(10 * time.Minute)
			}
			gets, deleted, total := collectCounted(f)
			for k, c := range gets {
				if c > 1 {
					t.Errorf("n=%d %s: table version %s read %d times in one collection, want at most once", n, label, k, c)
				}
			}
			for _, k := range deleted {
				if gets[k] != 0 {
					t.Errorf("n=%d %s: deleted unpinned named version %s was read", n, label, k)
				}
			}
			if round == 0 && len(deleted) < n-5 {
				t.Fatalf("n=%d: the first collection deleted %d named versions, want the history's (>= %d)", n, len(deleted), n-5)
			}
			if round == 1 {
				steady[n] = total
			}
			t.Logf("n=%d %s collection: %d GETs (%d of table versions), %d named versions deleted", n, label, total, len(gets), len(deleted))
		}
	}
	if steady[10] != steady[60] {
		t.Fatalf("steady-state collection GETs: %d after 10 commits, %d after 60: want equal (flat in history)", steady[10], steady[60])
	}
}
