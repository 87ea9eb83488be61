package fs

import (
	"fmt"
	"sync"

	"github.com/graphkernel/graphkernel/objstore"
)

// failedSyncsLimit bounds how many keys a failedSyncs remembers; past it
// the oldest is forgotten.
const failedSyncsLimit = 4096

// failedSyncs is a set of keys whose fsync failed in this Store (EIO after
// a failed writeback). Linux reports a writeback error to one fsync and
// then lets the next succeed over pages it marked clean, so a key once
// failed can never be shown durable by syncing it again. A Store keeps
// two (shared by its copies; each bounded, failedSyncsLimit keys, oldest
// forgotten first):
//
//   - failed: keys whose deferred sync failed (a file or directory of
//     theirs). SyncDeferred and PutAfterDeferred refuse a batch naming one
//     (objstore.ErrSyncFailed) until the key is written or deleted.
//   - failedUnlinks: keys whose unlink's directory fsync failed (Delete,
//     DeleteMany). A later delete that finds such a key absent fails with
//     ErrSyncFailed instead of reporting the delete durable, until the key
//     is written again (any Put: a new file at the key) or a later delete
//     of this Store unlinks a file at it and syncs its directory. A
//     successful fsync of the directory alone (another key's delete, a
//     Put beside it) does not clear it: it proves nothing about a block
//     whose writeback failed and was marked clean, while a write or an
//     unlink of the key dirties the block holding its entry again, so the
//     next successful fsync writes it.
//
// Only this Store's own failures are known: another process's Store does
// not know them (doc.go, Not guaranteed).
//
// A clear races a note: a write or delete that clears a key must not
// clear a failure of an unlink that came after its own file was placed
// or unlinked (a racing Delete that removed the Put's new file). So every
// note is numbered, a clearer takes mark before it places or unlinks, and
// forgetNotedBy clears only a note numbered at most that mark: a later
// note stays (at worst a failure is remembered that a later write
// covered: a delete fails until the key is written again, never the
// reverse).
type failedSyncs struct {
	mu   sync.Mutex
	keys map[string]uint64 // key -> the number of its latest note
	// order is the notes, oldest first; an entry whose number is not its
	// key's current one was forgotten or noted again since.
	order []failedNote
	seq   uint64 // the number of the latest note
}

// failedNote is one note in failedSyncs.order.
type failedNote struct {
	key string
	seq uint64
}

// note records keys as failed. A nil failedSyncs records nothing.
func (f *failedSyncs) note(keys []string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys == nil {
		f.keys = map[string]uint64{}
	}
	for _, k := range keys {
		f.seq++
		f.keys[k] = f.seq
		f.order = append(f.order, failedNote{key: k, seq: f.seq})
	}
	for len(f.keys) > failedSyncsLimit && len(f.order) > 0 {
		if n := f.order[0]; f.keys[n.key] == n.seq {
			delete(f.keys, n.key)
		}
		f.order = f.order[1:]
	}
	if len(f.order) > 2*failedSyncsLimit { // drop the stale entries
		live := f.order[:0:0]
		for _, n := range f.order {
			if f.keys[n.key] == n.seq {
				live = append(live, n)
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

// mark returns the number of the latest note: taken before a write places
// its file or a delete unlinks one, for forgetNotedBy.
func (f *failedSyncs) mark() uint64 {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// forgetNotedBy clears key if its latest note is numbered at most mark
// (noted before the caller placed or unlinked its file); a later note,
// which may be about the caller's own file, stays.
func (f *failedSyncs) forgetNotedBy(key string, mark uint64) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.keys[key]; ok && n <= mark {
		delete(f.keys, key)
	}
}

// has reports whether key is noted.
func (f *failedSyncs) has(key string) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.keys[key]
	return ok
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
		if _, ok := f.keys[k]; ok {
			return objstore.NewError(objstore.OpPut, k, objstore.ErrTransient,
				fmt.Errorf("sync deferred write: an earlier sync of this object failed: %w", objstore.ErrSyncFailed))
		}
	}
	return nil
}

// checkUnlink returns the error a delete that finds key absent fails with
// when an earlier unlink of key was not made durable (failedUnlinks),
// else nil: a definite ErrTransient (reading back cannot resolve it: the
// key is absent either way) with cause objstore.ErrSyncFailed. The
// caller makes the delete durable by writing the key again and deleting
// it again.
func (f *failedSyncs) checkUnlink(key string) error {
	if !f.has(key) {
		return nil
	}
	return objstore.NewError(objstore.OpDelete, key, objstore.ErrTransient,
		fmt.Errorf("delete: an earlier unlink of this object was not made durable (its directory's fsync failed; write the key again and delete it): %w", objstore.ErrSyncFailed))
}
