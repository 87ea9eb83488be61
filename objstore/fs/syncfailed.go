package fs

import (
	"fmt"
	"sync"

	"github.com/graphkernel/graphkernel/objstore"
)

// failedSyncsLimit bounds how many keys whose sync failed a Store
// remembers (failedSyncs); past it the oldest is forgotten.
const failedSyncsLimit = 4096

// failedSyncs is the keys whose deferred sync failed in this Store (an
// fsync's error: EIO after a failed writeback). Linux reports a writeback
// error to one fsync and then lets the next succeed over pages it marked
// clean, so a key once failed can never be shown durable by syncing it
// again: SyncDeferred and PutAfterDeferred refuse a batch naming one
// (objstore.ErrSyncFailed) until the key is written or deleted. Shared by
// copies of the Store; bounded (failedSyncsLimit, oldest forgotten first).
// Only this Store's own failures are known: another process's Store,
// whose fsync would succeed, does not know them (doc.go, Not guaranteed).
type failedSyncs struct {
	mu    sync.Mutex
	keys  map[string]bool
	order []string // oldest first; may hold keys forgotten since
}

// note records keys as failed. A nil failedSyncs (NoSync: nothing is
// synced) records nothing.
func (f *failedSyncs) note(keys []string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys == nil {
		f.keys = map[string]bool{}
	}
	for _, k := range keys {
		if !f.keys[k] {
			f.keys[k] = true
			f.order = append(f.order, k)
		}
	}
	for len(f.keys) > failedSyncsLimit && len(f.order) > 0 {
		delete(f.keys, f.order[0])
		f.order = f.order[1:]
	}
	if len(f.order) > 2*failedSyncsLimit { // drop the forgotten entries
		live := f.order[:0:0]
		for _, k := range f.order {
			if f.keys[k] {
				live = append(live, k)
			}
		}
		f.order = live
	}
}

// forget clears key: written or deleted since, it is a new file.
func (f *failedSyncs) forget(key string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.keys, key)
}

// check returns the error a sync of keys fails with when one of them
// failed before (the first such in keys' order), else nil.
func (f *failedSyncs) check(keys []string) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range keys {
		if f.keys[k] {
			return objstore.NewError(objstore.OpPut, k, objstore.ErrTransient,
				fmt.Errorf("sync deferred write: an earlier sync of this object failed: %w", objstore.ErrSyncFailed))
		}
	}
	return nil
}
