package data

import (
	"context"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/merge"
)

// refuseSchemaConflicts fails a merge round whose schemas conflict, with
// the schema conflicts and, beside them, the row conflicts of the types
// the schema conflicts leave comparable (comparableRowConflicts), all in
// one *MergeConflictError. Nothing is written.
func (g *Graph) refuseSchemaConflicts(ctx context.Context, in mergeInput, res MergeResult, source, target kernel.BranchRef, policy merge.Policy) (MergeResult, error) {
	rows, resolved, err := g.comparableRowConflicts(ctx, in, policy)
	if err != nil {
		return res, err
	}
	all := append(append([]MergeConflict(nil), in.schemaConflicts...), rows...)
	merge.SortConflicts(all)
	res.Conflicts, res.Resolved = all, resolved
	return res, &MergeConflictError{Source: source.Name(), Target: target.Name(), Conflicts: all}
}

// comparableRowConflicts applies the row rule under policy to the types of
// in.comparable that changed on either side, reading the three sides'
// fragments through the merged type (which keeps every side's columns).
// The checks of the merged result (orphan edges, @card) need the merged
// schema, so they run only once the schemas merge. Bounded by the
// handle's Limits.MaxRows like a merge (ErrMergeTooLarge).
func (g *Graph) comparableRowConflicts(ctx context.Context, in mergeInput, policy merge.Policy) (cs, resolved []MergeConflict, err error) {
	if in.comparable == nil {
		return nil, nil, nil
	}
	ids := 0
	for _, name := range in.comparable.names {
		t := in.comparable.tables[name]
		bp, sp, tp := pinOf(in.base.ks, t), pinOf(in.src.ks, t), pinOf(in.tgt.ks, t)
		if bp == sp && bp == tp {
			continue
		}
		tm, _, err := diffBoth(ctx, in, t, t, g.limits.MaxRows-ids)
		if err != nil {
			return nil, nil, err
		}
		ids += len(tm.ids)
		c, r := tm.resolve(policy)
		cs, resolved = append(cs, c...), append(resolved, r...)
	}
	merge.SortConflicts(resolved)
	return cs, resolved, nil
}
