package maintain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
	"github.com/graphkernel/graphkernel/objstore"
)

// The progress rule of a bounded collection (docs/gc.md §7): once the
// marking is complete, every category's deletes get a share of the time
// and deletes left (gc.SweepShare), so a run cut short in one category
// still reaches every later one. A manifest sweep cut short makes this
// run's record a leftover record (gc.Leftover) before any later delete.

// errShareSpent stops a listing once its category's share is spent.
var errShareSpent = errors.New("maintain: the category's share is spent")

// leftoverRecord is a leftover record the load read (its plan never
// changes once written).
type leftoverRecord struct {
	key string
	rec format.Collection
}

// sweepAll runs every category's deletes in order, each within its
// share; time and deletes still left after the last one go to further
// passes over the categories cut short (resuming where each stopped),
// while a pass deletes something.
func (c *collection) sweepAll(ctx context.Context) error {
	steps := []func(context.Context) (bool, error){c.sweepManifests, c.deleteTables, c.sweepFragments, c.sweepAdjacency, c.sweepIndexes,
		c.sweepLeases, c.sweepNameMarkers, c.sweepForkMarkers, c.sweepRecoveryRecords, c.sweepRecords}
	until := time.Unix(0, c.bound.ExpiresUnixNano-c.bound.SkewMarginNanos)
	done := make([]bool, len(steps))
	budget := -1
	for pass := 0; pass < maxSweepPasses; pass++ {
		var todo []int
		for i := range steps {
			if !done[i] {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 || pass > 0 && (c.budget <= 0 || !gc.MayDelete(c.bound, c.m.now()) || c.budget == budget) {
			break // done, out of time or deletes, or the last pass deleted nothing
		}
		budget = c.budget
		for j, i := range todo {
			c.catUntil, c.catBudget = gc.SweepShare(c.m.now(), until, c.budget, len(todo)-j)
			step := steps[i]
			if i == 0 && pass > 0 {
				step = c.resumeManifests
			}
			ok, err := step(ctx)
			if err != nil {
				return err
			}
			done[i] = ok
			if i == 0 && pass == 0 {
				if err := c.writeLeftover(ctx); err != nil {
					return err
				}
			}
		}
	}
	c.rep.TableVersions.Kept += len(c.garbageTables) // left for the next run
	c.rep.Complete = true
	for _, d := range done {
		c.rep.Complete = c.rep.Complete && d
	}
	return nil
}

// maxSweepPasses bounds the passes over the categories: the first gives
// each its share, later ones what the others left unused.
const maxSweepPasses = 8

// resumeManifests deletes, in the order the manifest sweep would have,
// the planned manifests it left (c.left), within the share.
func (c *collection) resumeManifests(ctx context.Context) (bool, error) {
	for len(c.left) > 0 {
		if !c.spend() {
			return false, nil
		}
		ref := c.left[0]
		key := c.m.keys.Manifest(ref.Branch, ref.Incarnation, ref.Version)
		if err := c.m.del(ctx, key); err != nil {
			return false, err
		}
		c.gone[key] = true
		c.left = c.left[1:]
		c.rep.Manifests.Deleted++
		c.rep.Manifests.Kept--
		c.rep.LeftManifests--
	}
	return true, nil
}

// noteLeft notes the i-th listed manifest of n as planned and left.
func (c *collection) noteLeft(n gc.NameManifests, i int) error {
	inc, v, err := c.m.keys.ParseManifestKey(n.Name, n.Keys[i])
	if err != nil {
		return fmt.Errorf("manifest left: %w", err)
	}
	c.left = append(c.left, format.ManifestRef{Branch: n.Name, Incarnation: inc, Version: v})
	c.rep.LeftManifests++
	return nil
}

// writeLeftover makes this run's record a leftover record when the
// manifest sweep left planned manifests and a later delete may still
// happen: those manifests may name what later categories delete, so a Pin
// of one must keep answering ErrReclaimed after this run ends (docs/gc.md
// §5a). With no time or budget left nothing later is deleted, and the
// record goes as before.
func (c *collection) writeLeftover(ctx context.Context) error {
	if len(c.left) == 0 || c.budget <= 0 || !gc.MayDelete(c.bound, c.m.now()) {
		return nil
	}
	c.rec = gc.Leftover(c.rec, c.left)
	if err := c.putRecord(ctx, objstore.Unconditional); err != nil {
		return fmt.Errorf("leftover record: %w", err)
	}
	c.leftWritten = true
	return nil
}

// deleteTables deletes the table versions markTables found unreachable.
// A second pass resumes where the first stopped.
func (c *collection) deleteTables(ctx context.Context) (bool, error) {
	for len(c.garbageTables) > 0 {
		if !c.spend() {
			return false, nil
		}
		if err := c.m.del(ctx, c.garbageTables[0]); err != nil {
			return false, err
		}
		c.garbageTables = c.garbageTables[1:]
		c.rep.TableVersions.Deleted++
	}
	return true, nil
}

// readLeftovers reads the leftover records on the store, before the load
// lists the manifests (sweepRecords judges them against that listing).
func (c *collection) readLeftovers(ctx context.Context) error {
	return c.m.records(ctx, func(key string, r format.Collection, bad error) error {
		if bad == nil && gc.IsLeftover(r) {
			c.leftovers = append(c.leftovers, leftoverRecord{key: key, rec: r})
		}
		return nil // an unreadable record is judged (kept) by sweepRecords
	})
}

// leftoverGone reports whether the record at key is a leftover record the
// load read and none of its manifests is present: listed by the load and
// not deleted by this run.
func (c *collection) leftoverGone(key string) bool {
	for _, l := range c.leftovers {
		if l.key == key {
			return gc.LeftoverGone(l.rec, c.present)
		}
	}
	return false
}

// present reports whether the load listed a manifest of inc with a
// version in [from, to] that this run did not delete.
func (c *collection) present(inc gc.IncKey, from, to uint64) bool {
	if c.groupAt == nil {
		c.groupAt = make(map[gc.IncKey]int, len(c.groups))
		for i, g := range c.groups {
			c.groupAt[g.key] = i
		}
	}
	if i, ok := c.groupAt[inc]; ok {
		g := c.groups[i]
		for j, v := range g.versions {
			if v >= from && v <= to && !c.gone[g.keys[j]] {
				return true
			}
		}
	}
	return false
}
