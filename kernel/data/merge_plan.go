package data

import (
	"context"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel/merge"
)

// mergePlan is a merge computed on three snapshots: per table, every id
// that changed on either side with its merged image, and every conflict.
type mergePlan struct {
	tables    map[string]*tableMerge // tables with a change on either side
	conflicts []MergeConflict
	resolved  []MergeConflict // conflicts the MergeOptions.Prefer policy resolved
	window    uint64          // rows of the largest diff window
	held      uint64          // row images held until the publish
}

// tableMerge is the merge of one table.
type tableMerge struct {
	t        *Table
	ids      []string                // every id changed on either side, sorted
	images   map[string]merge.Images // by id
	resolved map[string]*merge.Row   // unconflicted ids -> merged image (nil: absent)
	writes   []Row                   // merged rows the target must take, sorted by id
	deletes  []string                // ids the target must lose, sorted
}

// changeCounts returns, per type, how many ids the merge changes on the
// target.
func (p *mergePlan) changeCounts() map[string]int {
	out := map[string]int{}
	for _, name := range sortedKeysOf(p.tables) {
		if n := len(p.tables[name].writes) + len(p.tables[name].deletes); n > 0 {
			out[name] = n
		}
	}
	return out
}

// planMerge diffs every table from the base to each head, applies the row
// rule to every id that changed on either side, then checks the merged
// result (orphan edges, @card). Conflicts are sorted.
func (g *Graph) planMerge(ctx context.Context, in mergeInput, policy merge.Policy) (*mergePlan, error) {
	p := &mergePlan{tables: map[string]*tableMerge{}}
	var held, window uint64
	ids := 0 // ids held so far, bounded by the handle's row limit
	for _, name := range in.cat.names {
		t := in.cat.tables[name]
		bp, sp, tp := pinOf(in.base.ks, t), pinOf(in.src.ks, t), pinOf(in.tgt.ks, t)
		if bp == sp && bp == tp {
			continue
		}
		tm, w, err := diffBoth(ctx, in, t, in.read.tables[name], g.limits.MaxRows-ids)
		if err != nil {
			return nil, err
		}
		ids += len(tm.ids)
		window = max(window, w)
		for _, id := range tm.ids {
			held += imageCount(tm.images[id])
		}
		if len(tm.ids) > 0 {
			p.tables[name] = tm
			cs, resolved := tm.resolve(policy)
			p.conflicts = append(p.conflicts, cs...)
			p.resolved = append(p.resolved, resolved...)
		}
	}
	cs, err := p.check(ctx, in)
	if err != nil {
		return nil, err
	}
	p.conflicts = append(p.conflicts, cs...)
	merge.SortConflicts(p.conflicts)
	merge.SortConflicts(p.resolved)
	p.window, p.held = window, held
	return p, nil
}

// diffBoth collects the images of every id of t that differs between the
// base and either head (at most budget ids, else ErrMergeTooLarge), read
// through rt (t's reading layout), and the largest diff window (rows held
// at once).
func diffBoth(ctx context.Context, in mergeInput, t, rt *Table, budget int) (*tableMerge, uint64, error) {
	tm := &tableMerge{t: t, images: map[string]merge.Images{}, resolved: map[string]*merge.Row{}}
	if plant.Enabled(plant.TwoWayMerge) { // planted bug (dead code without -tags simplant): no base
		return diffTwoWay(ctx, in, tm, rt)
	}
	var window uint64
	for _, side := range []struct {
		to     *Snapshot
		source bool
	}{{in.src, true}, {in.tgt, false}} {
		if pinOf(in.base.ks, t) == pinOf(side.to.ks, t) {
			continue
		}
		w, err := diffPeak(ctx, in.base, side.to, rt)
		if err != nil {
			return nil, 0, err
		}
		window = max(window, w)
		err = tableChangesAs(ctx, rt, in.base, side.to, "", func(c RowChange) error {
			im, seen := tm.images[c.ID]
			if !seen && len(tm.images) >= budget {
				return fmt.Errorf("%w: more than %d changed ids (the handle's Limits.MaxRows)", ErrMergeTooLarge, len(tm.images))
			}
			if !seen {
				im = merge.Images{Base: toMerge(c.Before), Source: toMerge(c.Before), Target: toMerge(c.Before)}
			}
			if side.source {
				im.Source = toMerge(c.After)
			} else {
				im.Target = toMerge(c.After)
			}
			tm.images[c.ID] = im
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	tm.ids = sortedKeysOf(tm.images)
	return tm, window, nil
}

// diffTwoWay is the planted bug two-way-merge: the target's image stands
// in for the base, so every difference between the heads is a source
// change and the source wins it.
func diffTwoWay(ctx context.Context, in mergeInput, tm *tableMerge, rt *Table) (*tableMerge, uint64, error) {
	err := tableChangesAs(ctx, rt, in.tgt, in.src, "", func(c RowChange) error {
		tm.images[c.ID] = merge.Images{Base: toMerge(c.Before), Source: toMerge(c.After), Target: toMerge(c.Before)}
		return nil
	})
	tm.ids = sortedKeysOf(tm.images)
	return tm, 0, err
}

// diffPeak is the largest window TableChanges holds diffing t from one
// snapshot to another (planned from the fragment lists; no fragment read).
func diffPeak(ctx context.Context, from, to *Snapshot, t *Table) (uint64, error) {
	r := newReader(from.g, from.cat)
	fv, err := r.view(ctx, t, pinOf(from.ks, t))
	if err != nil {
		return 0, err
	}
	tv, err := r.view(ctx, t, pinOf(to.ks, t))
	if err != nil {
		return 0, err
	}
	if err := r.ensureFrags(ctx, fv); err != nil {
		return 0, err
	}
	if err := r.ensureFrags(ctx, tv); err != nil {
		return 0, err
	}
	var peak uint64
	for _, w := range changeWindows(fv.frags, tv.frags) {
		peak = max(peak, w.rows)
	}
	return peak, nil
}

// resolve applies the row rule under policy to every id and returns the
// conflicts and the conflicts the policy resolved.
func (tm *tableMerge) resolve(policy merge.Policy) (cs, resolved []MergeConflict) {
	for _, id := range tm.ids {
		r := merge.ResolveWith(tm.t.Name, tm.images[id], policy)
		resolved = append(resolved, r.Resolved...)
		if len(r.Conflicts) > 0 {
			cs = append(cs, r.Conflicts...)
			continue
		}
		tm.resolved[id] = r.Row
		switch {
		case !r.Write:
		case r.Row == nil:
			tm.deletes = append(tm.deletes, id)
		default:
			tm.writes = append(tm.writes, Row(*r.Row))
		}
	}
	return cs, resolved
}

func toMerge(r *Row) *merge.Row {
	if r == nil {
		return nil
	}
	m := merge.Row(*r)
	return &m
}

func imageCount(im merge.Images) uint64 {
	var n uint64
	for _, r := range []*merge.Row{im.Base, im.Source, im.Target} {
		if r != nil {
			n++
		}
	}
	return n
}

// sortedKeysOf returns the keys of a string-keyed map, sorted.
func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m { //detlint:ordered collects keys that are sorted next
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
