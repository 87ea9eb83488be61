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
// group-commit handle's transactions: Begin floats on the handle's view
// (no lookup); a transaction's first read pins its base at a head lookup.
// A first read called while a lookup is in flight never takes that
// lookup's answer (it may predate a commit acknowledged before the read:
// red if it joins the running lookup), and the first reads that queue
// behind one lookup share the next.
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
		first <- beginAndRead(t, g, br)
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
			later[i] = beginAndRead(t, g, br)
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
			t.Fatalf("transaction %d, first read after the commit at v%d, based at v%d", i, c.ManifestVersion, v)
		}
	}
	if n := store.branches.Load() - before; n != 1 {
		t.Fatalf("%d head lookups for %d first reads queued behind one, want 1 shared", n, joiners)
	}
}

// beginAndRead begins a transaction on g and makes its first read, which
// pins its base (base.go).
func beginAndRead(t *testing.T, g *Graph, br kernel.BranchRef) *Txn {
	tx, err := g.Begin(ctx, br)
	if err == nil {
		_, err = tx.Count(ctx, "Person")
	}
	if err != nil {
		t.Error(err)
	}
	return tx
}
