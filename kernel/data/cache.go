package data

import (
	"container/list"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
)

// DefaultCacheBytes is the fragment cache's byte limit when
// Options.CacheBytes is zero.
const DefaultCacheBytes = 64 << 20

// fragCache is a handle's bounded cache of decoded fragments, keyed by
// table and immutable fragment name and shared by all its snapshots and
// transactions. It is safe because a fragment name is never reused for
// other bytes (fresh ULIDs, create-only, CRC-checked on decode). Entries
// are charged their file size and evicted least recently used first.
//
// Record ownership: the cache holds one reference to each record it was
// given and never releases it (memory is Go-managed, so eviction just drops
// the pointer and the garbage collector reclaims it when no view uses it
// any more); every other user pairs its own Retain and Release.
type fragCache struct {
	mu     sync.Mutex
	limit  int64
	used   int64
	ll     list.List                // of *cacheEntry, most recently used first
	m      map[string]*list.Element // key -> element
	hits   uint64
	misses uint64
}

type cacheEntry struct {
	key  string
	val  any // arrow.Record (fragments, adjacency pages) or *adjChunk
	size int64
}

// newFragCache returns a cache bounded by limit bytes (0: the default;
// negative: disabled).
func newFragCache(limit int64) *fragCache {
	if limit == 0 {
		limit = DefaultCacheBytes
	}
	return &fragCache{limit: max(limit, 0), m: map[string]*list.Element{}}
}

func cacheKey(table, name string) string { return table + "/" + name }

// get returns the cached record of key, marking it recently used.
func (c *fragCache) get(key string) (arrow.Record, bool) {
	v, ok := c.getAny(key)
	if !ok {
		return nil, false
	}
	return v.(arrow.Record), true
}

// getAny returns the cached value of key, marking it recently used.
func (c *fragCache) getAny(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		c.misses++
		return nil, false
	}
	c.hits++
	c.ll.MoveToFront(el)
	return el.Value.(*cacheEntry).val, true
}

// has reports whether key is cached (without touching its recency).
func (c *fragCache) has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[key]
	return ok
}

// put caches rec under key, charged size bytes, evicting the least
// recently used entries to stay within the limit. A record larger than
// the whole limit is not cached.
func (c *fragCache) put(key string, rec any, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; ok || size > c.limit {
		return
	}
	for c.used+size > c.limit {
		back := c.ll.Back()
		e := back.Value.(*cacheEntry)
		c.ll.Remove(back)
		delete(c.m, e.key)
		c.used -= e.size
	}
	c.m[key] = c.ll.PushFront(&cacheEntry{key: key, val: rec, size: size})
	c.used += size
	if c.used < 0 || c.used > c.limit || len(c.m) != c.ll.Len() {
		panic("data: fragment cache accounting broken")
	}
}

// CacheStats describe a handle's fragment cache.
type CacheStats struct {
	Hits, Misses uint64 // lookups since the handle was opened
	Bytes        int64  // bytes charged by the cached fragments
	Fragments    int    // cached fragments
	Limit        int64  // the byte limit
}

// CacheStats returns the fragment cache's counters.
func (g *Graph) CacheStats() CacheStats {
	c := g.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.misses, Bytes: c.used, Fragments: len(c.m), Limit: c.limit}
}
