package objstore

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// orderStore is a Store with deferred durability that records, for the
// batch tests below, whether a PutAfterDeferred began while a PutDeferred
// was still running (the dependency not yet written) and what deferred
// keys each PutAfterDeferred was given. A PutDeferred of key slow yields
// the processor many times before it writes, so a dependent that does not
// wait for it starts meanwhile; a Put or PutDeferred of key fail fails.
type orderStore struct {
	slow, fail string
	running    atomic.Int32 // PutDeferreds in progress
	early      atomic.Bool  // a PutAfterDeferred began while one was
	mu         sync.Mutex
	objs       map[string][]byte
	after      map[string][]string // PutAfterDeferred's deferred keys, by key
}

func newOrderStore(slow, fail string) *orderStore {
	return &orderStore{slow: slow, fail: fail, objs: map[string][]byte{}, after: map[string][]string{}}
}

func (s *orderStore) Get(ctx context.Context, key string) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.objs[key]
	if !ok {
		return Object{}, NewError(OpGet, key, ErrNotFound, nil)
	}
	return Object{Data: b}, nil
}

func (s *orderStore) Head(ctx context.Context, key string) (Attrs, error) {
	return Attrs{}, NewError(OpHead, key, ErrRejected, errors.New("not in this fake"))
}

func (s *orderStore) List(ctx context.Context, prefix, startAfter string, limit int) (ListPage, error) {
	return ListPage{}, NewError(OpList, prefix, ErrRejected, errors.New("not in this fake"))
}

func (s *orderStore) Delete(ctx context.Context, key string) error { return nil }

func (s *orderStore) Put(ctx context.Context, key string, data []byte, cond Condition) (string, error) {
	if key == s.fail {
		return "", NewError(OpPut, key, ErrTransient, errors.New("injected"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs[key] = data
	return "e", nil
}

func (s *orderStore) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	s.running.Add(1)
	defer s.running.Add(-1)
	if key == s.slow {
		for range 10000 {
			runtime.Gosched()
		}
	}
	return s.Put(ctx, key, data, CreateOnly)
}

func (s *orderStore) SyncDeferred(ctx context.Context, keys []string) error { return nil }

func (s *orderStore) PutAfterDeferred(ctx context.Context, key string, data []byte, cond Condition, deferred []string) (string, error) {
	if s.running.Load() > 0 {
		s.early.Store(true)
	}
	s.mu.Lock()
	s.after[key] = slices.Clone(deferred)
	for _, k := range deferred {
		if _, ok := s.objs[k]; !ok {
			s.mu.Unlock()
			return "", NewError(OpPut, key, ErrTransient, errors.New("deferred key "+k+" missing"))
		}
	}
	s.mu.Unlock()
	return s.Put(ctx, key, data, cond)
}

// TestPutConcurrentlyAfterWaits: in a concurrent batch (PutConcurrently,
// every backend's BatchPutter but fs's own), a request whose After names
// an earlier request of the batch starts only once that request has
// finished, and gets its key (deferred, succeeded) in its After; a request
// of the batch that names nothing does not wait. Red if PutBatch's after
// does not wait: the dependent starts while its dependency still runs and
// finds it missing.
func TestPutConcurrentlyAfterWaits(t *testing.T) {
	for range 20 {
		s := newOrderStore("aid", "")
		reqs := []PutRequest{
			{Key: "aid", Data: []byte("a"), Cond: CreateOnly, Durability: DeferAll},
			{Key: "m", Data: []byte("m"), Cond: CreateOnly, After: []string{"x", "aid"}},
		}
		s.objs["x"] = []byte("x") // deferred by an earlier batch
		res := PutConcurrently(t.Context(), s, reqs, 4)
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("request %d (%s): %v", i, reqs[i].Key, r.Err)
			}
		}
		if s.early.Load() {
			t.Fatal("the manifest's write began while the aid it names was still being written")
		}
		if got := s.after["m"]; !slices.Equal(got, []string{"x", "aid"}) {
			t.Fatalf("manifest's deferred keys %q, want [x aid]", got)
		}
	}
}

// TestPutManyAfterDropsFailed: a key of After whose request of the batch
// failed, or wrote an object durable when it succeeded (not deferred), is
// dropped from the dependent's After (settledAfter), in the sequential
// fallback (PutMany on a store without BatchPutter) and the concurrent
// path alike; a key the batch does not write, and a request not
// DurableNow, keep theirs. Red if settledAfter keeps a failed key: the
// dependent's write fails on the key never written.
func TestPutManyAfterDropsFailed(t *testing.T) {
	reqs := []PutRequest{
		{Key: "failed", Data: []byte("f"), Cond: CreateOnly, Durability: DeferAll},
		{Key: "durable", Data: []byte("d"), Cond: CreateOnly},
		{Key: "m", Data: []byte("m"), Cond: CreateOnly, After: []string{"failed", "x", "durable"}},
		{Key: "bad", Data: []byte("b"), Cond: CreateOnly, Durability: DeferName, After: []string{"failed"}},
	}
	for name, put := range map[string]func(st Store) []PutResult{
		"sequential": func(st Store) []PutResult { return PutMany(t.Context(), st, reqs) },
		"concurrent": func(st Store) []PutResult { return PutConcurrently(t.Context(), st, reqs, 4) },
	} {
		s := newOrderStore("", "failed")
		s.objs["x"] = []byte("x")
		res := put(s)
		if res[0].Err == nil || res[1].Err != nil || res[2].Err != nil {
			t.Fatalf("%s: results %+v, want the first failed, the next two written", name, res)
		}
		if got := s.after["m"]; !slices.Equal(got, []string{"x"}) {
			t.Fatalf("%s: manifest's deferred keys %q, want [x]", name, got)
		}
		if !errors.Is(res[3].Err, ErrRejected) {
			t.Fatalf("%s: After on a DeferName request: %v, want ErrRejected", name, res[3].Err)
		}
	}
}
