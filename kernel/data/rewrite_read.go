package data

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
)

// pageOnce returns the decoded page ref of t in direction d like page, but
// leaves it out of the handle's cache on a miss: a commit rewriting the
// page reads it exactly once and replaces it by pages of fresh names, so
// caching it would only hold memory (a bulk load's later commits rewrite
// every page and would fill the cache, DefaultCacheBytes, with them).
func (r *reader) pageOnce(ctx context.Context, t *Table, d adjDir, ref adjRef) (arrow.Record, error) {
	if rec, ok := r.g.cache.get(cacheKey(t.cacheID, ref.Name)); ok {
		return rec, nil
	}
	b, err := r.getChecked(ctx, t, ref)
	if err != nil {
		return nil, err
	}
	return decodePage(t, d, ref, b)
}
