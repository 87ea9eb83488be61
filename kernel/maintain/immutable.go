package maintain

import (
	"context"
	"sync"
)

// maxImmutableBytes bounds the bytes a Maintainer keeps of immutable
// objects it read (immutableCache).
const maxImmutableBytes = 32 << 20

// immutableCache keeps the bytes of objects a Maintainer's collections read
// and decoded whose keys are never rewritten: a table version named per
// attempt (R/tables/<t>/<fork>/a/<ulid>) and an index chunk
// (R/adj/<t>/<ulid>). Each is named by a fresh ULID and written create-only
// (a retry writes the same bytes), so the bytes at such a key are the only
// bytes ever there, and a Maintainer's next collection marks from here:
// its marking reads only what was written since (docs/gc.md §7,
// capacity). A hit for a key deleted since is harmless: marking what a
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
}

type immutableEntry struct {
	data []byte
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
			c.bytes -= len(e.data)
			delete(c.byKey, k)
		}
	}
}

func (c *immutableCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if ok {
		e.run = c.run
		c.byKey[key] = e
	}
	return e.data, ok
}

func (c *immutableCache) put(key string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok || c.bytes+len(b) > maxImmutableBytes {
		return
	}
	if c.byKey == nil {
		c.byKey = map[string]immutableEntry{}
	}
	c.byKey[key] = immutableEntry{data: append([]byte(nil), b...), run: c.run}
	c.bytes += len(b)
}

// readImmutable reads the object at key, which must be one immutableCache
// may hold, and hands its bytes to decode: from the cache when a
// collection of this Maintainer read it before, else from the store (then
// cached once decode accepts it, so corrupt bytes are never kept).
// found=false when it is not in the store (a concurrent collection
// deleted it).
func (m *Maintainer) readImmutable(ctx context.Context, key string, decode func([]byte) error) (found bool, err error) {
	if b, ok := m.immut.get(key); ok {
		return true, decode(b)
	}
	b, found, err := m.get(ctx, key)
	if err != nil || !found {
		return false, err
	}
	if err := decode(b); err != nil {
		return true, err
	}
	m.immut.put(key, b)
	return true, nil
}
