package data

import (
	"context"

	"github.com/graphkernel/graphkernel/kernel"
)

// Shared head lookups (issue #31). A Begin pins the branch's head, which
// costs a head lookup (a LIST): a Begin must see every commit
// acknowledged before it began, in any process. On a group-commit handle
// the members of a group come back together and Begin at once; their
// lookups are shared: a Begin joins the next lookup of its branch that
// has not started yet (never one already in flight, which may predate its
// call), and the first Begin to find no lookup in flight runs it for all
// who joined. So every Begin's head is read by a LIST that started after
// it was called, as if it had listed alone. A lookup that fails is not
// shared: each joiner then looks up alone, under its own context. A
// joiner polls through the clock (every GroupOptions.Poll) for at most
// MaxFollowerWait, then looks up alone.

// headLookup is one shared head lookup; its fields are guarded by
// grouper.mu.
type headLookup struct {
	joined int // Begins waiting on it
	done   bool
	snap   kernel.Snapshot
	err    error
}

// headLookups is one branch's shared lookups: the one in flight (nil if
// none) and the one gathering joiners (nil if none).
type headLookups struct {
	running, next *headLookup
}

// beginSnapshot is Begin's head: shared with concurrent Begins on a
// group-commit handle, else kernel SnapshotAt.
func (g *Graph) beginSnapshot(ctx context.Context, b kernel.BranchRef) (kernel.Snapshot, error) {
	if g.group == nil {
		return g.k.SnapshotAt(ctx, b)
	}
	return g.group.snapshot(ctx, g, b)
}

// snapshot joins the next head lookup of b and returns its result, running
// it if no lookup is in flight.
func (gr *grouper) snapshot(ctx context.Context, g *Graph, b kernel.BranchRef) (kernel.Snapshot, error) {
	gr.mu.Lock()
	h := gr.heads[b]
	if h == nil {
		h = &headLookups{}
		gr.heads[b] = h
	}
	if h.next == nil {
		h.next = &headLookup{}
	}
	mine := h.next
	mine.joined++
	gr.mu.Unlock()
	start := g.clock.Now()
	for range int(gr.opts.MaxFollowerWait/gr.opts.Poll) + 1 {
		run, done, snap, err := gr.turn(b, mine)
		switch {
		case run:
			return gr.lookup(ctx, g, b, mine)
		case done && err == nil:
			return snap, nil
		case done: // a failed lookup is not shared
			return g.k.SnapshotAt(ctx, b)
		}
		if g.clock.Now().Sub(start) >= gr.opts.MaxFollowerWait {
			break
		}
		if err := g.clock.Sleep(ctx, gr.opts.Poll); err != nil {
			return kernel.Snapshot{}, err
		}
	}
	return g.k.SnapshotAt(ctx, b) // waited long enough: look up alone
}

// turn reports whether the caller of lookup l must run it now (none in
// flight and l is the next), or whether l is done with its result.
func (gr *grouper) turn(b kernel.BranchRef, l *headLookup) (run, done bool, snap kernel.Snapshot, err error) {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	if l.done {
		return false, true, l.snap, l.err
	}
	h := gr.heads[b]
	if h.running == nil && h.next == l {
		h.running, h.next = l, nil
		return true, false, kernel.Snapshot{}, nil
	}
	return false, false, kernel.Snapshot{}, nil
}

// lookup runs l (started after every joiner's call) and publishes its
// result to them.
func (gr *grouper) lookup(ctx context.Context, g *Graph, b kernel.BranchRef, l *headLookup) (kernel.Snapshot, error) {
	snap, err := g.k.SnapshotAt(ctx, b)
	gr.mu.Lock()
	defer gr.mu.Unlock()
	l.snap, l.err, l.done = snap, err, true
	h := gr.heads[b]
	h.running = nil
	if h.next == nil {
		delete(gr.heads, b)
	}
	return snap, err
}

// gathering reports whether n Begins wait for b's next lookup while one
// runs (tests).
func (gr *grouper) gathering(b kernel.BranchRef, n int) bool {
	gr.mu.Lock()
	defer gr.mu.Unlock()
	h := gr.heads[b]
	return h != nil && h.running != nil && h.next != nil && h.next.joined == n
}
