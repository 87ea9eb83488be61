package objstore

import (
	"context"
	"fmt"
	"sync"
)

// MaxGetBatch bounds the keys of one BatchGetter request.
const MaxGetBatch = 1000

// GetResult is one key's answer in a batched read: what Get would have
// returned for it.
type GetResult struct {
	Object Object
	Err    error
}

// BatchGetter is an optional Store capability: GetMany reads up to
// MaxGetBatch independent keys in one call and answers each as Get would
// (ErrNotFound for a missing key), in key order. A read changes nothing,
// so a failed or partial batch is simply read again. A backend whose reads
// cost a round trip each (S3) issues them concurrently, so a batch costs
// about one round trip per BatchGetWorkers keys; the simulator's store
// makes it one call.
type BatchGetter interface {
	GetMany(ctx context.Context, keys []string) []GetResult
}

// GetMany reads keys through st's BatchGetter in requests of at most
// MaxGetBatch keys, or, when st has none, with one Get per key in key
// order. It returns one result per key, in key order.
func GetMany(ctx context.Context, st Store, keys []string) []GetResult {
	out := make([]GetResult, len(keys))
	b, ok := st.(BatchGetter)
	if !ok {
		for i, k := range keys {
			out[i].Object, out[i].Err = st.Get(ctx, k)
		}
		return out
	}
	for start := 0; start < len(keys); start += MaxGetBatch {
		end := min(start+MaxGetBatch, len(keys))
		got := b.GetMany(ctx, keys[start:end])
		if len(got) != end-start {
			panic("objstore: GetMany returned a result count unlike its keys'")
		}
		copy(out[start:end], got)
	}
	return out
}

// OversizedGetBatch is a BatchGetter's answer to more than MaxGetBatch
// keys: ErrRejected for every key (nothing is sent). It is nil for a batch
// within the bound.
func OversizedGetBatch(keys []string) []GetResult {
	if len(keys) <= MaxGetBatch {
		return nil
	}
	out := make([]GetResult, len(keys))
	for i, k := range keys {
		out[i].Err = NewError(OpGet, k, ErrRejected, fmt.Errorf("%d keys in one batched read, at most %d", len(keys), MaxGetBatch))
	}
	return out
}

// GetConcurrently is a BatchGetter's GetMany for a store whose reads may
// run in parallel: one Get on st per key, at most workers (at least 1) at
// a time, started in key order; it returns when all have finished, each
// result in its key's place. It applies no batch bound (a BatchGetter
// refuses more than MaxGetBatch keys first: OversizedGetBatch). A backend
// (never the kernel, which starts no goroutines) implements GetMany with
// it.
func GetConcurrently(ctx context.Context, st Store, keys []string, workers int) []GetResult {
	out := make([]GetResult, len(keys))
	get := func(i int) { out[i].Object, out[i].Err = st.Get(ctx, keys[i]) }
	if len(keys) <= 1 || workers <= 1 {
		for i := range keys {
			get(i)
		}
		return out
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				get(i)
			}
		}()
	}
	for i := range keys {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}
