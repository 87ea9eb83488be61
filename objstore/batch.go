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
	// keys are. In a batch (PutMany), a key of After that is the Key of
	// an earlier request of the same batch names that request's object:
	// a crash never keeps this request's write and loses or tears the
	// object of that request if it succeeded. A store that defers
	// durability makes this request wait for that one (on fs only its
	// sync round waits); a key whose request failed, or whose object was
	// not deferred (durable when it succeeded), is dropped from After:
	// the request goes on without it, so an aid's failure never fails
	// the request that names it.
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
// them but one: a request whose After names the Key of an earlier request
// of the batch is durable no earlier than that request's object, and
// goes on without the key if that request failed (PutRequest.After).
// One's failure neither stops nor undoes another. It returns one result
// per request, in request order, and only when every request has
// finished. A caller puts in one batch only writes that are independent
// but for After: nothing reads or references one before all have
// succeeded.
type BatchPutter interface {
	PutMany(ctx context.Context, reqs []PutRequest) []PutResult
}

// PutMany writes reqs through st's BatchPutter, or, when st has none, one
// request after another in order (PutOne each, its After settled by the
// requests before it, as PutRequest.After says): on such a store (the
// simulator's among them) a batch is sequential and deterministic.
func PutMany(ctx context.Context, st Store, reqs []PutRequest) []PutResult {
	if b, ok := st.(BatchPutter); ok {
		return b.PutMany(ctx, reqs)
	}
	return PutConcurrently(ctx, st, reqs, 1) // one worker: in order, no goroutine
}

// batchDeps returns, per request of reqs, the indices of the earlier
// requests whose Key its After names (none for a request that is not
// DurableNow: PutOne refuses its After whatever it names).
func batchDeps(reqs []PutRequest) [][]int {
	deps := make([][]int, len(reqs))
	var at map[string][]int
	for i, r := range reqs {
		if r.Durability == DurableNow {
			for _, k := range r.After {
				deps[i] = append(deps[i], at[k]...)
			}
		}
		if i+1 < len(reqs) {
			if at == nil {
				at = map[string][]int{}
			}
			at[r.Key] = append(at[r.Key], i)
		}
	}
	return deps
}

// settledAfter is request i's After once its earlier requests of the
// batch that it names (deps, indices into reqs, all finished: out holds
// their results) are settled: a key of theirs is dropped unless one of
// its requests succeeded with its object deferred (PutResult.Deferred).
// A request that is not DurableNow keeps its After (PutOne refuses it).
func settledAfter(reqs []PutRequest, out []PutResult, i int, deps []int) []string {
	r := reqs[i]
	if len(deps) == 0 {
		return r.After
	}
	keep := map[string]bool{}
	for _, j := range deps {
		k := reqs[j].Key
		keep[k] = keep[k] || (out[j].Err == nil && out[j].Deferred)
	}
	after := make([]string, 0, len(r.After))
	for _, k := range r.After {
		if ok, named := keep[k]; !named || ok {
			after = append(after, k)
		}
	}
	return after
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
// (at least 1) at a time, a request whose After names an earlier request
// of the batch only once that request has finished (its After settled
// as PutRequest.After says), and it returns when all have finished. A
// backend (never the kernel, which starts no goroutines) implements
// PutMany with it.
func PutConcurrently(ctx context.Context, st Store, reqs []PutRequest, workers int) []PutResult {
	return PutBatch(reqs, workers, func(r PutRequest, after func() []string) PutResult {
		if len(r.After) > 0 && r.Durability == DurableNow {
			r.After = after()
		}
		return PutOne(ctx, st, r)
	})
}

// PutBatch runs put once per request of reqs, at most workers (at least
// 1) at a time, in request order as far as it starts them, and returns
// their results in request order when all have finished. put's after
// waits until every earlier request of the batch that r.After names has
// finished and returns r.After settled as PutRequest.After says; a put
// that calls it only when it needs its dependencies durable (fs: at its
// sync round) overlaps the rest of its work with theirs. It never deadlocks: a
// request's dependencies were all started before it.
func PutBatch(reqs []PutRequest, workers int, put func(r PutRequest, after func() []string) PutResult) []PutResult {
	deps := batchDeps(reqs)
	out := make([]PutResult, len(reqs))
	done := make([]chan struct{}, len(reqs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	run := func(i int) {
		defer close(done[i])
		out[i] = put(reqs[i], func() []string {
			for _, j := range deps[i] {
				<-done[j]
			}
			return settledAfter(reqs, out, i, deps[i])
		})
	}
	if len(reqs) == 1 || workers <= 1 {
		for i := range reqs {
			run(i)
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
				run(i)
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
