package kernel_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/kerneltest"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/sim"
)

// stuckManifests counts every request and fails every manifest Put with a
// transient error: a persistent fault that every retry loop retries.
type stuckManifests struct {
	objstore.Store
	requests atomic.Int64
	stuck    atomic.Bool
}

func (s *stuckManifests) Get(ctx context.Context, key string) (objstore.Object, error) {
	s.requests.Add(1)
	return s.Store.Get(ctx, key)
}

func (s *stuckManifests) Head(ctx context.Context, key string) (objstore.Attrs, error) {
	s.requests.Add(1)
	return s.Store.Head(ctx, key)
}

func (s *stuckManifests) List(ctx context.Context, prefix, after string, limit int) (objstore.ListPage, error) {
	s.requests.Add(1)
	return s.Store.List(ctx, prefix, after, limit)
}

func (s *stuckManifests) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	s.requests.Add(1)
	if s.stuck.Load() && strings.Contains(key, "/branches/") {
		return "", objstore.NewError(objstore.OpPut, key, objstore.ErrTransient, errors.New("stuck"))
	}
	return s.Store.Put(ctx, key, data, cond)
}

func (s *stuckManifests) Delete(ctx context.Context, key string) error {
	s.requests.Add(1)
	return s.Store.Delete(ctx, key)
}

// §4: one public operation spends at most its request budget, however the
// retry loops nest, and then fails with the typed, retryable
// *RequestBudgetError. The control run (a budget too large to matter)
// shows the same write spending more than the budget without it.
func TestWriteSpendsAtMostItsRequestBudget(t *testing.T) {
	const budget = 50
	run := func(t *testing.T, opBudget int) (int64, error) {
		store := &stuckManifests{Store: sim.New(sim.Config{Seed: 3})}
		opts := kernel.Options{Env: kerneltest.Env(1, nil), OpRequestBudget: opBudget}
		g, err := kernel.Init(recCtx, store, recRoot, []byte("budget\n"), opts)
		if err != nil {
			t.Fatal(err)
		}
		main, _ := g.Branch(recCtx, "main")
		store.stuck.Store(true)
		before := store.requests.Load()
		_, err = g.Write(recCtx, main, recWrites(map[string]string{"a": "a1"}), kernel.LineageIntent{Actor: "t", Message: "stuck"})
		return store.requests.Load() - before, err
	}
	spent, err := run(t, budget)
	if spent > budget {
		t.Fatalf("the write spent %d requests, over its budget of %d", spent, budget)
	}
	var be *kernel.RequestBudgetError
	if !errors.As(err, &be) || be.Limit != budget || !errors.Is(err, kernel.ErrContention) || !errors.Is(err, kernel.ErrRequestBudget) {
		t.Fatalf("got %v, want *RequestBudgetError (retryable: ErrContention) with limit %d", err, budget)
	}
	control, err := run(t, 1<<30)
	if control <= budget || err == nil {
		t.Fatalf("control: the unbudgeted write spent %d requests (err %v); the test needs more than %d to show the bound", control, err, budget)
	}
	t.Logf("with a budget of %d: %d requests; without: %d", budget, spent, control)
}
