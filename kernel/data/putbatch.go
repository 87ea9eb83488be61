package data

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/objstore"
)

// putBatch collects the keys of the objects one materialize wrote with
// deferred durability (objstore.DeferredPutter: fragments, adjacency and id
// pages and their chunks, all under fresh names nothing references yet),
// so that one SyncDeferred makes them durable before the table content is
// handed to the kernel, which references it only after that (sidecar,
// table version, manifest). On a store without the capability every write
// is an ordinary durable Put and the batch stays empty.
// A bulk batch (a commit changing more than WriteThroughRows rows of the
// table) caches nothing it writes (cacheWritten).
type putBatch struct {
	keys []string
	bulk bool
	// collect: the objects are not written here but handed to the kernel
	// (kernel.TableContent.New), which writes them in one batch with the
	// table version (kernel/write_batch.go). Only a small commit's
	// (not bulk: its objects are few and small, held until the commit).
	collect bool
	objects []kernel.NewObject
}

type putBatchKey struct{}

// batchOf returns the batch ctx carries, or nil.
func batchOf(ctx context.Context) *putBatch {
	b, _ := ctx.Value(putBatchKey{}).(*putBatch)
	return b
}

// materialize builds the objects of table p.t's new version (fragments,
// indexes) and returns its content. A small commit's objects are left to
// the kernel (content.New, written in one batch with the table version);
// a bulk commit's are written here, and every one is durable when it
// returns nil (one SyncDeferred for the batch).
func (g *Graph) materialize(ctx context.Context, r *reader, p *tablePlan, b builtTable) (kernel.TableContent, error) {
	bulk := p.changedRows() > WriteThroughRows
	batch := &putBatch{bulk: bulk, collect: !bulk}
	content, err := g.materializeObjects(context.WithValue(ctx, putBatchKey{}, batch), r, p, b)
	if err != nil {
		return kernel.TableContent{}, err
	}
	if err := objstore.SyncDeferred(ctx, g.store, batch.keys); err != nil {
		return kernel.TableContent{}, fmt.Errorf("make %d objects of %s durable: %w", len(batch.keys), p.t.Name, err)
	}
	content.New = batch.objects
	return content, nil
}

// putObject writes a fresh object create-only: deferred (its key joins
// ctx's batch) inside materialize on a store that can, else durable.
func (g *Graph) putObject(ctx context.Context, key string, b []byte) (deferred bool, err error) {
	if batchOf(ctx) == nil {
		_, err = g.store.Put(ctx, key, b, objstore.CreateOnly)
		return false, err
	}
	_, deferred, err = objstore.PutDeferred(ctx, g.store, key, b)
	return deferred, err
}

// changedRows is the number of rows the plan inserts, replaces or deletes.
func (p *tablePlan) changedRows() int { return len(p.inserts) + len(p.replace) + len(p.deletes) }
