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
// about one round trip. Each result is its Put's. A request's After keys
// order nothing here, those of the batch included (what a request names
// is durable once its own write succeeded), so no request waits for
// another.
func (s *Store) PutMany(ctx context.Context, reqs []objstore.PutRequest) []objstore.PutResult {
	return objstore.PutConcurrently(ctx, s, withoutAfter(reqs), BatchWorkers)
}

// withoutAfter is reqs with the After keys of every DurableNow request
// dropped (a request of another durability keeps them: PutOne refuses
// it, as the single-object call would).
func withoutAfter(reqs []objstore.PutRequest) []objstore.PutRequest {
	out := make([]objstore.PutRequest, len(reqs))
	for i, r := range reqs {
		if r.Durability == objstore.DurableNow {
			r.After = nil
		}
		out[i] = r
	}
	return out
}
