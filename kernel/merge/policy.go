package merge

import "fmt"

// Side is what a Policy does with one conflict kind.
type Side uint8

// The sides. The zero Side refuses: the conflict stays a conflict.
const (
	// Refuse keeps the conflict: the merge fails and writes nothing.
	Refuse Side = iota
	// PreferSource resolves the conflict with the source's image (a whole
	// row for DivergentInsert and DeleteVsUpdate, one property or
	// endpoint for DivergentUpdate).
	PreferSource
	// PreferTarget resolves the conflict with the target's image.
	PreferTarget
)

// String returns "refuse", "source" or "target".
func (s Side) String() string {
	switch s {
	case Refuse:
		return "refuse"
	case PreferSource:
		return "source"
	case PreferTarget:
		return "target"
	}
	return fmt.Sprintf("Side(%d)", uint8(s))
}

// ParseSide parses "source" or "target" (and "refuse").
func ParseSide(s string) (Side, bool) {
	for _, v := range []Side{Refuse, PreferSource, PreferTarget} {
		if v.String() == s {
			return v, true
		}
	}
	return Refuse, false
}

// Policy says, per resolvable conflict kind, which side wins. The zero
// Policy refuses every conflict (the row rule of Resolve). OrphanEdge and
// CardinalityViolation are checks of the merged result, not choices
// between two images: no policy resolves them (and a preference can cause
// them, e.g. preferring a node's delete over an edge added to it).
type Policy struct {
	DivergentInsert Side
	DeleteVsUpdate  Side
	DivergentUpdate Side
}

// PreferAll is the policy preferring side s for every resolvable kind.
func PreferAll(s Side) Policy {
	return Policy{DivergentInsert: s, DeleteVsUpdate: s, DivergentUpdate: s}
}

// Resolvable reports whether a policy can resolve conflicts of kind k.
func Resolvable(k Kind) bool {
	return k == DivergentInsert || k == DeleteVsUpdate || k == DivergentUpdate
}

// For returns the side p prefers for kind k (Refuse for a kind no policy
// resolves).
func (p Policy) For(k Kind) Side {
	switch k {
	case DivergentInsert:
		return p.DivergentInsert
	case DeleteVsUpdate:
		return p.DeleteVsUpdate
	case DivergentUpdate:
		return p.DivergentUpdate
	}
	return Refuse
}

// Set returns p with kind k preferring side s, or false for a kind no
// policy resolves.
func (p Policy) Set(k Kind, s Side) (Policy, bool) {
	switch k {
	case DivergentInsert:
		p.DivergentInsert = s
	case DeleteVsUpdate:
		p.DeleteVsUpdate = s
	case DivergentUpdate:
		p.DivergentUpdate = s
	default:
		return p, false
	}
	return p, true
}

// KindByName returns the kind named name (its String form).
func KindByName(name string) (Kind, bool) {
	for k := DivergentInsert; k <= SchemaConflict; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

// pick returns the image of the side s prefers.
func pick[T any](s Side, source, target T) T {
	if s == PreferSource {
		return source
	}
	return target
}
