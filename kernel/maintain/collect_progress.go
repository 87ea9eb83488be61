package maintain

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/objstore"
)

// The progress rule of a bounded collection (docs/gc.md §7): once the
// marking is complete and the manifest sweep is done, every later
// category's deletes get a share of the time and deletes left
// (gc.SweepShare), so a run cut short in one category still reaches every
// later one.

// errShareSpent stops a listing once its category's share is spent.
var errShareSpent = errors.New("maintain: the category's share is spent")

// sweepAll deletes the garbage manifests first and whole (their sweep may
// use all the time and deletes left: nothing a garbage manifest names is
// deleted while it may still be on the store, which is what a Pin's
// manifest check relies on, docs/gc.md §5a), then runs every later
// category in order, each within its share; time and deletes still left
// after the last one go to further passes over the categories cut short
// (resuming where each stopped), while a pass deletes something.
func (c *collection) sweepAll(ctx context.Context) error {
	until := time.Unix(0, c.rec.ExpiresUnixNano-c.rec.SkewMarginNanos)
	c.catUntil, c.catBudget = gc.SweepShare(c.m.now(), until, c.budget, 1)
	if done, err := c.sweepManifests(ctx); err != nil || !done {
		return err
	}
	start, err := c.sweepStart(len(c.garbageTables))
	if err != nil {
		return err
	}
	c.garbageTables = append(append(make([]string, 0, len(c.garbageTables)), c.garbageTables[start:]...), c.garbageTables[:start]...)
	steps := []func(context.Context) (bool, error){c.deleteTables, c.sweepFragments, c.sweepAdjacency, c.sweepIndexes,
		c.sweepLeases, c.sweepNameMarkers, c.sweepForkMarkers, c.sweepRecoveryRecords, c.sweepRecords}
	done := make([]bool, len(steps))
	budget := -1
	for pass := 0; pass < maxSweepPasses; pass++ {
		var todo []int
		for i := range steps {
			if !done[i] {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 || pass > 0 && (c.budget <= 0 || !gc.MayDelete(c.rec, c.m.now()) || c.budget == budget) {
			break // done, out of time or deletes, or the last pass deleted nothing
		}
		budget = c.budget
		for j, i := range todo {
			c.catUntil, c.catBudget = gc.SweepShare(c.m.now(), until, c.budget, len(todo)-j)
			ok, err := steps[i](ctx)
			if err != nil {
				return err
			}
			done[i] = ok
		}
	}
	c.rep.TableVersions.Kept += len(c.garbageTables) // left for the next run
	c.rep.Complete = true
	for _, d := range done {
		c.rep.Complete = c.rep.Complete && d
	}
	return nil
}

// sweepStart draws where to start walking n candidates (gc.SweepStart).
func (c *collection) sweepStart(n int) (int, error) {
	t, err := c.m.token()
	if err != nil {
		return 0, err
	}
	return gc.SweepStart(n, binary.BigEndian.Uint64(t[:8])), nil
}

// maxSweepPasses bounds the passes over the categories after the
// manifests: the first gives each its share, later ones what the others
// left unused.
const maxSweepPasses = 8

// deleteTables deletes the table versions markTables found unreachable; a
// later pass resumes where the first stopped.
func (c *collection) deleteTables(ctx context.Context) (bool, error) {
	rest, done, err := c.deleteKeys(ctx, c.garbageTables, &c.rep.TableVersions.Deleted)
	c.garbageTables = rest
	return done, err
}

// deleteKeys deletes keys (independent garbage) in batches (deleteBatch)
// while the time and deletes last, counting them in deleted, and returns
// the keys left; done=false when the share ran out first.
func (c *collection) deleteKeys(ctx context.Context, keys []string, deleted *int) (rest []string, done bool, err error) {
	for len(keys) > 0 {
		want, n := min(len(keys), c.batchSize()), 0
		for n < want && c.spend() {
			n++
		}
		if err := c.deleteBatch(ctx, keys[:n]); err != nil {
			return keys, false, err
		}
		*deleted += n
		keys = keys[n:]
		if n < want {
			return keys, false, nil // the share is spent
		}
	}
	return nil, true, nil
}

// batchSize is how many garbage keys the next deleteBatch may take: one
// until a batch was timed, then what the category's time share left
// allows at the last batch's time per key, at most twice the last batch
// and objstore.MaxDeleteBatch. So a run stays within each share about as
// closely as with one delete a request, on a store whose batched delete
// is one round trip (S3, the simulator) and on one that deletes key by
// key alike.
func (c *collection) batchSize() int {
	if c.lastBatch == 0 {
		return 1
	}
	n := objstore.MaxDeleteBatch
	if c.perKey > 0 { // else no time passed: as fast as it can grow
		n = int(min(int64(c.catUntil.Sub(c.m.now())/c.perKey), int64(n)))
	}
	return max(1, min(n, 2*c.lastBatch))
}

// deleteBatch deletes keys (independent garbage, objstore.DeleteMany) and
// times it for batchSize.
func (c *collection) deleteBatch(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	start := c.m.now()
	if err := c.m.delMany(ctx, keys); err != nil {
		return err
	}
	c.perKey, c.lastBatch = c.m.now().Sub(start)/time.Duration(len(keys)), len(keys)
	return nil
}
