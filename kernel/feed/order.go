package feed

import (
	"slices"
	"strings"
)

// TypeRef names one node or edge type.
type TypeRef struct {
	Name string
	Edge bool
}

// Order returns the types a commit's changes are delivered in: node types
// before edge types, each group by name in byte order, keeping only the
// types f selects. Inside a type, changes go in ascending id order.
func Order(types []TypeRef, f Filter) []TypeRef {
	out := make([]TypeRef, 0, len(types))
	for _, t := range types {
		if f.WantsType(t.Name) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, compareTypes)
	return out
}

func compareTypes(a, b TypeRef) int {
	if a.Edge != b.Edge {
		if a.Edge {
			return 1
		}
		return -1
	}
	return strings.Compare(a.Name, b.Name)
}

// Before reports whether the change (a, idA) comes before (b, idB) in the
// delivery order.
func Before(a TypeRef, idA string, b TypeRef, idB string) bool {
	if c := compareTypes(a, b); c != 0 {
		return c < 0
	}
	return idA < idB
}

// ResumeIndex returns the index in ordered (as Order returns it) of the
// type to continue with at r, or a *CursorError if r names a type that is
// not there. The zero Resume starts at index 0.
func ResumeIndex(ordered []TypeRef, r Resume) (int, error) {
	if r.Type == "" {
		return 0, nil
	}
	for i, t := range ordered {
		if t.Name == r.Type {
			return i, nil
		}
	}
	return 0, badCursor(Malformed, "resume type %q is not a selected type", r.Type)
}
