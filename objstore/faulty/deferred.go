package faulty

import (
	"context"

	"github.com/graphkernel/graphkernel/objstore"
)

// The deferred-durability capabilities pass through to the inner store
// (objstore.PutDeferred and friends: an ordinary durable Put on a store
// without them), so a faulty fs store exercises the same durability paths
// as a bare one. Each write draws one fault exactly as Put does (the same
// draws, in the same order, as before the pass-through); SyncDeferred is
// no request and draws nothing.
var (
	_ objstore.DeferredPutter       = (*Store)(nil)
	_ objstore.IntactDeferredPutter = (*Store)(nil)
	_ objstore.DeferredPublisher    = (*Store)(nil)
)

// put applies write under Put's fault rules.
func (s *Store) put(ctx context.Context, key string, write func() (string, error)) (string, error) {
	f := s.draw(ctx, objstore.OpPut, key, true)
	if f == transient {
		return "", transientErr(objstore.OpPut, key)
	}
	etag, err := write()
	if f != lostAck || err != nil {
		return etag, err
	}
	s.lost()
	return "", objstore.NewAmbiguousError(objstore.OpPut, key, objstore.ErrTransient, errInjected)
}

// PutDeferred implements objstore.DeferredPutter with Put's faults.
func (s *Store) PutDeferred(ctx context.Context, key string, data []byte) (string, error) {
	return s.put(ctx, key, func() (string, error) {
		etag, _, err := objstore.PutDeferred(ctx, s.inner, key, data)
		return etag, err
	})
}

// SyncDeferred implements objstore.DeferredPutter: no fault.
func (s *Store) SyncDeferred(ctx context.Context, keys []string) error {
	return objstore.SyncDeferred(ctx, s.inner, keys)
}

// PutDeferredIntact implements objstore.IntactDeferredPutter with Put's
// faults; deferred is the inner store's answer, also on a lost ack (the
// write applied, its durability deferred).
func (s *Store) PutDeferredIntact(ctx context.Context, key string, data []byte, cond objstore.Condition) (string, bool, error) {
	var deferred bool
	etag, err := s.put(ctx, key, func() (etag string, err error) {
		etag, deferred, err = objstore.PutDeferredIntact(ctx, s.inner, key, data, cond)
		return etag, err
	})
	return etag, deferred, err
}

// PutAfterDeferred implements objstore.DeferredPublisher with Put's faults.
func (s *Store) PutAfterDeferred(ctx context.Context, key string, data []byte, cond objstore.Condition, deferred []string) (string, error) {
	return s.put(ctx, key, func() (string, error) {
		return objstore.PutAfterDeferred(ctx, s.inner, key, data, cond, deferred)
	})
}
