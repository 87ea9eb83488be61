package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/branchindex"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/objstore"
)

// The fork index (format.ForkMarker, format.ForkIndexFlag) lets a branch
// delete find its dependents by listing its own incarnation's markers
// instead of loading the head of every branch name ever created.
//
// Why absence of a marker is safe to rely on once the flag exists: every
// create writes its marker before its version-0 manifest and gives up if
// that write fails, so a landed create has its marker; the flag is written
// only by Init (before any fork can exist) or after a backfill wrote the
// marker of every live fork it found. A fork landing during a backfill was
// made by a create that wrote its own marker first. Markers are verified
// against the child's live head before they count (branchindex.IsDependent),
// so a marker whose create never landed, or whose child was deleted, changes
// no answer. Deleting the flag together with the markers changes no answer
// either: without the flag the check scans every name. Deleting markers
// while keeping the flag is not allowed (docs/format.md).

// MaxForkMarkers bounds how many fork markers of one incarnation a
// dependents check examines; past it the delete fails with ErrTooManyBranches.
const MaxForkMarkers = MaxBranchNames

// forkMarkerPage is the LIST page size of a dependents check.
const forkMarkerPage = branchindex.MaxPageNames

// writeForkMarker writes x create-only before the create it describes.
// A marker already there is the same statement (its key names source,
// child and incarnation), so whoever wrote it, it stands.
func (g *Graph) writeForkMarker(ctx context.Context, x *format.ForkMarker) error {
	tok, err := g.token()
	if err != nil {
		return err
	}
	data, err := format.EncodeForkMarker(x, tok)
	if err != nil {
		panic(fmt.Sprintf("kernel: invariant broken: invalid fork marker %+v: %v", x, err))
	}
	_, err = g.putCreateOnly(ctx, "write fork marker", g.keys.ForkMarker(x.Source, x.Child, x.ChildIncarnationID), data)
	return err
}

// retireForkMarker deletes the marker of an incarnation that can never be
// live again (deleted, or a create that definitely lost), so later
// dependents checks of its source skip it. The caller drops the error on
// purpose (docs/invariants.md): a marker left behind is verified and
// ignored by every check.
func (g *Graph) retireForkMarker(ctx context.Context, x format.ForkMarker) error {
	key := g.keys.ForkMarker(x.Source, x.Child, x.ChildIncarnationID)
	return g.withRetry(ctx, "retire fork marker", func() error { return g.store.Delete(ctx, key) })
}

// forkIndexComplete reports whether the graph carries the fork-index flag.
// Only not-found means "absent"; a corrupt flag is an error, never a guess.
func (g *Graph) forkIndexComplete(ctx context.Context) (bool, error) {
	key := g.keys.ForkIndexFlagKey()
	var obj objstore.Object
	err := g.withRetry(ctx, "read fork-index flag", func() (err error) { obj, err = g.store.Get(ctx, key); return err })
	if errors.Is(err, objstore.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read fork-index flag %s: %w", key, err)
	}
	if _, _, err := format.DecodeForkIndexFlag(obj.Data); err != nil {
		return false, fmt.Errorf("read fork-index flag %s: %w", key, err)
	}
	return true, nil
}

// writeForkIndexFlag writes the flag create-only; a flag already there
// (a concurrent opener's) says the same.
func (g *Graph) writeForkIndexFlag(ctx context.Context, backfilled uint64) error {
	tok, err := g.token()
	if err != nil {
		return err
	}
	f := format.ForkIndexFlag{Backfilled: backfilled, TimeUnixNano: g.clock.Now().UnixNano()}
	_, err = g.putCreateOnly(ctx, "write fork-index flag", g.keys.ForkIndexFlagKey(), format.EncodeForkIndexFlag(&f, tok))
	return err
}

// ensureForkIndex makes a read-write open's graph carry a complete fork
// index: if the flag is absent (a graph written before fork markers), it
// writes the marker of every live fork, then the flag. A crash or error
// part-way leaves no flag, and the next read-write open does it again
// (markers are create-only and idempotent). O(names) once per graph.
func (g *Graph) ensureForkIndex(ctx context.Context) error {
	complete, err := g.forkIndexComplete(ctx)
	if err != nil || complete {
		return err
	}
	names, err := g.branchNames(ctx)
	if err != nil {
		return fmt.Errorf("backfill fork markers: %w", err)
	}
	var n uint64
	for _, name := range names {
		l, found, err := g.latest(ctx, name)
		if err != nil {
			return fmt.Errorf("backfill fork markers: %w", err)
		}
		if !found || !branchindex.NeedsMarker(&l.m) {
			continue
		}
		x, _ := branchindex.MarkerFor(&l.m)
		if err := g.writeForkMarker(ctx, &x); err != nil {
			return fmt.Errorf("backfill fork markers: %w", err)
		}
		n++
	}
	if err := g.writeForkIndexFlag(ctx, n); err != nil {
		return fmt.Errorf("backfill fork markers: %w", err)
	}
	return nil
}

// dependents lists (sorted) the live branches whose fork point is the
// incarnation of head. With a complete fork index it reads the markers of
// that incarnation (in pages) and the heads they name: O(markers of this
// incarnation), not O(names). Without one it scans every name.
func (g *Graph) dependents(ctx context.Context, head loaded) ([]string, error) {
	complete, err := g.forkIndexComplete(ctx)
	if err != nil {
		return nil, err
	}
	if !complete {
		return g.scannedDependents(ctx, head)
	}
	children, err := g.markedChildren(ctx, head.m.Branch.IncarnationID)
	if err != nil {
		return nil, err
	}
	var heads []format.Manifest
	for _, name := range branchindex.ChildNames(children) {
		l, found, err := g.latest(ctx, name)
		if err != nil {
			return nil, err
		}
		if found {
			heads = append(heads, l.m)
		}
	}
	return branchindex.Dependents(head.m.Branch.IncarnationID, head.m.Branch.Name, heads), nil
}

// markedChildren returns the child names of src's fork markers, in key
// order, bounded by MaxForkMarkers.
func (g *Graph) markedChildren(ctx context.Context, src format.ID) ([]string, error) {
	prefix := g.keys.ForkMarkersPrefix(src)
	var children []string
	after := ""
	for {
		var page objstore.ListPage
		err := g.withRetry(ctx, "list fork markers", func() (err error) {
			page, err = g.store.List(ctx, prefix, after, forkMarkerPage)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("list fork markers: %w", err)
		}
		for _, k := range page.Keys {
			child, _, err := g.keys.ParseForkMarkerKey(src, k)
			if err != nil {
				return nil, err
			}
			children = append(children, child)
		}
		if len(children) > MaxForkMarkers {
			return nil, fmt.Errorf("%w: incarnation %s has more than %d fork markers", ErrTooManyBranches, src, MaxForkMarkers)
		}
		if !page.Truncated || len(page.Keys) == 0 {
			return children, nil
		}
		after = page.Keys[len(page.Keys)-1]
	}
}

// scannedDependents is the dependents check without a fork index: the
// head of every branch name ever created. O(names).
func (g *Graph) scannedDependents(ctx context.Context, head loaded) ([]string, error) {
	names, err := g.branchNames(ctx)
	if err != nil {
		return nil, err
	}
	heads := make([]format.Manifest, 0, len(names))
	for _, name := range names {
		l, found, err := g.latest(ctx, name)
		if err != nil {
			return nil, err
		}
		if found {
			heads = append(heads, l.m)
		}
	}
	return branchindex.Dependents(head.m.Branch.IncarnationID, head.m.Branch.Name, heads), nil
}
