package maintain

import (
	"context"
	"sync"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
	"github.com/graphkernel/graphkernel/objstore"
)

// maxImmutableBytes bounds the bytes a Maintainer keeps of immutable
// objects it read (immutableCache).
const maxImmutableBytes = 32 << 20

// immutableCache keeps the decoded values of objects a Maintainer's
// collections read whose keys are never rewritten: a table version named
// per attempt (R/tables/<t>/<fork>/a/<ulid>), an index chunk
// (R/adj/<t>/<ulid>) and a manifest the run listed (a manifest key is
// written create-only and an incarnation number is never reused), and
// rule 3b's verified reaches (reaches) and per-pair loads (pairs). Each key holds the only bytes ever
// there, so a Maintainer's next collection loads and marks from here: it
// reads and decodes only what was written since (docs/gc.md §7, capacity). A hit for a key deleted since is harmless: marking what a
// gone object names keeps more, never less; the keep decisions come from
// the run's own listings, never from here.
//
// Bounded: at most maxImmutableBytes of data (an insert past it is
// skipped), and an entry neither of the last two collections used is
// dropped when a collection ends. Safe for concurrent collections on one
// Maintainer. A restarted process starts empty.
type immutableCache struct {
	mu    sync.Mutex
	byKey map[string]immutableEntry
	bytes int
	run   uint64 // the newest collection begun
	// reaches holds verified manifest reaches (rule 3b's loads, see
	// cachedReach), at most maxCachedReaches, aged like byKey.
	reaches map[format.ManifestRef]reachEntry
	// pairs holds, per pair of live heads, what its merge-base search
	// loaded (gc.PairMemo), at most maxCachedPairs, aged like byKey.
	pairs map[[2]format.ManifestRef]pairEntry
}

// maxCachedPairs bounds the live pairs whose merge-base loads a
// Maintainer remembers.
const maxCachedPairs = 1 << 18

type pairEntry struct {
	loaded []format.ManifestRef
	run    uint64
}

// maxCachedReaches bounds the verified reaches a Maintainer keeps.
const maxCachedReaches = 1 << 16

type reachEntry struct {
	r   lineage.Reach
	run uint64
}

type immutableEntry struct {
	val  any    // the object's decoded value
	size int    // its bytes in the store
	run  uint64 // the newest collection that used it
}

// beginRun notes a collection beginning.
func (c *immutableCache) beginRun() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.run++
}

// endRun drops the entries neither this collection nor the one before
// used (their objects are likely collected or no longer kept).
func (c *immutableCache) endRun() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.byKey { //detlint:ordered deletes only: the order reaches nothing
		if e.run+1 < c.run {
			c.bytes -= e.size
			delete(c.byKey, k)
		}
	}
	for k, e := range c.reaches { //detlint:ordered deletes only: the order reaches nothing
		if e.run+1 < c.run {
			delete(c.reaches, k)
		}
	}
	for k, e := range c.pairs { //detlint:ordered deletes only: the order reaches nothing
		if e.run+1 < c.run {
			delete(c.pairs, k)
		}
	}
}

// getPair returns what the merge-base search of heads a and b loaded in
// an earlier collection of this Maintainer.
func (c *immutableCache) getPair(a, b format.ManifestRef) ([]format.ManifestRef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pairs[[2]format.ManifestRef{a, b}]
	if ok {
		e.run = c.run
		c.pairs[[2]format.ManifestRef{a, b}] = e
	}
	return e.loaded, ok
}

// putPair remembers a pair's loads (skipped past maxCachedPairs).
func (c *immutableCache) putPair(a, b format.ManifestRef, loaded []format.ManifestRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := [2]format.ManifestRef{a, b}
	if _, ok := c.pairs[k]; ok || len(c.pairs) >= maxCachedPairs {
		return
	}
	if c.pairs == nil {
		c.pairs = map[[2]format.ManifestRef]pairEntry{}
	}
	c.pairs[k] = pairEntry{loaded: loaded, run: c.run}
}

