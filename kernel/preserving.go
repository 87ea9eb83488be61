package kernel

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/format"
	"github.com/graphkernel/graphkernel/kernel/lineage"
)

// PinSatisfied reports whether a pin of version base of table is satisfied
// by the version at: at is base, or every version on at's based_on chain
// back to base is content-preserving (a compaction), so the table holds the
// rows it held at base (lineage.PinSatisfied). It reads at most
// lineage.MaxPreservingChain table versions; in doubt it answers false.
func (g *Graph) PinSatisfied(ctx context.Context, table string, base uint64, at TableRef) (bool, error) {
	if at.Version == base {
		return true, nil
	}
	if at.Version < base || at.Rides {
		// A riding version (format 11) is never content-preserving
		// (format.RidingPayload), so it holds other rows than base.
		return false, nil
	}
	tv, err := g.ReadTable(ctx, table, at)
	if err != nil {
		return false, fmt.Errorf("pin of %q at %d satisfied by %d: %w", table, base, at.Version, err)
	}
	chain := []lineage.VersionMark{markOf(tv)}
	for {
		next, more := lineage.ChainNeedsMore(base, chain)
		if !more {
			return lineage.PinSatisfied(base, chain), nil
		}
		if tv.BasedOn == nil || tv.BasedOn.Version != next {
			panic(fmt.Sprintf("kernel: ChainNeedsMore asked for %d, version %d of %q is based on %v", next, tv.Version, table, tv.BasedOn))
		}
		if tv.BasedOn.Rides { // not content-preserving, and above base: the rows differ
			return false, nil
		}
		if tv, err = g.ReadTable(ctx, table, *tv.BasedOn); err != nil {
			return false, fmt.Errorf("pin of %q at %d satisfied by %d: %w", table, base, at.Version, err)
		}
		chain = append(chain, markOf(tv))
	}
}

func markOf(tv format.TableVersion) lineage.VersionMark {
	m := lineage.VersionMark{Version: tv.Version, Preserving: tv.ContentPreserving}
	if tv.BasedOn != nil {
		m.BasedOn = tv.BasedOn.Version
	}
	return m
}

// strictBaseHolds reports whether a strict write based on version base may
// proceed on manifest m with the table's HEAD at head: the pin is base or
// only content-preserving versions lie between, and the HEAD is the pin,
// repeats the pinned content (a recovery restore or fence) or only
// preserves it (an in-flight compaction, which loses to this write's
// publish if it has not landed first).
func (g *Graph) strictBaseHolds(ctx context.Context, m *format.Manifest, table string, base uint64, head TableRef) (bool, error) {
	if head.Version == base {
		return true, nil
	}
	var pin TableRef
	if p, ok := m.Pin(table); ok {
		pin = p.Ref()
	}
	if pin.Version != base {
		if ok, err := g.PinSatisfied(ctx, table, base, pin); err != nil || !ok {
			return false, err
		}
	}
	if head == pin {
		return true, nil
	}
	if same, err := g.headRepeatsPin(ctx, m, table, pin.Version, head); err != nil || same {
		return same, err
	}
	if pin.Version == 0 {
		return false, nil
	}
	return g.PinSatisfied(ctx, table, pin.Version, head)
}

// strictMayRetry reports whether the strict table of a write that lost its
// round on a mismatch moved past the version the write is based on only
// through content-preserving versions — at least one, published or in
// flight above the pin — so the next round may rebuild on it. A recovery
// restore or fence, or a data write, is not: the write ends as before.
func (g *Graph) strictMayRetry(ctx context.Context, b BranchRef, writes []TableWrite, reads []readState, table string) (bool, error) {
	head, err := g.liveHead(ctx, b)
	if err != nil {
		return false, err
	}
	for _, w := range writes {
		if w.Table == table {
			th, err := g.tableHead(ctx, b, &head.m, table)
			if err != nil {
				return false, err
			}
			var pin TableRef
			if p, ok := head.m.Pin(table); ok {
				pin = p.Ref()
			}
			if th.Version == w.BaseVersion || pin.Version == 0 {
				return false, nil
			}
			if ok, err := g.PinSatisfied(ctx, table, w.BaseVersion, pin); err != nil || !ok {
				return false, err
			}
			return g.PinSatisfied(ctx, table, pin.Version, th)
		}
	}
	for _, r := range reads {
		if r.Table == table {
			var pin TableRef
			if p, ok := head.m.Pin(table); ok {
				pin = p.Ref()
			}
			return g.PinSatisfied(ctx, table, r.cur, pin)
		}
	}
	return false, nil
}
