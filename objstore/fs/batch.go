package fs

import (
	"context"

	"github.com/graphkernel/graphkernel/objstore"
)

var _ objstore.BatchPutter = (*Store)(nil)

// PutMany implements objstore.BatchPutter: each request is its
// single-object call (Put, PutDeferredIntact, PutDeferred), run
// concurrently, at most syncWorkers at a time, so the batch's file writes
// and directory creation overlap and its fsync rounds (one per
// PutDeferredIntact, two per Put, none per PutDeferred) run together: the
// file system commits concurrent fsyncs together. SyncStats counts each
// request's rounds as if alone.
func (s *Store) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	return objstore.PutConcurrently(ctx, s, reqs, syncWorkers)
}
