package kernel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/graphkernel/graphkernel/kernel/failpoint"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// osCrashStore gives a store deferred durability (every create-only
// PutDeferred or PutDeferredIntact is pending until SyncDeferred names it)
// and models an OS crash: every object pending when some manifest was
// written may be lost, and crash loses them all. Shared by every process
// of one machine.
type osCrashStore struct {
	objstore.Store
	mu      sync.Mutex
	pending map[string]bool
	lost    map[string]bool
}

func newOSCrashStore(inner objstore.Store) *osCrashStore {
	return &osCrashStore{Store: inner, pending: map[string]bool{}, lost: map[string]bool{}}
}

func (s *osCrashStore) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	etag, err := s.Store.Put(ctx, key, data, objstore.CreateOnly)
	if err == nil {
		s.mu.Lock()
		s.pending[key] = true
		s.mu.Unlock()
	}
	return etag, err
}

func (s *osCrashStore) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	if cond != objstore.CreateOnly {
		etag, err := s.Store.Put(ctx, key, data, cond)
		return etag, false, err
	}
	etag, err := s.PutDeferred(ctx, key, data)
	return etag, true, err
}

func (s *osCrashStore) SyncDeferred(ctx context.Context, keys []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.pending, k)
	}
	return nil
}

func (s *osCrashStore) Put(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, error) {
	if strings.HasPrefix(key, recRoot+"/branches/") {
		s.mu.Lock()
		for k := range s.pending {
			s.lost[k] = true
		}
		s.mu.Unlock()
	}
	return s.Store.Put(ctx, key, data, cond)
}

// crash deletes every object a crash may have lost.
func (s *osCrashStore) crash(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.lost {
		if err := s.Store.Delete(recCtx, k); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRollForwardMakesTheWritersVersionsDurable: a writer dies after its
// table version (written with deferred durability) and before its publish;
// a recoverer rolls the write forward; then the OS crashes. The roll-forward
// publish made the writer's version durable first (publishReq.deferred), so
// the state reads back with the rolled-forward row. Red without the
// roll-forward's deferred keys: the version is lost and the published
// manifest names nothing.
func TestRollForwardMakesTheWritersVersionsDurable(t *testing.T) {
	store := recInit(t)
	os := newOSCrashStore(store)
	fps := failpoint.NewSet()
	fps.OnCrash(func() {})
	fps.SetDecider(recNthHit(failpoint.BeforePublish, 1))
	w := recOpenNow(t, os, 11, fps)
	if _, err := recWrite(w, "main", map[string]string{"a": "a1"}, "crashing write"); !errors.Is(err, failpoint.ErrCrashed) {
		t.Fatalf("crashing write: %v", err)
	}
	if len(os.pending) == 0 {
		t.Fatal("the writer deferred nothing")
	}
	recOpen(t, os, 33, nil) // its open sweep rolls the abandoned write forward
	os.crash(t)
	st := recState(t, store)
	if len(st.Branches) != 1 || len(st.Branches[0].Tables) != 2 || strings.Join(st.Branches[0].Tables[0].Fragments, ",") != "a0,a1" {
		t.Fatalf("state after the crash %s, want a = a0,a1", st)
	}
	if a := recOneAudit(t, store); a.Decision != format.DecisionRollForward {
		t.Fatalf("audit %+v, want a roll-forward", a)
	}
}