// getReach returns the verified reach of the manifest at, if a collection
// of this Maintainer verified it, and made the index it read it from
// durable, before (collection.syncIndexes).
func (c *immutableCache) getReach(at format.ManifestRef) (lineage.Reach, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.reaches[at]
	if ok {
		e.run = c.run
		c.reaches[at] = e
	}
	return e.r, ok
}

// putReach remembers a verified reach (skipped past maxCachedReaches).
func (c *immutableCache) putReach(r lineage.Reach) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.reaches[r.At]; ok || len(c.reaches) >= maxCachedReaches {
		return
	}
	if c.reaches == nil {
		c.reaches = map[format.ManifestRef]reachEntry{}
	}
	c.reaches[r.At] = reachEntry{r: r, run: c.run}
}

func (c *immutableCache) get(key string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if ok {
		e.run = c.run
		c.byKey[key] = e
	}
	return e.val, ok
}

// minPrefetchRoom is the room prefetchImmutable wants left in the cache:
// what it reads and cannot keep, the reads that follow read again.
const minPrefetchRoom = 1 << 20

// free is the room left under maxImmutableBytes.
func (c *immutableCache) free() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maxImmutableBytes - c.bytes
}

// put keeps val, decoded from size bytes, under key.
func (c *immutableCache) put(key string, val any, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok || c.bytes+size > maxImmutableBytes {
		return
	}
	if c.byKey == nil {
		c.byKey = map[string]immutableEntry{}
	}
	c.byKey[key] = immutableEntry{val: val, size: size, run: c.run}
	c.bytes += size
}

// readImmutable reads the object at key, which must be one immutableCache
// may hold, and returns what decode makes of its bytes: the value a
// collection of this Maintainer decoded before, else decode of the
// store's bytes (then cached once decode accepts them, so corrupt bytes
// are never kept; the value counts its bytes against maxImmutableBytes).
// Callers must not modify the value: it is shared with later collections.
// found=false when it is not in the store (a concurrent collection
// deleted it).
func readImmutable[T any](ctx context.Context, m *Maintainer, key string, decode func([]byte) (T, error)) (v T, found bool, err error) {
	return readImmutableView(ctx, m, key, func(b []byte) (T, int, error) {
		v, err := decode(b)
		return v, 0, err
	})
}

// readImmutableView is readImmutable whose decode keeps only a view of the
// object (what a collection reads of it) and says how many of its bytes
// the view left out: the cache charges the rest.
func readImmutableView[T any](ctx context.Context, m *Maintainer, key string, decode func([]byte) (T, int, error)) (v T, found bool, err error) {
	if cached, ok := m.immut.get(key); ok {
		if v, ok := cached.(T); ok {
			return v, true, nil
		}
	}
	b, found, err := m.get(ctx, key)
	if err != nil || !found {
		return v, false, err
	}
	v, left, err := decode(b)
	if err != nil {
		return v, true, err
	}
	m.immut.put(key, v, max(1, len(b)-left))
	return v, true, nil
}

// prefetchImmutable reads every key of keys that m's cache does not hold
// in batches (objstore.GetMany: one request per MaxGetBatch keys on the
// simulator's store, concurrent reads on S3) and caches what decode makes
// of each, as readImmutableView would, so the reads of them that follow
// are hits, while the cache has minPrefetchRoom left (else it reads
// nothing). It decides nothing and reports nothing: a key missing,
// unreadable or failing here is left to the single read that follows,
// which meets it (and retries it) as it would have without the prefetch.
func prefetchImmutable[T any](ctx context.Context, m *Maintainer, keys []string, decode func([]byte) (T, int, error)) {
	var want []string
	for _, k := range keys {
		if _, ok := m.immut.get(k); !ok {
			want = append(want, k)
		}
	}
	if len(want) < 2 || m.immut.free() < minPrefetchRoom {
		return // nothing to batch, or no room to keep it: the single reads follow
	}
	for i, r := range objstore.GetMany(ctx, m.store, want) {
		if r.Err != nil {
			continue
		}
		if v, left, err := decode(r.Object.Data); err == nil {
			m.immut.put(want[i], v, max(1, len(r.Object.Data)-left))
		}
	}
}
