package kernel

import (
	"context"
	"fmt"
	"sync"

	"github.com/graphkernel/graphkernel/kernel/format"
)

// The handle's view (issue #32): per branch incarnation, the newest head
// manifest this handle has seen, from a head load (LIST) or its own
// publish. A writer builds on the view instead of listing the branch
// again: the publish is a create-only write at view+1, so a stale view
// cannot publish (the slot is taken) and the failed write is how staleness
// is found out; the next attempt loads the head (one head discovery) and
// re-parents as before. Readers never use the view: SnapshotAt and every
// public read still load the head, so reads stay linearizable.

// viewEntries bounds the branch incarnations one handle keeps a view of.
const viewEntries = 4096

// views maps an incarnation id to the newest head manifest seen of it.
type views struct {
	mu    sync.Mutex
	items map[format.ID]loaded
}

func newViews() *views { return &views{items: make(map[format.ID]loaded)} }

// note records l as b's view unless the view already holds a newer (or the
// same) version of the same incarnation. Past viewEntries the views are
// dropped wholesale (they are only a hint; the next write loads the head).
func (v *views) note(l loaded) {
	v.mu.Lock()
	defer v.mu.Unlock()
	id := l.m.Branch.IncarnationID
	if cur, ok := v.items[id]; ok && cur.m.Version >= l.m.Version {
		return
	}
	if _, ok := v.items[id]; !ok && len(v.items) >= viewEntries {
		clear(v.items)
	}
	v.items[id] = l
}

// get returns the view of incarnation id.
func (v *views) get(id format.ID) (loaded, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	l, ok := v.items[id]
	return l, ok
}

// drop forgets the view of incarnation id if it is still at version
// (a failed create-only write at version+1 proved it stale).
func (v *views) drop(id format.ID, version uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if cur, ok := v.items[id]; ok && cur.m.Version <= version {
		delete(v.items, id)
	}
}

// viewHead returns b's head as the handle's view has it (no I/O), or loads
// it (one head discovery) when the handle has no view of b's incarnation.
// fromView reports the former: the result may be stale, and only a
// create-only write at its version+1 can tell.
func (g *Graph) viewHead(ctx context.Context, b BranchRef) (l loaded, fromView bool, err error) {
	if b.name == "" {
		return loaded{}, false, fmt.Errorf("%w: zero BranchRef", ErrInvalidArgument)
	}
	if l, ok := g.views.get(b.incID); ok {
		if err := checkLive(b, l, true); err != nil {
			return loaded{}, false, err
		}
		return l, true, nil
	}
	l, err = g.liveHead(ctx, b)
	return l, false, err
}

// SnapshotView returns the snapshot at b's head as this handle last saw it
// (its own publishes and head loads), loading the head only when it has
// seen none. It may be stale. It is for writers whose result is published
// with expectations (a Write re-checks every pin against the head its
// create-only manifest write proves current), never for answering reads:
// use SnapshotAt for those.
func (g *Graph) SnapshotView(ctx context.Context, b BranchRef) (Snapshot, error) {
	l, _, err := g.viewHead(ctx, b)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot view: %w", err)
	}
	return snapshotOf(l), nil
}

// SnapshotViewed is SnapshotView reporting whether the snapshot is the
// handle's view (no I/O; it may be stale) rather than a head loaded by
// this call. A writer that has read nothing through it yet may build on
// it and still choose a newer base later, since nothing was observed.
func (g *Graph) SnapshotViewed(ctx context.Context, b BranchRef) (Snapshot, bool, error) {
	l, fromView, err := g.viewHead(ctx, b)
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("snapshot view: %w", err)
	}
	return snapshotOf(l), fromView, nil
}
