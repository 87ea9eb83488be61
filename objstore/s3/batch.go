package s3

import (
	"context"

	"github.com/graphkernel/graphkernel/objstore"
)

// BatchWorkers bounds the requests PutMany has in flight at once.
const BatchWorkers = 8

var _ objstore.BatchPutter = (*Store)(nil)

// PutMany implements objstore.BatchPutter: the requests are Puts (S3 has
// no deferred durability: every request is durable when it succeeds),
// issued concurrently, at most BatchWorkers at a time, so a batch costs
// about one round trip. Each result is its Put's.
func (s *Store) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	return objstore.PutConcurrently(ctx, s, reqs, BatchWorkers)
}
