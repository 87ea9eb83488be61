package data

import (
	"context"

	"github.com/graphkernel/graphkernel/kernel/merge"
)

// check validates the merged result as a transaction is validated.
//
// Orphan edges: every edge the merge resolved that is present in the
// result must have both endpoint nodes in the result. Edges the merge did
// not resolve are unchanged on both sides since the base, so their
// endpoints were present in the base and on both heads; a node the merge
// deletes was deleted on one side, whose commit removed (or cascaded) the
// node's base edges there, so any edge still ending at it changed on some
// side and was resolved. Checking the resolved edges is therefore
// complete.
//
// Cardinality: for every edge type with a non-default @card, every node
// whose out-edges the merge resolved (and every node of its from type the
// merge inserts, when the minimum is above zero) is counted in the result.
func (p *mergePlan) check(ctx context.Context, in mergeInput) ([]MergeConflict, error) {
	var cs []MergeConflict
	for _, name := range sortedKeysOf(p.tables) {
		tm := p.tables[name]
		if !tm.t.Edge {
			continue
		}
		got, err := p.checkEdges(ctx, in, tm)
		if err != nil {
			return nil, err
		}
		cs = append(cs, got...)
	}
	for _, name := range in.cat.names {
		e := in.cat.tables[name]
		if !e.Edge || e.Card.IsDefault() {
			continue
		}
		got, err := p.checkCard(ctx, in, e)
		if err != nil {
			return nil, err
		}
		cs = append(cs, got...)
	}
	return cs, nil
}

// nodeInResult reports whether node id of type typ is in the merged result:
// its merged image when the merge resolved it, else whether the target has
// it (through the target's id index).
func (p *mergePlan) nodeInResult(ctx context.Context, in mergeInput, typ, id string) (bool, error) {
	if tm, ok := p.tables[typ]; ok {
		if r, resolved := tm.resolved[id]; resolved {
			return r != nil, nil
		}
	}
	return in.on.exists(ctx, typ, id)
}

func (p *mergePlan) checkEdges(ctx context.Context, in mergeInput, tm *tableMerge) ([]MergeConflict, error) {
	var cs []MergeConflict
	for _, id := range tm.ids {
		r, ok := tm.resolved[id]
		if !ok || r == nil {
			continue
		}
		var firstErr error
		exists := func(typ, node string) bool {
			found, err := p.nodeInResult(ctx, in, typ, node)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			return found || err != nil
		}
		got := merge.CheckEdge(tm.t.Name, tm.t.From, tm.t.To, *r, exists)
		if firstErr != nil {
			return nil, firstErr
		}
		cs = append(cs, got...)
	}
	return cs, nil
}

// checkCard counts the out-edges of every node whose count of edge type e
// the merge may change. It reads the target's whole edge table, as a
// transaction's cardinality check does (a known gap of the data plane).
func (p *mergePlan) checkCard(ctx context.Context, in mergeInput, e *Table) ([]MergeConflict, error) {
	sources := map[string]bool{}
	merged := map[string]*merge.Row{}
	if tm, ok := p.tables[e.Name]; ok {
		for _, id := range tm.ids {
			im := tm.images[id]
			if im.Target != nil {
				sources[im.Target.From] = true
			}
			if r, ok := tm.resolved[id]; ok {
				merged[id] = r
				if r != nil {
					sources[r.From] = true
				}
			}
		}
	}
	// Under a @card the target did not have (the merge takes the
	// source's), every node either side changed is counted: the target's
	// were checked against its own bounds only.
	recard := true
	if te, ok := in.tgt.cat.byStorage[e.Storage]; ok && te.Card == e.Card {
		recard = false
	}
	if nt, ok := p.tables[e.From]; ok && e.Card.Min > 0 {
		for _, id := range nt.ids {
			if r := nt.resolved[id]; r != nil && (recard || nt.images[id].Target == nil) {
				sources[id] = true
			}
		}
	}
	var cs []MergeConflict
	for _, node := range sortedKeys(sources) {
		present, err := p.nodeInResult(ctx, in, e.From, node)
		if err != nil {
			return nil, err
		}
		if !present {
			continue
		}
		out, err := in.on.Out(ctx, e.Name, node)
		if err != nil {
			return nil, err
		}
		target := make([]merge.Row, len(out))
		for i, r := range out {
			target[i] = merge.Row(r)
		}
		n := merge.OutDegree(node, target, merged)
		cs = append(cs, merge.CheckDegree(e.Name, node, n, e.Card.Allows(n), e.Card.String())...)
	}
	return cs, nil
}
