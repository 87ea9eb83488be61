package storetest

import (
	"fmt"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
)

// testPutMany: objstore.PutMany (the store's BatchPutter, or the
// sequential fallback) gives every request the outcome of its own
// single-object call, in request order: a failed condition or an invalid
// key fails only its request, every other write lands whole, and every
// durability kind reads back the same.
func testPutMany(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	taken := mustPut(t, s, "batch/taken", []byte("old"), objstore.CreateOnly)
	cas := mustPut(t, s, "batch/cas", []byte("v1"), objstore.CreateOnly)
	reqs := []objstore.PutRequest{
		{Key: "batch/a", Data: []byte("a"), Cond: objstore.CreateOnly, Durability: objstore.DeferAll},
		{Key: "batch/taken", Data: []byte("new"), Cond: objstore.CreateOnly, Durability: objstore.DeferName},
		{Key: "batch/b", Data: []byte("b"), Cond: objstore.CreateOnly, Durability: objstore.DeferName},
		{Key: "batch/cas", Data: []byte("v2"), Cond: objstore.IfMatch(cas), Durability: objstore.DurableNow},
		{Key: "", Data: []byte("x"), Cond: objstore.CreateOnly},
		{Key: "batch/c", Data: []byte("c"), Cond: objstore.Unconditional, Durability: objstore.DeferAll},
	}
	for i := range 10 {
		reqs = append(reqs, objstore.PutRequest{Key: fmt.Sprintf("batch/n%02d", i), Data: []byte{byte(i)}, Cond: objstore.CreateOnly, Durability: objstore.Durability(i % 3)})
	}
	res := objstore.PutMany(ctx, s, reqs)
	if len(res) != len(reqs) {
		t.Fatalf("PutMany returned %d results for %d requests", len(res), len(reqs))
	}
	wantErr(t, res[1].Err, objstore.ErrPreconditionFailed, objstore.OpPut, "batch/taken")
	wantObject(t, s, "batch/taken", []byte("old"), taken)
	wantErr(t, res[4].Err, objstore.ErrInvalidKey, objstore.OpPut, "")
	wantErr(t, res[5].Err, objstore.ErrRejected, objstore.OpPut, "batch/c") // DeferAll is create-only
	wantMissing(t, s, "batch/c")
	var keys []string
	for i, r := range reqs {
		if i == 1 || i == 4 || i == 5 {
			continue
		}
		if res[i].Err != nil {
			t.Fatalf("request %d (%s): %v", i, r.Key, res[i].Err)
		}
		wantObject(t, s, r.Key, r.Data, res[i].ETag)
		if res[i].Deferred {
			keys = append(keys, r.Key)
		}
	}
	if err := objstore.SyncDeferred(ctx, s, keys); err != nil {
		t.Fatalf("SyncDeferred of the batch's deferred keys: %v", err)
	}
	testPutManyAfter(t, s)
	testPutManyAfterInBatch(t, s)
}

// testPutManyAfter: a request with After keys is PutAfterDeferred (it
// lands whole once the deferred object is made durable), batched with an
// independent write; After on a request that is not DurableNow is refused
// (ErrRejected) and writes nothing.
func testPutManyAfter(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	d := objstore.PutOne(ctx, s, objstore.PutRequest{Key: "batch/after/obj", Data: []byte("o"), Cond: objstore.CreateOnly, Durability: objstore.DeferAll})
	if d.Err != nil {
		t.Fatalf("deferred write: %v", d.Err)
	}
	var after []string
	if d.Deferred {
		after = []string{"batch/after/obj"}
	}
	reqs := []objstore.PutRequest{
		{Key: "batch/after/aid", Data: []byte("i"), Cond: objstore.Unconditional, Durability: objstore.DeferName},
		{Key: "batch/after/manifest", Data: []byte("m"), Cond: objstore.CreateOnly, After: after},
		{Key: "batch/after/bad", Data: []byte("b"), Cond: objstore.CreateOnly, Durability: objstore.DeferName, After: []string{"batch/after/obj"}},
	}
	res := objstore.PutMany(ctx, s, reqs)
	for i := range 2 {
		if res[i].Err != nil {
			t.Fatalf("request %d (%s): %v", i, reqs[i].Key, res[i].Err)
		}
		wantObject(t, s, reqs[i].Key, reqs[i].Data, res[i].ETag)
	}
	wantErr(t, res[2].Err, objstore.ErrRejected, objstore.OpPut, "batch/after/bad")
	wantMissing(t, s, "batch/after/bad")
}

// testPutManyAfterInBatch: a request whose After names an earlier request
// of the same batch (objstore.PutRequest.After; a publish's manifest
// naming the commit index it carries) lands once that request has, and
// both read back whole; a dependency that fails is dropped from After, so
// the request that names it still lands (red on a store that defers
// durability, fs, if the failed key is kept: the store cannot make an
// object that was never written durable).
func testPutManyAfterInBatch(t *testing.T, s objstore.Store) {
	ctx := t.Context()
	reqs := []objstore.PutRequest{
		{Key: "batch/within/aid", Data: []byte("aid"), Cond: objstore.CreateOnly, Durability: objstore.DeferAll},
		{Key: "batch/within/refused", Data: []byte("x"), Cond: objstore.Unconditional, Durability: objstore.DeferAll},
		{Key: "batch/within/manifest", Data: []byte("m"), Cond: objstore.CreateOnly, After: []string{"batch/within/aid"}},
		{Key: "batch/within/other", Data: []byte("o"), Cond: objstore.CreateOnly, After: []string{"batch/within/refused", "batch/within/aid"}},
	}
	res := objstore.PutMany(ctx, s, reqs)
	wantErr(t, res[1].Err, objstore.ErrRejected, objstore.OpPut, "batch/within/refused") // DeferAll is create-only
	wantMissing(t, s, "batch/within/refused")
	for _, i := range []int{0, 2, 3} {
		if res[i].Err != nil {
			t.Fatalf("request %d (%s): %v", i, reqs[i].Key, res[i].Err)
		}
		wantObject(t, s, reqs[i].Key, reqs[i].Data, res[i].ETag)
	}
}
