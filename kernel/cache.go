package kernel

import "sync"

// cache is a bounded FIFO cache of decoded immutable objects, keyed by store
// key. Only objects whose keys are create-only and never rewritten
// (manifests, table versions) are cached, so a hit's content can never be
// stale; but a collection may have deleted the object since, so a hit does
// not say it is still there (a caller whose answer depends on that reads
// the store: reachLoader). Values must be treated as read-only by every
// caller.
type cache[V any] struct {
	mu    sync.Mutex
	max   int
	items map[string]V
	order []string // insertion order, for eviction; never reaches output
}

func newCache[V any](max int) *cache[V] {
	return &cache[V]{max: max, items: make(map[string]V)}
}

func (c *cache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.items[key]
	return v, ok
}

func (c *cache[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	if len(c.order) >= c.max {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
	c.items[key] = v
	c.order = append(c.order, key)
}
