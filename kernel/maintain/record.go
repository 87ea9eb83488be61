package maintain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/objstore"
)

// DefaultMaxDuration bounds one collection run when Policy.MaxDuration is
// zero: its record expires this long after it starts.
const DefaultMaxDuration = time.Hour

// begin writes this run's collection record create-only, in state loading,
// before anything of the root set is read (docs/gc.md rule 6).
func (c *collection) begin(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		d = DefaultMaxDuration
	}
	id, err := c.m.mintID()
	if err != nil {
		return err
	}
	if c.recTok, err = c.m.token(); err != nil {
		return err
	}
	c.rec = format.Collection{ID: id, State: format.CollectionLoading,
		ExpiresUnixNano: c.now.Add(d).UnixNano(), SkewMarginNanos: int64(c.p.SkewMargin)}
	return c.putRecord(ctx, objstore.CreateOnly)
}

// decide computes the plan — every listed manifest the marks do not keep —
// and overwrites the record with it in state deleting. ok=false (nothing
// deleted, Report.Complete false) when the run is already past the time
// its record allows deleting in.
func (c *collection) decide(ctx context.Context) (bool, error) {
	var refs []format.ManifestRef
	for _, d := range c.decideNames() {
		for i, key := range d.n.Keys {
			if !d.deletes(i) {
				continue
			}
			inc, v, err := c.m.keys.ParseManifestKey(d.n.Name, key)
			if err != nil {
				return false, fmt.Errorf("plan: %w", err)
			}
			refs = append(refs, format.ManifestRef{Branch: d.n.Name, Incarnation: inc, Version: v})
		}
	}
	plan := gc.PlanOf(refs)
	if len(plan) > format.MaxPlanRanges {
		return false, fmt.Errorf("plan of %d manifest ranges (max %d): %w", len(plan), format.MaxPlanRanges, ErrTooLarge)
	}
	if !gc.MayDelete(c.rec, c.m.now()) {
		return false, nil
	}
	c.rec.State, c.rec.Plan = format.CollectionDeleting, plan
	return true, c.putRecord(ctx, objstore.Unconditional)
}

// relist reads the leases again, after the plan is on the store: a Pin
// whose lease this list misses read the record in state deleting and
// checks the plan itself. The leases found now are roots too (their
// manifests leave the plan; what they pin is marked).
func (c *collection) relist(ctx context.Context) error {
	if plant.Enabled(plant.PinLeaseReadOnce) { // planted bug: the leases are read once
		return nil
	}
	live, err := c.readLeases(ctx, true)
	if err != nil {
		return err
	}
	roots, err := c.leasesRoots(ctx, live)
	if err != nil {
		return err
	}
	return c.marks.AddRoots(roots)
}

// end deletes this run's record.
func (c *collection) end(ctx context.Context) error {
	if c.rec.ID == (format.ID{}) {
		return nil
	}
	if err := c.m.del(ctx, c.m.keys.Collection(c.rec.ID)); err != nil {
		return fmt.Errorf("remove collection record: %w", err)
	}
	return nil
}

// putRecord writes the record; an ambiguous outcome is resolved by reading
// back our token and state.
func (c *collection) putRecord(ctx context.Context, cond objstore.Condition) error {
	key := c.m.keys.Collection(c.rec.ID)
	b, err := format.EncodeCollection(&c.rec, c.recTok)
	if err != nil {
		return err
	}
	var last error
	for i := 0; i < maxAttempts; i++ {
		_, err := c.m.store.Put(ctx, key, b, cond)
		if err == nil {
			return nil
		}
		if errors.Is(err, objstore.ErrAmbiguous) || errors.Is(err, objstore.ErrPreconditionFailed) {
			got, found, gerr := c.m.get(ctx, key)
			if gerr != nil {
				return fmt.Errorf("collection record %s: %w", key, gerr)
			}
			if found {
				r, t, derr := format.DecodeCollection(got)
				if derr == nil && t == c.recTok && r.State == c.rec.State {
					return nil
				}
				if t != c.recTok {
					return fmt.Errorf("collection record %s holds another writer's record: %w", key, format.ErrCorrupt)
				}
			}
		} else if !retryable(err) {
			return fmt.Errorf("collection record %s: %w", key, err)
		}
		last = err
	}
	return fmt.Errorf("collection record %s: %d attempts: %w", key, maxAttempts, last)
}

// records reads every collection record and calls f with it, or with the
// decode error of an unreadable one.
func (m *Maintainer) records(ctx context.Context, f func(key string, c format.Collection, bad error) error) error {
	return m.listAll(ctx, m.keys.CollectionPrefix(), maxListPages, func(keys []string) error {
		for _, key := range keys {
			b, found, err := m.get(ctx, key)
			if err != nil {
				return err
			}
			if !found {
				continue // its collector ended: it deleted its record after its last delete
			}
			r, _, derr := format.DecodeCollection(b)
			if derr != nil {
				derr = fmt.Errorf("collection record %s is unreadable: %w", key, derr)
			}
			if err := f(key, r, derr); err != nil {
				return err
			}
		}
		return nil
	})
}

// sweepRecords deletes the stale records of other collectors (crashed, or
// run past their expiry): they bind no Pin and their collector deletes
// nothing more. An unreadable record is kept (if in doubt, keep).
func (c *collection) sweepRecords(ctx context.Context) (bool, error) {
	now, done := c.m.now(), true
	err := c.m.records(ctx, func(key string, r format.Collection, bad error) error {
		if bad == nil && r.ID == c.rec.ID {
			return nil // our own: deleted when the run ends
		}
		if bad != nil || !gc.RecordStale(r, now) {
			c.rep.Records.Kept++
			return nil
		}
		if done = done && c.spend(); !done {
			c.rep.Records.Kept++
			return nil
		}
		if err := c.m.del(ctx, key); err != nil {
			return err
		}
		c.rep.Records.Deleted++
		return nil
	})
	return done && err == nil, err
}

// errOutOfTime stops a run's loading and marking once it is past the time
// its record allows deleting in: nothing it read from then on could be
// deleted by it. Collect turns it into Report.OutOfTime.
var errOutOfTime = errors.New("collection past its time bound")

// inTime is nil while the run may still delete (gc.MayDelete by the
// Maintainer's clock), else errOutOfTime: each load or mark step that reads
// the store asks first, so a run's reads are bounded by MaxDuration as its
// deletes are.
func (c *collection) inTime() error {
	if gc.MayDelete(c.rec, c.m.now()) {
		return nil
	}
	return errOutOfTime
}
