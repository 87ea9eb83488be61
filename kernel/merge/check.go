package merge

import "fmt"

// Outcome is what a merge does.
type Outcome uint8

// The outcomes. The zero Outcome is invalid.
const (
	// AlreadyUpToDate: the heads are equal or the base is the source
	// head. Nothing is written.
	AlreadyUpToDate Outcome = iota + 1
	// FastForward: the base is the target head. The merge still publishes
	// one two-parent commit (see kernel/data's Merge).
	FastForward
	// Merged: both sides moved since the base; a two-parent commit
	// carries the three-way result.
	Merged
)

// String returns "already-up-to-date", "fast-forward" or "merged".
func (o Outcome) String() string {
	switch o {
	case AlreadyUpToDate:
		return "already-up-to-date"
	case FastForward:
		return "fast-forward"
	case Merged:
		return "merged"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Classify returns the outcome of merging source into target whose merge
// base is base (commit ids of any comparable type).
func Classify[ID comparable](base, source, target ID) Outcome {
	switch {
	case source == target || base == source:
		return AlreadyUpToDate
	case base == target:
		return FastForward
	}
	return Merged
}

// CheckEdge returns an OrphanEdge conflict for each endpoint of the merged
// edge e (of type typ, from node type fromType, to node type toType) that
// exists reports absent from the merged result.
func CheckEdge(typ, fromType, toType string, e Row, exists func(typ, id string) bool) []Conflict {
	var out []Conflict
	for _, end := range [2]struct{ role, typ, id string }{{"from", fromType, e.From}, {"to", toType, e.To}} {
		if !exists(end.typ, end.id) {
			out = append(out, Conflict{Kind: OrphanEdge, Type: typ, ID: e.ID, Property: end.role,
				Message: fmt.Sprintf("%s node %s %q is absent from the merged result", end.role, end.typ, end.id)})
		}
	}
	return out
}

// OutDegree counts node's out-edges in the merged result: target holds the
// target's out-edges of node; merged maps every id the merge resolved to
// its merged image (nil: absent), which replaces the target's image.
func OutDegree(node string, target []Row, merged map[string]*Row) uint64 {
	var n uint64
	for _, e := range target {
		if _, resolved := merged[e.ID]; !resolved {
			n++
		}
	}
	for _, r := range merged { //detlint:ordered counts only
		if r != nil && r.From == node {
			n++
		}
	}
	return n
}

// CheckDegree returns a CardinalityViolation for node (of edge type typ)
// when allowed says its merged out-degree n is outside bounds (the @card
// text, for the message).
func CheckDegree(typ, node string, n uint64, allowed bool, bounds string) []Conflict {
	if allowed {
		return nil
	}
	return []Conflict{{Kind: CardinalityViolation, Type: typ, ID: node, Property: "from",
		Message: fmt.Sprintf("source %q would have %d out-edges in the merged result, outside @card(%s)", node, n, bounds)}}
}
