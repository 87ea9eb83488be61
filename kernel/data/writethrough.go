package data

import (
	"context"
	"fmt"
)

// WriteThroughBytes bounds the objects a commit caches as it writes them
// (issue #32): a fragment, id page, adjacency page or chunk of at most
// this many stored bytes is decoded from the very bytes just written and
// cached under the key a read would use, so the next commit on the same
// handle does not GET what this one wrote (the tail fragment a small
// insert merges with, the id page and chunk it rewrites). Larger objects
// (bulk loads) are left to the read path: decoding them would cost CPU
// and flush the point reads' working set.
const WriteThroughBytes = 64 << 10

// WriteThroughRows bounds the rows a commit changes in a table for it to
// write through (WriteThroughBytes) the objects of that table's new
// version: a larger (bulk) commit caches none of them. Its objects would
// only evict one another and the point reads' working set, and decoding
// them again cost a bulk load 6% of its CPU, plus the collector marking
// a cache full of them (BenchmarkLoadMemory).
const WriteThroughRows = MaxFragmentRows

// cacheWritten caches the decoded form of an object this handle has just
// written create-only under a fresh name, exactly as a read of those bytes
// would (decode runs the read path's checks on them). It is safe because
// the name is never reused for other bytes (fresh ULIDs, create-only) and
// the value is what a GET of it decodes to. A decode failure of bytes this
// build encoded is an internal bug.
// Nothing is cached inside the materialize of a bulk commit (putBatch.bulk).
func (g *Graph) cacheWritten(ctx context.Context, key, name string, stored int, decode func() (any, int64, error)) {
	if b := batchOf(ctx); b != nil && b.bulk {
		return
	}
	if stored > WriteThroughBytes || int64(stored) > g.cache.limit || g.cache.has(key) {
		return
	}
	v, size, err := decode()
	if err != nil {
		panic(fmt.Sprintf("data: object %s this handle wrote does not decode: %v", name, err))
	}
	g.cache.put(key, v, size)
}

// cacheWrittenFragment caches fragment info of t, just written as b.
func (g *Graph) cacheWrittenFragment(ctx context.Context, t *Table, info FragmentInfo, b []byte) {
	g.cacheWritten(ctx, cacheKey(t.cacheID, info.Name), info.Name, len(b), func() (any, int64, error) {
		rec, err := DecodeFragment(t, info, b)
		if err != nil {
			return nil, 0, err
		}
		return rec, cachedBytes(rec, info.Bytes), nil
	})
}

// cacheWrittenIDPage caches id page ref of t, just written as b.
func (g *Graph) cacheWrittenIDPage(ctx context.Context, t *Table, ref adjRef, b []byte) {
	g.cacheWritten(ctx, "ids:"+cacheKey(t.Storage, ref.Name), ref.Name, len(b), func() (any, int64, error) {
		ids, err := decodeIDPage(ref, b)
		return ids, int64(ref.Bytes), err
	})
}

// cacheWrittenChunk caches chunk ref of t in direction d, just written as b.
func (g *Graph) cacheWrittenChunk(ctx context.Context, t *Table, d adjDir, ref adjRef, b []byte) {
	g.cacheWritten(ctx, "chunk:"+cacheKey(t.Storage, ref.Name), ref.Name, len(b), func() (any, int64, error) {
		c, err := decodeChunk(t, d, ref, b)
		return c, int64(ref.Bytes), err
	})
}

// cacheWrittenPage caches adjacency page ref of t in direction d, just
// written as b.
func (g *Graph) cacheWrittenPage(ctx context.Context, t *Table, d adjDir, ref adjRef, b []byte) {
	g.cacheWritten(ctx, cacheKey(t.cacheID, ref.Name), ref.Name, len(b), func() (any, int64, error) {
		rec, err := decodePage(t, d, ref, b)
		if err != nil {
			return nil, 0, err
		}
		return rec, cachedBytes(rec, ref.Bytes), nil
	})
}

// cacheWrittenFragChunk caches fragment chunk ref of t, just written as b.
func (g *Graph) cacheWrittenFragChunk(ctx context.Context, t *Table, ref fragChunkRef, b []byte) {
	g.cacheWritten(ctx, "fchunk:"+cacheKey(t.Storage, ref.Name), ref.Name, len(b), func() (any, int64, error) {
		infos, stats, err := decodeFragChunk(t, ref, b)
		return &decodedFragChunk{infos, stats}, int64(ref.Bytes), err
	})
}
