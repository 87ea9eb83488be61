// Package traverse is the pure core of multi-hop traversal: a bounded
// breadth-first search over a neighbour function, reporting each reached
// node once with its hop count in a deterministic order (by hop count,
// then node id). It does no I/O itself; the caller's neighbour function
// does (see data.Expand).
package traverse

import (
	"errors"
	"fmt"
	"sort"
)

// Direction says which edges a hop follows.
type Direction uint8

// The directions.
const (
	Out  Direction = iota + 1 // from -> to
	In                        // to -> from
	Both                      // either way
)

// String names the direction.
func (d Direction) String() string {
	switch d {
	case Out:
		return "out"
	case In:
		return "in"
	case Both:
		return "both"
	}
	return fmt.Sprintf("direction(%d)", uint8(d))
}

// Limits bound one traversal. Zero fields take the defaults.
type Limits struct {
	// MaxFrontier bounds the nodes of one hop's frontier; a bigger frontier
	// is a *LimitError (the traversal cannot go on without it).
	MaxFrontier int
	// MaxResult bounds the reported nodes; reaching it ends the traversal
	// with a Result whose Truncated says so.
	MaxResult int
	// MaxBytes bounds the bytes the caller's reads may fetch; the caller
	// checks it before fetching and returns a *LimitError.
	MaxBytes int64
	// MaxHops bounds the hop count a caller may ask for.
	MaxHops int
}

// Default limits.
const (
	DefaultMaxFrontier = 1 << 16
	DefaultMaxResult   = 1 << 20
	DefaultMaxBytes    = 1 << 30
	DefaultMaxHops     = 64
)

// WithDefaults fills zero fields with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxFrontier <= 0 {
		l.MaxFrontier = DefaultMaxFrontier
	}
	if l.MaxResult <= 0 {
		l.MaxResult = DefaultMaxResult
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxHops <= 0 {
		l.MaxHops = DefaultMaxHops
	}
	return l
}

// ErrLimit matches every *LimitError.
var ErrLimit = errors.New("traverse: limit reached")

// ErrInvalid matches a traversal that cannot be asked: bad hop range or
// direction, or an edge type whose ends are not one node type for a
// multi-hop or two-way traversal.
var ErrInvalid = errors.New("traverse: invalid traversal")

// LimitError is a traversal stopped by a limit it cannot truncate at.
type LimitError struct {
	Limit string // "frontier" or "bytes"
	Max   int64
	Got   int64
}

// Error implements error.
func (e *LimitError) Error() string {
	return fmt.Sprintf("traverse: %s limit %d reached (needs %d); narrow the traversal or raise the limit", e.Limit, e.Max, e.Got)
}

// Unwrap exposes ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// Reached is one reported node.
type Reached struct {
	ID   string
	Hops int
}

// Result is a traversal's outcome: the reached nodes with minHops <= Hops
// <= maxHops, sorted by Hops then ID; Truncated is set when MaxResult cut
// it short (the nodes reported are then a prefix of the full answer).
type Result struct {
	Nodes     []Reached
	Truncated bool
}

// Neighbors returns the nodes one hop from node (any order, repeats
// allowed).
type Neighbors func(node string) ([]string, error)

// BFS runs the traversal from start (repeats allowed) over next. Start
// nodes are hop 0; a node is reached once, at its smallest hop count.
func BFS(start []string, minHops, maxHops int, lim Limits, next Neighbors) (Result, error) {
	lim = lim.WithDefaults()
	if minHops < 0 || maxHops < minHops || maxHops > lim.MaxHops {
		return Result{}, fmt.Errorf("%w: hops %d..%d (at most %d)", ErrInvalid, minHops, maxHops, lim.MaxHops)
	}
	seen := map[string]bool{}
	frontier := unique(start, seen)
	var res Result
	for hop := 0; hop <= maxHops && len(frontier) > 0; hop++ {
		if len(frontier) > lim.MaxFrontier {
			return Result{}, &LimitError{Limit: "frontier", Max: int64(lim.MaxFrontier), Got: int64(len(frontier))}
		}
		if hop >= minHops {
			for _, id := range frontier {
				if len(res.Nodes) == lim.MaxResult {
					res.Truncated = true
					return res, nil
				}
				res.Nodes = append(res.Nodes, Reached{ID: id, Hops: hop})
			}
		}
		if hop == maxHops {
			break
		}
		var reached []string
		for _, id := range frontier {
			ns, err := next(id)
			if err != nil {
				return Result{}, err
			}
			reached = append(reached, ns...)
		}
		frontier = unique(reached, seen)
	}
	return res, nil
}

// unique returns the ids not yet seen, sorted and unique, marking them seen.
func unique(ids []string, seen map[string]bool) []string {
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
