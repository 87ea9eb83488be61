package data

import (
	"context"
	"fmt"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/data/traverse"
)

// OutDegree returns the number of edges of edgeType whose from is nodeID.
func (s *Snapshot) OutDegree(ctx context.Context, edgeType, nodeID string) (int, error) {
	rows, err := s.Out(ctx, edgeType, nodeID)
	return len(rows), err
}

// InDegree returns the number of edges of edgeType whose to is nodeID.
func (s *Snapshot) InDegree(ctx context.Context, edgeType, nodeID string) (int, error) {
	rows, err := s.In(ctx, edgeType, nodeID)
	return len(rows), err
}

// Expand is a breadth-first traversal of edgeType at snapshot s from the
// start node ids, following edges in direction dir: every node reached
// within minHops..maxHops reported once with its smallest hop count,
// sorted by hop count then id (see traverse.BFS). Start ids need not
// exist. A multi-hop or two-way traversal needs an edge type whose from
// and to are one node type (else traverse.ErrInvalid).
//
// Limits: a frontier over lim.MaxFrontier is a *traverse.LimitError; more
// than lim.MaxResult nodes ends with a Result marked Truncated; each hop
// looks up its frontier's edges through the adjacency index, and an index
// object whose fetch would take the traversal's fetched bytes past
// lim.MaxBytes is a *traverse.LimitError (cached objects are free). On a
// version without an index the edge table is loaded whole, its uncached
// bytes checked against lim.MaxBytes first.
func Expand(ctx context.Context, s *Snapshot, start []string, edgeType string, dir traverse.Direction,
	minHops, maxHops int, lim traverse.Limits) (traverse.Result, error) {
	lim = lim.WithDefaults()
	e, err := s.cat.table(edgeType)
	if err != nil {
		return traverse.Result{}, err
	}
	switch {
	case !e.Edge:
		return traverse.Result{}, reject(ErrUnknownType, edgeType, "", "", "is a node type, not an edge type")
	case dir < traverse.Out || dir > traverse.Both:
		return traverse.Result{}, fmt.Errorf("%w: direction %v", traverse.ErrInvalid, dir)
	case (maxHops > 1 || dir == traverse.Both) && e.From != e.To:
		return traverse.Result{}, fmt.Errorf("%w: %s joins %s to %s; only one outward or inward hop is possible",
			traverse.ErrInvalid, edgeType, e.From, e.To)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.view(ctx, edgeType)
	if err != nil {
		return traverse.Result{}, err
	}
	if v.hasAdj {
		r := &reader{g: s.g, cat: s.cat, budget: &byteBudget{max: lim.MaxBytes}}
		return traverse.BFS(start, minHops, maxHops, lim, func(node string) ([]string, error) {
			return indexedNeighbours(ctx, r, v, node, dir)
		})
	}
	if err := s.r.ensureFrags(ctx, v); err != nil {
		return traverse.Result{}, err
	}
	if need := s.uncachedBytes(v); need > lim.MaxBytes {
		return traverse.Result{}, &traverse.LimitError{Limit: "bytes", Max: lim.MaxBytes, Got: need}
	}
	if err := s.r.loadAll(ctx, v); err != nil {
		return traverse.Result{}, err
	}
	return traverse.BFS(start, minHops, maxHops, lim, func(node string) ([]string, error) {
		return neighbours(v, node, dir), nil
	})
}

// indexedNeighbours lists the nodes one hop from node through the
// adjacency index (fetches charged to r's budget).
func indexedNeighbours(ctx context.Context, r *reader, v *tableView, node string, dir traverse.Direction) ([]string, error) {
	var out []string
	if dir != traverse.In {
		rows, err := r.adjacentIndexed(ctx, v, node, dirOut)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			out = append(out, e.To)
		}
	}
	if dir != traverse.Out {
		rows, err := r.adjacentIndexed(ctx, v, node, dirIn)
		if err != nil {
			return nil, err
		}
		for _, e := range rows {
			out = append(out, e.From)
		}
	}
	sort.Strings(out)
	return out, nil
}

// uncachedBytes sums the fragments of v that are neither loaded nor cached.
func (s *Snapshot) uncachedBytes(v *tableView) int64 {
	var n int64
	for i, f := range v.frags {
		if v.recs[i] == nil && !s.g.cache.has(cacheKey(v.t.cacheID, f.Name)) {
			n += int64(f.Bytes)
		}
	}
	return n
}

// neighbours lists the nodes one hop from node in a fully loaded edge view.
func neighbours(v *tableView, node string, dir traverse.Direction) []string {
	var out []string
	for _, id := range v.incident(node) {
		from, to, _ := v.ends(id)
		if from == node && dir != traverse.In {
			out = append(out, to)
		}
		if to == node && dir != traverse.Out {
			out = append(out, from)
		}
	}
	sort.Strings(out)
	return out
}
