package kernel

import (
	"context"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// Test-only entry points to the aid-free lookups, so tests can compare the
// answers the commit indexes give with the plain manifest walk.

// LocateByScanForTest finds the manifest of commit id by scanning the
// manifests, ignoring every commit index, and returns the commit there.
func (g *Graph) LocateByScanForTest(ctx context.Context, id CommitID) (Commit, error) {
	at, err := g.scanHistory(ctx, id)
	if err != nil {
		return Commit{}, err
	}
	l, err := g.manifestAt(ctx, at)
	if err != nil {
		return Commit{}, err
	}
	return g.commitIn(ctx, l, id)
}

// MergeBaseByWalkForTest is MergeBaseOf computed by walking both
// ancestries, ignoring every commit index.
func (g *Graph) MergeBaseByWalkForTest(ctx context.Context, a, b CommitID) (Commit, error) {
	return g.mergeBaseByWalk(ctx, a, b)
}

// MergeBaseByReachForTest is MergeBaseOf computed from reaches only;
// ok=false when some commit has no complete verified reach.
func (g *Graph) MergeBaseByReachForTest(ctx context.Context, a, b CommitID) (Commit, bool, error) {
	return g.mergeBaseByReach(ctx, a, b)
}

// DropCachesForTest empties the handle's caches of immutable objects
// (manifests, table versions, commit locations and indexes), as their
// bounds would evict them on a history larger than they hold.
func (g *Graph) DropCachesForTest() {
	g.manifests = newCache[loaded](manifestCacheEntries)
	g.tables = newCache[format.TableVersion](tableCacheEntries)
	g.locations = newCache[format.ManifestRef](locationCacheEntries)
	g.indexes = newCache[format.CommitIndex](indexCacheEntries)
}

// WithRetryForTest runs f under the handle's retry loop (withRetry).
func (g *Graph) WithRetryForTest(ctx context.Context, op string, f func() error) error {
	return g.withRetry(ctx, op, f)
}
