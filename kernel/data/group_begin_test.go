package data

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// heldLists is a store whose next LIST of branches/ (a head lookup), once
// armed, is made and then held until release: the lookup's answer predates
// whatever happens meanwhile. It counts head lookups.
type heldLists struct {
	objstore.Store
	armed    atomic.Bool
	listed   chan struct{}
	release  chan struct{}
	branches atomic.Int64
}

func (s *heldLists) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	page, err := s.Store.List(ctx, prefix, after, limit)
	if strings.HasPrefix(prefix, testRoot+"/branches/") {
		s.branches.Add(1)
		if s.armed.CompareAndSwap(true, false) {
			s.listed <- struct{}{}
			<-s.release
		}
	}
	return page, err
}

// TestGroupBeginsShareLookups pins the shared head lookups of a
// group-commit handle's Begins: a Begin called while a lookup is in
// flight never takes that lookup's answer (it may predate a commit
// acknowledged before the Begin: red if a Begin joins the running
// lookup), and the Begins that queue behind one lookup share the next.
func TestGroupBeginsShareLookups(t *testing.T) {
	store := &heldLists{Store: sim.New(sim.Config{Seed: 1}), listed: make(chan struct{}), release: make(chan struct{})}
	seedGraph(t, initGraph(t, store, Limits{}))
	g, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: kernel.SystemEnv()}, Group: GroupOptions{Enabled: true}})
	must(t, err)
	other, err := Open(ctx, store, testRoot, Options{Kernel: kernel.Options{Env: testEnv(9)}})
	must(t, err)
	br := mainRef(t, g)

	store.armed.Store(true)
	first := make(chan *Txn)
	go func() {
		tx, err := g.Begin(ctx, br)
		if err != nil {
			t.Error(err)
		}
		first <- tx
	}()
	<-store.listed // the first Begin's lookup has read the head and is held
	tx := beginWith(t, other, insertPerson("late"))
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: "other"})
	must(t, err)

	const joiners = 3
	before := store.branches.Load()
	var wg sync.WaitGroup
	later := make([]*Txn, joiners)
	for i := range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := g.Begin(ctx, br)
			if err != nil {
				t.Error(err)
			}
			later[i] = tx
		}()
	}
	for !g.group.gathering(br, joiners) { // every later Begin has joined the next lookup
		runtime.Gosched()
	}
	close(store.release)
	stale := <-first
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if stale.Base().ManifestVersion() >= c.ManifestVersion {
		t.Fatalf("the held lookup saw v%d: the test did not hold it", stale.Base().ManifestVersion())
	}
	for i, tx := range later {
		if v := tx.Base().ManifestVersion(); v != c.ManifestVersion {
			t.Fatalf("Begin %d called after the commit at v%d began at v%d", i, c.ManifestVersion, v)
		}
	}
	if n := store.branches.Load() - before; n != 1 {
		t.Fatalf("%d head lookups for %d Begins queued behind one, want 1 shared", n, joiners)
	}
}
