package check

import (
	"fmt"
	"sort"
	"strings"
)

// Edge is one edge as a full scan of its table saw it: the reference the
// graph reads are compared with.
type Edge struct{ ID, From, To string }

// Adjacent returns the ids, sorted, of the edges whose from (out) or to
// (in) is node: the naive evaluation of Out and In.
func Adjacent(edges []Edge, node string, out bool) []string {
	var ids []string
	for _, e := range edges {
		if (out && e.From == node) || (!out && e.To == node) {
			ids = append(ids, e.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// Hop is one node a traversal reached and its hop count.
type Hop struct {
	ID   string
	Hops int
}

// Expand is the naive breadth-first traversal: every node within
// minHops..maxHops of start following edges out, in or both ways, at its
// smallest hop count, sorted by hop count then id.
func Expand(edges []Edge, start []string, out, in bool, minHops, maxHops int) []Hop {
	hops := map[string]int{}
	level := map[string]bool{}
	for _, s := range start {
		level[s] = true
	}
	for h := 0; h <= maxHops && len(level) > 0; h++ {
		for n := range level { //detlint:ordered fills a map; order-free
			hops[n] = h
		}
		next := map[string]bool{}
		for _, e := range edges {
			if out && level[e.From] {
				next[e.To] = true
			}
			if in && level[e.To] {
				next[e.From] = true
			}
		}
		level = map[string]bool{}
		for n := range next { //detlint:ordered fills a set; order-free
			if _, seen := hops[n]; !seen {
				level[n] = true
			}
		}
	}
	var res []Hop
	for n, h := range hops { //detlint:ordered sorted next
		if h >= minHops {
			res = append(res, Hop{n, h})
		}
	}
	sort.Slice(res, func(i, j int) bool {
		return res[i].Hops < res[j].Hops || (res[i].Hops == res[j].Hops && res[i].ID < res[j].ID)
	})
	return res
}

// SameReads returns a "read-consistency" violation when a graph read (what)
// answered got where the naive evaluation over a full scan of the same
// snapshot answers want.
func SameReads(where, what string, got, want []string) []Violation {
	if strings.Join(got, ",") == strings.Join(want, ",") {
		return nil
	}
	return []Violation{violation("read-consistency", "%s: %s = [%s], the full scan says [%s]",
		where, what, strings.Join(got, ","), strings.Join(want, ","))}
}

// HopStrings renders hops for SameReads.
func HopStrings(hs []Hop) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s@%d", h.ID, h.Hops)
	}
	return out
}
