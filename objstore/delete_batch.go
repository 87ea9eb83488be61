package objstore

import (
	"context"
	"fmt"
)

// MaxDeleteBatch bounds the keys of one BatchDeleter request (S3's
// DeleteObjects takes at most 1,000).
const MaxDeleteBatch = 1000

// BatchDeleter is an optional Store capability: DeleteMany deletes up to
// MaxDeleteBatch keys in one request (S3's DeleteObjects), each as Delete
// would: a missing key is no error. It returns one error per key, in key
// order (nil: deleted or absent). A request that failed as a whole
// reports its error for every key; an ambiguous one (ErrAmbiguous) may
// have deleted any of them, which a delete, being idempotent, resolves by
// deleting again, unless the store knows the earlier delete was not made
// durable: then deleting again fails (ErrSyncFailed, as Delete). The keys are independent: nothing orders one delete of
// a batch before another, so a caller that needs an order puts the keys
// in separate calls.
type BatchDeleter interface {
	DeleteMany(ctx context.Context, keys []string) []error
}

// DeleteMany deletes keys through st's BatchDeleter in requests of at
// most MaxDeleteBatch keys, or, when st has none, with one Delete per key
// in key order. It returns one error per key, in key order.
func DeleteMany(ctx context.Context, st Store, keys []string) []error {
	errs := make([]error, len(keys))
	b, ok := st.(BatchDeleter)
	if !ok {
		for i, k := range keys {
			errs[i] = st.Delete(ctx, k)
		}
		return errs
	}
	for start := 0; start < len(keys); start += MaxDeleteBatch {
		end := min(start+MaxDeleteBatch, len(keys))
		got := b.DeleteMany(ctx, keys[start:end])
		if len(got) != end-start {
			panic("objstore: DeleteMany returned a result count unlike its keys'")
		}
		copy(errs[start:end], got)
	}
	return errs
}

// OversizedBatch is a BatchDeleter's answer to more than MaxDeleteBatch
// keys: ErrRejected for every key (nothing is sent). It is nil for a batch
// within the bound.
func OversizedBatch(keys []string) []error {
	if len(keys) <= MaxDeleteBatch {
		return nil
	}
	errs := make([]error, len(keys))
	for i, k := range keys {
		errs[i] = NewError(OpDelete, k, ErrRejected, fmt.Errorf("%d keys in one batched delete, at most %d", len(keys), MaxDeleteBatch))
	}
	return errs
}
