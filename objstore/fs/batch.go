package fs

import (
	"context"

	"github.com/graphkernel/graphkernel/objstore"
)

var _ objstore.BatchPutter = (*Store)(nil)

// PutMany implements objstore.BatchPutter: each request is its
// single-object call (Put, PutAfterDeferred, PutDeferredIntact,
// PutDeferred). A batch of at most inOrderBatch requests (a commit's: its
// table version; its index and manifest) runs one request after another,
// in order; a larger one runs concurrently, at most syncWorkers at a
// time, so its file writes and directory creation overlap and its fsync
// rounds (one per PutDeferredIntact, two per Put, none per PutDeferred)
// run together: the file system commits concurrent fsyncs together. A
// request whose After names an earlier request of the batch
// (objstore.PutRequest) writes its temp file at once and waits for that
// request only before its first sync round, which then syncs that
// request's object with its temp file (objstore.PutRequest.After: not if
// that request failed). SyncStats counts each request's rounds as if
// alone.
func (s *Store) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	workers := syncWorkers
	if len(reqs) <= inOrderBatch {
		workers = 1
	}
	return s.putMany(ctx, reqs, workers)
}

// inOrderBatch is the largest batch PutMany runs in order. On a small
// batch the goroutines' hand-offs and the creates contending for the
// file system's journal cost more than the overlap saves (issue #32,
// session 23, ext4 on a 2-core VM: BenchmarkPutManyInOrder 0.86-1.0 of
// concurrent at 2-3 requests, mixed at 4, concurrent ahead at 8 and 32;
// a one-row commit's BenchmarkCommitFloor/fs 2.5-3.0 ms in order against
// 3.4-3.9 ms concurrent).
const inOrderBatch = 3

// putMany is PutMany with at most workers requests at a time (1: in
// order).
func (s *Store) putMany(ctx context.Context, reqs []objstore.PutRequest, workers int) []objstore.PutResult {
	return objstore.PutBatch(reqs, workers, func(r objstore.PutRequest, after func() []string) objstore.PutResult {
		if len(r.After) == 0 || r.Durability != objstore.DurableNow {
			return objstore.PutOne(ctx, s, r)
		}
		etag, err := s.put(ctx, r.Key, r.Data, r.Cond, after)
		return objstore.PutResult{ETag: etag, Err: err}
	})
}
