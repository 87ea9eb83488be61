package objstore

import "context"

// DeferredPutter is an optional Store capability for a writer of many
// immutable objects under fresh names that nothing references yet (a
// commit's fragments and index pages): it pays for durability once per
// batch instead of once per object.
//
// PutDeferred is a create-only Put (ErrPreconditionFailed if key exists,
// the same errors and read-back rule otherwise) whose object is visible
// when it returns but durable only once SyncDeferred has named its key and
// returned nil. SyncDeferred makes every named object that PutDeferred
// wrote durable, with the directory entries leading to it; on an error
// none of them may be assumed durable (the batch must not be referenced;
// write it again under fresh names). A caller must not publish a reference
// to a deferred object before its SyncDeferred returned nil.
//
// A sync that failed as an fsync's EIO does (cause ErrSyncFailed) is
// final for its keys: their bytes may never reach the disk, and the
// operating system may let a second fsync succeed anyway (Linux reports a
// writeback error once). The store remembers such keys and fails every
// later SyncDeferred or PutAfterDeferred naming one with ErrSyncFailed
// again, until the key is written or deleted; a caller writes the objects
// again (under fresh names, or durably over the old key) rather than
// syncing them again.
type DeferredPutter interface {
	PutDeferred(ctx context.Context, key string, data []byte) (string, error)
	SyncDeferred(ctx context.Context, keys []string) error
}

// PutDeferred writes key create-only through st's DeferredPutter, or, when
// st has none, as an ordinary durable create-only Put (then SyncDeferred
// has nothing to do). It reports whether the write was deferred.
func PutDeferred(ctx context.Context, st Store, key string, data []byte) (etag string, deferred bool, err error) {
	if d, ok := st.(DeferredPutter); ok {
		etag, err = d.PutDeferred(ctx, key, data)
		return etag, true, err
	}
	etag, err = st.Put(ctx, key, data, CreateOnly)
	return etag, false, err
}

// SyncDeferred makes the objects PutDeferred deferred on st durable (see
// DeferredPutter); without deferred keys, or on a store without the
// capability, it does nothing.
func SyncDeferred(ctx context.Context, st Store, keys []string) error {
	d, ok := st.(DeferredPutter)
	if !ok || len(keys) == 0 {
		return nil
	}
	return d.SyncDeferred(ctx, keys)
}

// DeferredPublisher is an optional Store capability beside DeferredPutter:
// one conditional Put that first makes durable the objects PutDeferred
// wrote under the deferred keys, in the same step as its own data, so a
// writer whose objects only need to be durable before the object that
// names them (a manifest naming a table version) pays one wait for both.
//
// PutAfterDeferred has Put's semantics and errors, plus: no part of key's
// write is durable before every deferred object is, and when it returns
// nil (or an ambiguous error whose write applied) every deferred object
// is durable. A failure to make them durable is returned before key is
// written, as a definite (never ambiguous) error naming a deferred key.
type DeferredPublisher interface {
	PutAfterDeferred(ctx context.Context, key string, data []byte, cond Condition, deferred []string) (string, error)
}

// PutAfterDeferred writes key under cond once the objects PutDeferred wrote
// under deferred are durable (see DeferredPublisher): in one step on a
// store that can, else SyncDeferred then Put. Without deferred keys it is
// st.Put.
func PutAfterDeferred(ctx context.Context, st Store, key string, data []byte, cond Condition, deferred []string) (string, error) {
	if len(deferred) > 0 {
		if p, ok := st.(DeferredPublisher); ok {
			return p.PutAfterDeferred(ctx, key, data, cond, deferred)
		}
		if err := SyncDeferred(ctx, st, deferred); err != nil {
			return "", err
		}
	}
	return st.Put(ctx, key, data, cond)
}

// IntactDeferredPutter is an optional Store capability beside
// DeferredPutter for an object that may be read before anything durable
// references it (a table version at a chain slot, which recovery reads;
// a commit index, which readers look up by key): PutDeferredIntact is Put
// under cond whose object is never torn by a crash (its data is durable
// before its name is visible: after a crash the key holds what it held
// before or this object, whole), while its name, like PutDeferred's, is
// durable only once SyncDeferred (or PutAfterDeferred) has named its key
// (or never: a writer that can lose the write, such as a rebuildable aid,
// need not sync it). deferred reports whether the name's durability was
// deferred (a wrapper passes on its inner store's answer: false when that
// made the write durable).
type IntactDeferredPutter interface {
	PutDeferredIntact(ctx context.Context, key string, data []byte, cond Condition) (etag string, deferred bool, err error)
}

// PutDeferredIntact writes key under cond through st's
// IntactDeferredPutter, or, when st has none, as an ordinary durable Put
// (never through a plain PutDeferred, which may leave a torn object after
// a crash). It reports whether the name's durability was deferred.
func PutDeferredIntact(ctx context.Context, st Store, key string, data []byte, cond Condition) (etag string, deferred bool, err error) {
	if d, ok := st.(IntactDeferredPutter); ok {
		return d.PutDeferredIntact(ctx, key, data, cond)
	}
	etag, err = st.Put(ctx, key, data, cond)
	return etag, false, err
}
