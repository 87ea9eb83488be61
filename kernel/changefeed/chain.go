package changefeed

import (
	"context"
	"errors"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/feed"
)

// maxChainSteps bounds the manifests one step along a chain may read
// (commit-less manifests are skipped; a sound store has few).
const maxChainSteps = 1 << 16

// segment is the run of one branch incarnation's manifests, versions from
// through to, that lies on a first-parent chain.
type segment struct {
	ref      kernel.BranchRef
	from, to uint64
}

func (s segment) holds(p feed.Point) bool {
	return p.Branch == s.ref.Name() && p.Incarnation == s.ref.Incarnation() && s.from <= p.Version && p.Version <= s.to
}

// isRoot reports whether ref is the graph's root incarnation (main#1, whose
// version 0 is the genesis commit).
func isRoot(ref kernel.BranchRef) bool { return ref.Name() == "main" && ref.Incarnation() == 1 }

func firstVersion(ref kernel.BranchRef) uint64 {
	if isRoot(ref) {
		return 0
	}
	return 1 // version 0 of a forked incarnation is its commit-less create
}

// chain is a branch's first-parent chain cut at its head as of the poll's
// start: its ancestors' segments up to each fork point (loaded only when a
// position lies in them), then its own incarnation's versions.
type chain struct {
	g   *data.Graph
	own segment
	anc []segment // root first; nil until loaded
}

func newChain(ctx context.Context, g *data.Graph, ref kernel.BranchRef) (*chain, error) {
	head, err := g.Kernel().SnapshotAt(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &chain{g: g, own: segment{ref: ref, from: firstVersion(ref), to: head.ManifestVersion()}}, nil
}

// segments returns the chain's segments root first; the ancestors are read
// only when all is set or p lies outside the branch's own incarnation.
func (c *chain) segments(ctx context.Context, p feed.Point) ([]segment, error) {
	if !p.IsZero() && c.own.holds(p) {
		return []segment{c.own}, nil
	}
	if c.anc == nil && !isRoot(c.own.ref) {
		anc, err := c.ancestors(ctx)
		if err != nil {
			return nil, err
		}
		c.anc = anc
	}
	return append(append([]segment(nil), c.anc...), c.own), nil
}

// ancestors walks fork points from the branch back to the root: the fork
// commit of each incarnation (the head of its version 0) names the
// incarnation and version the chain continues in.
func (c *chain) ancestors(ctx context.Context) ([]segment, error) {
	k := c.g.Kernel()
	var anc []segment
	cur := c.own.ref
	for hop := 0; !isRoot(cur); hop++ {
		if hop > kernel.MaxForkHops {
			return nil, fmt.Errorf("more than %d fork hops from %s: %w", kernel.MaxForkHops, c.own.ref, kernel.ErrCorrupt)
		}
		s0, err := k.SnapshotAtVersion(ctx, cur, 0)
		if err != nil {
			return nil, err
		}
		fc, err := k.Commit(ctx, s0.Head())
		if err != nil {
			return nil, fmt.Errorf("fork commit of %s: %w", cur, err)
		}
		if fc.Branch == cur.Name() && fc.Incarnation == cur.Incarnation() {
			return nil, fmt.Errorf("%s's version 0 holds its own commit: %w", cur, kernel.ErrCorrupt)
		}
		src, err := k.Branch(ctx, fc.Branch)
		if err != nil && !errors.Is(err, kernel.ErrBranchNotFound) {
			return nil, fmt.Errorf("source of %s: %w", cur, err)
		}
		if err != nil || src.Incarnation() != fc.Incarnation {
			return nil, fmt.Errorf("%s was forked from %s#%d, which is no longer live (the feed reads history through live incarnations): %w",
				cur, fc.Branch, fc.Incarnation, kernel.ErrBranchNotFound)
		}
		anc = append([]segment{{ref: src, from: firstVersion(src), to: fc.ManifestVersion}}, anc...)
		cur = src
	}
	return anc, nil
}

// next returns the commit after last on the chain (the first one for a
// zero last), or ok=false when last is the cut.
func (c *chain) next(ctx context.Context, last feed.Point) (feed.Point, bool, error) {
	segs, err := c.segments(ctx, last)
	if err != nil {
		return feed.Point{}, false, err
	}
	i, v := 0, segs[0].from
	if !last.IsZero() {
		if i = indexHolding(segs, last); i < 0 {
			return feed.Point{}, false, &feed.CursorError{Problem: feed.NotOnChain, Detail: "position is not on the branch's chain"}
		}
		v = last.Version + 1
	}
	for steps := 0; steps < maxChainSteps; steps++ {
		if v > segs[i].to {
			if i++; i == len(segs) {
				return feed.Point{}, false, nil
			}
			v = segs[i].from
			continue
		}
		p, own, err := c.commitAt(ctx, segs[i], v)
		if err != nil || own {
			return p, own, err
		}
		v++
	}
	return feed.Point{}, false, fmt.Errorf("more than %d commit-less manifests in a row: %w", maxChainSteps, kernel.ErrCorrupt)
}

func indexHolding(segs []segment, p feed.Point) int {
	for i, s := range segs {
		if s.holds(p) {
			return i
		}
	}
	return -1
}

// commitAt returns the commit that manifest v of s introduced, with
// own=false when that manifest introduced none.
func (c *chain) commitAt(ctx context.Context, s segment, v uint64) (feed.Point, bool, error) {
	k := c.g.Kernel()
	snap, err := k.SnapshotAtVersion(ctx, s.ref, v)
	if err != nil {
		return feed.Point{}, false, err
	}
	cm, err := k.Commit(ctx, snap.Head())
	if err != nil {
		return feed.Point{}, false, err
	}
	p := pointOf(cm)
	return p, p.Branch == s.ref.Name() && p.Incarnation == s.ref.Incarnation() && p.Version == v, nil
}

// check returns where commit id lies, and refuses it unless it is on the
// chain (and, when claimed is given, exactly where claimed says).
func (c *chain) check(ctx context.Context, id kernel.CommitID, claimed *feed.Point) (feed.Point, error) {
	cm, err := c.g.Kernel().Commit(ctx, id)
	if errors.Is(err, kernel.ErrNotFound) {
		return feed.Point{}, &feed.CursorError{Problem: feed.NotOnChain, Detail: fmt.Sprintf("no commit %s in this graph", id)}
	}
	if err != nil {
		return feed.Point{}, err
	}
	p := pointOf(cm)
	if claimed != nil && *claimed != p {
		return feed.Point{}, &feed.CursorError{Problem: feed.NotOnChain, Detail: fmt.Sprintf("commit %s is not where the token says", id)}
	}
	segs, err := c.segments(ctx, p)
	if err != nil {
		return feed.Point{}, err
	}
	if indexHolding(segs, p) < 0 {
		return feed.Point{}, &feed.CursorError{Problem: feed.NotOnChain, Detail: fmt.Sprintf("commit %s is not on %s's first-parent chain", id, c.own.ref)}
	}
	return p, nil
}

// atCut reports, without reading, whether last is the chain's last
// manifest of the branch's own incarnation (a branch without commits of
// its own learns it is caught up from the next poll).
func (c *chain) atCut(last feed.Point) bool {
	return c.own.from <= c.own.to && c.own.holds(last) && last.Version == c.own.to
}

// headPoint returns the commit at the chain's cut.
func (c *chain) headPoint(ctx context.Context) (feed.Point, error) {
	s, err := c.g.Kernel().SnapshotAtVersion(ctx, c.own.ref, c.own.to)
	if err != nil {
		return feed.Point{}, err
	}
	return c.check(ctx, s.Head(), nil)
}
