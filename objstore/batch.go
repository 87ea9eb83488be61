package objstore

import (
	"context"
	"errors"
	"sync"
)

// errDeferAllCond rejects a DeferAll request that is not create-only.
var errDeferAllCond = errors.New("a DeferAll write must be create-only")

// errAfterDeferred rejects a request with After keys that is not DurableNow.
var errAfterDeferred = errors.New("a write after deferred keys must be DurableNow")

// Durability says when the object of a batched write (PutRequest) must be
// durable: the single-object call it stands for.
type Durability uint8

// The durabilities of a PutRequest.
const (
	// DurableNow is Put: durable when the request succeeds.
	DurableNow Durability = iota
	// DeferName is PutDeferredIntact: never torn by a crash, its name
	// durable once SyncDeferred or PutAfterDeferred named its key.
	DeferName
	// DeferAll is PutDeferred (create-only only): visible when written,
	// durable once SyncDeferred or PutAfterDeferred named its key.
	DeferAll
)

// PutRequest is one write of a batch (PutMany).
type PutRequest struct {
	Key        string
	Data       []byte
	Cond       Condition // DeferAll requires CreateOnly
	Durability Durability
	// After, with DurableNow only, makes the request PutAfterDeferred:
	// no part of it is durable before the objects deferred under these
	// keys are.
	After []string
}

// PutResult is the outcome of one PutRequest: what its single-object call
// (Put, PutDeferredIntact or PutDeferred) would have returned. Deferred
// reports that the object's durability was deferred (its key must then
// ride a SyncDeferred or PutAfterDeferred).
type PutResult struct {
	ETag     string
	Deferred bool
	Err      error
}

// BatchPutter is an optional Store capability: PutMany issues independent
// writes at once (S3: concurrent requests, one round trip for the batch
// instead of one each). Each request is exactly its single-object call,
// with that call's semantics and errors (an ambiguous outcome is the
// caller's to resolve by reading back); the requests have no order among
// them, and one's failure neither stops nor undoes another. It returns one
// result per request, in request order, and only when every request has
// finished. A caller puts in one batch only writes that are independent:
// nothing reads or references one before all have succeeded.
type BatchPutter interface {
	PutMany(ctx context.Context, reqs []PutRequest) []PutResult
}

// PutMany writes reqs through st's BatchPutter, or, when st has none, one
// request after another in order (PutOne each): on such a store (the
// simulator's among them) a batch is sequential and deterministic.
func PutMany(ctx context.Context, st Store, reqs []PutRequest) []PutResult {
	if b, ok := st.(BatchPutter); ok {
		return b.PutMany(ctx, reqs)
	}
	out := make([]PutResult, len(reqs))
	for i, r := range reqs {
		out[i] = PutOne(ctx, st, r)
	}
	return out
}

// PutOne is r's single-object call on st: Put (PutAfterDeferred with
// After keys), PutDeferredIntact or PutDeferred (each falling back to a
// durable Put on a store without the capability).
func PutOne(ctx context.Context, st Store, r PutRequest) PutResult {
	var res PutResult
	if len(r.After) > 0 && r.Durability != DurableNow {
		return PutResult{Err: NewError(OpPut, r.Key, ErrRejected, errAfterDeferred)}
	}
	switch r.Durability {
	case DeferName:
		res.ETag, res.Deferred, res.Err = PutDeferredIntact(ctx, st, r.Key, r.Data, r.Cond)
	case DeferAll:
		if r.Cond.Kind != CondCreateOnly {
			return PutResult{Err: NewError(OpPut, r.Key, ErrRejected, errDeferAllCond)}
		}
		res.ETag, res.Deferred, res.Err = PutDeferred(ctx, st, r.Key, r.Data)
	default:
		res.ETag, res.Err = PutAfterDeferred(ctx, st, r.Key, r.Data, r.Cond, r.After)
	}
	return res
}

// PutConcurrently is a BatchPutter's PutMany for a store whose requests
// may run in parallel: every request is PutOne on st, at most workers
// (at least 1) at a time, and it returns when all have finished. A backend
// (never the kernel, which starts no goroutines) implements PutMany with
// it.
func PutConcurrently(ctx context.Context, st Store, reqs []PutRequest, workers int) []PutResult {
	out := make([]PutResult, len(reqs))
	if len(reqs) == 1 || workers <= 1 {
		for i, r := range reqs {
			out[i] = PutOne(ctx, st, r)
		}
		return out
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(reqs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = PutOne(ctx, st, reqs[i])
			}
		}()
	}
	for i := range reqs {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}
