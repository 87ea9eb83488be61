package maintain

import (
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// checkClock refuses the collection, before anything is deleted, when a
// branch head it loaded carries a time more than the skew margin after the
// collector's clock (docs/gc.md §4): the collector's clock is behind, or
// that head's writer's is ahead, and either way the clocks disagree beyond
// what the grace rule's argument assumes. If in doubt, keep: the
// collection answers *kernel.ClockSkewError and deletes nothing.
//
// The clock is read after the head: the head was written before it was
// read, so an exact clock is never behind it (c.now, read at the start,
// may be: a load can take longer than the margin).
func (c *collection) checkClock(g incGroup, head *format.Manifest) error {
	now := c.m.now()
	at, behind := lineage.ClockBehind(head, now, c.p.SkewMargin)
	if !behind {
		return nil
	}
	ref := fmt.Sprintf("the head of %s#%d (v%d)", g.key.Name, g.key.Inc, head.Version)
	if head.Commit != nil {
		ref = fmt.Sprintf("the head of %s#%d (v%d, commit %s)", g.key.Name, g.key.Inc, head.Version, head.Commit.ID)
	}
	return &kernel.ClockSkewError{Op: "collect", Reference: ref, RefTime: at, Now: now, Margin: c.p.SkewMargin}
}
