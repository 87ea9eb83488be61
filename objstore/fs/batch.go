package fs

import (
	"context"

	"github.com/graphkernel/graphkernel/objstore"
)

var _ objstore.BatchPutter = (*Store)(nil)

// PutMany implements objstore.BatchPutter: each request is its
// single-object call (Put, PutAfterDeferred, PutDeferredIntact,
// PutDeferred), run concurrently, at most syncWorkers at a time, so the
// batch's file writes and directory creation overlap and its fsync rounds
// (one per PutDeferredIntact, two per Put, none per PutDeferred) run
// together: the file system commits concurrent fsyncs together. A request
// whose After names an earlier request of the batch (objstore.PutRequest)
// writes its temp file at once and waits for that request only before
// its first sync round, which then syncs that request's object with its
// temp file (objstore.PutRequest.After: not if that request failed).
// SyncStats counts each request's rounds as if alone.
func (s *Store) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	return objstore.PutBatch(reqs, syncWorkers, func(r objstore.PutRequest, after func() []string) objstore.PutResult {
		if len(r.After) == 0 || r.Durability != objstore.DurableNow {
			return objstore.PutOne(ctx, s, r)
		}
		etag, err := s.put(ctx, r.Key, r.Data, r.Cond, after)
		return objstore.PutResult{ETag: etag, Err: err}
	})
}
