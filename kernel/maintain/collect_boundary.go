package maintain

import (
	"context"
	"errors"
	"slices"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/gc"
)

// loadBoundaryReaches loads (reachDepth) the reach of every listed
// manifest this run keeps whose reach's inputs it does not all keep
// (gc.ReachBoundary, docs/gc.md rule 3c), in location order, so that it
// is stored (a rebuilt one: storeRebuilt) and made durable (syncIndexes)
// before anything is deleted: a publish writes its commit index unsynced, and once the run
// deleted the manifest before it (or its merged-from one) nobody could
// rebuild that reach were the index lost, so a later merge base through
// the kept manifest would walk into collected history. A reach read
// before (a durable one in the Maintainer's cache) costs nothing; one
// that cannot be read or rebuilt is counted in Report.ReachesUnknown.
func (c *collection) loadBoundaryReaches(ctx context.Context) error {
	ats := make([]format.ManifestRef, 0, len(c.listedAt))
	//detlint:ordered collects locations that are sorted next
	for at := range c.listedAt {
		if c.kept(at) {
			ats = append(ats, at)
		}
	}
	slices.SortFunc(ats, compareRefs)
	var forkErr error // a read forkOf could not make: the run fails, never guesses
	forkOf := func(at format.ManifestRef) (format.ManifestRef, bool) {
		if at.Version != 0 || !c.listedRef(at) || forkErr != nil {
			return format.ManifestRef{}, false
		}
		mf, found, err := c.manifestRef(ctx, at)
		if err != nil {
			forkErr = err
			return format.ManifestRef{}, false
		}
		if !found || mf.Commit != nil && mf.Commit.ID == mf.Head {
			return format.ManifestRef{}, false
		}
		ins := gc.ReachInputs(at, &mf) // a commit-less version 0: its fork commit's manifest
		if len(ins) == 0 {
			return format.ManifestRef{}, false
		}
		return ins[0], true
	}
	for _, at := range ats {
		mf, found, err := c.manifestRef(ctx, at)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		boundary := gc.ReachBoundary(at, &mf, c.kept, forkOf)
		if forkErr != nil {
			return forkErr
		}
		if !boundary {
			continue
		}
		_, found, err = c.reachDepth(ctx, at, rebuildDepth)
		switch {
		case errors.Is(err, gc.ErrReachUnknown) || err == nil && !found:
			c.rep.ReachesUnknown++
		case err != nil:
			return err
		}
	}
	return nil
}
