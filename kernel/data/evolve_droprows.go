package data

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// publishDropRows is the commit of a schema change that drops types with
// their rows (SchemaOptions.DropRows): one write, through the one door,
// that deletes every row of drops (read on snap, the head the change was
// planned and checked on) and names the new schema (intent.NewSchema),
// expecting every other table the change checked (exp) at its version. It
// is a transaction validated on snap deleting every id it read there;
// deletes make a table write strict, so a row written to a dropped type
// since snap fails the round with
// *kernel.VersionMismatchError (ApplySchema re-plans) instead of
// surviving the drop; its writer kind is kernel.WriterKindSchema, which
// recovery rolls back, never forward. Rows deleted count against the
// handle's transaction limits (Limits.MaxRows): a larger type is refused
// by them, typed, with nothing written.
func (g *Graph) publishDropRows(ctx context.Context, b kernel.BranchRef, snap *Snapshot, drops []string, exp []kernel.Expectation, intent kernel.LineageIntent) (kernel.Commit, error) {
	t := &Txn{g: g, branch: b, base: snap.ks, cat: snap.cat, r: newReader(g, snap.cat),
		views: map[string]*tableView{}, s: newStaging(snap.cat, g.limits)}
	for _, typ := range drops { // edges first: a node delete then finds none left
		if err := t.deleteAll(ctx, snap, typ, true); err != nil {
			return kernel.Commit{}, err
		}
	}
	for _, typ := range drops {
		if err := t.deleteAll(ctx, snap, typ, false); err != nil {
			return kernel.Commit{}, err
		}
	}
	c, err := t.prepareBuilt(ctx, snap.ks)
	if err != nil {
		return kernel.Commit{}, err
	}
	defer c.release()
	writes := c.writes(ctx) // strict: every table is written by deletes
	expect := c.expectations(ctx)
	listed := map[string]bool{}
	for _, w := range writes {
		listed[w.Table] = true
	}
	for _, e := range expect {
		listed[e.Table] = true
	}
	for _, e := range exp { // the change's other checks (a tightened @card, an empty type)
		if !listed[e.Table] {
			expect = append(expect, kernel.ReadExpectation{Table: e.Table, Version: e.Version, Strict: true})
		}
	}
	opts := kernel.WriteOptions{Kind: kernel.WriterKindSchema, Expect: expect, FollowCompactions: true}
	return g.k.WriteWith(ctx, b, writes, intent, opts)
}

// deleteAll stages the deletion of every row of typ on snap when it is an
// edge type (edges) or a node type (!edges).
func (t *Txn) deleteAll(ctx context.Context, snap *Snapshot, typ string, edges bool) error {
	tb, err := snap.cat.table(typ)
	if err != nil {
		return err
	}
	if tb.Edge != edges {
		return nil
	}
	var ids []string
	if err := scanColumns(ctx, snap, typ, []string{schema.ColID}, func(v []string) { ids = append(ids, v[0]) }); err != nil {
		return err
	}
	if err := t.Delete(typ, ids...); err != nil {
		return fmt.Errorf("drop the rows of %s: %w", typ, err)
	}
	return nil
}
