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
