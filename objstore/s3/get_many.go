package s3

import (
	"context"

	"github.com/graphkernel/graphkernel/objstore"
)

// BatchGetWorkers bounds the Gets GetMany has in flight at once.
const BatchGetWorkers = 16

var _ objstore.BatchGetter = (*Store)(nil)

// GetMany implements objstore.BatchGetter: S3 has no batched read, so the
// keys are Gets (GetObject), issued concurrently, at most BatchGetWorkers
// at a time (objstore.GetConcurrently), so a batch costs about one round
// trip per BatchGetWorkers keys. Each result is exactly its Get's (an
// invalid key fails alone, before any request); more than
// objstore.MaxGetBatch keys fail every key, with no request.
func (s *Store) GetMany(ctx context.Context, keys []string) []objstore.GetResult {
	if out := objstore.OversizedGetBatch(keys); out != nil {
		return out
	}
	return objstore.GetConcurrently(ctx, s, keys, BatchGetWorkers)
}
