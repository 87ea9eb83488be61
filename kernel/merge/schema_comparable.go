package merge

import "github.com/graphkernel/graphkernel/kernel/schema"

// comparableTypes returns the types of merged no conflict names, normalized.
func comparableTypes(merged schema.Schema, conflicts []Conflict) schema.Schema {
	named := map[string]bool{}
	for _, c := range conflicts {
		named[c.Type] = true
	}
	var out schema.Schema
	for _, n := range merged.Nodes {
		if !named[n.Name] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	for _, e := range merged.Edges {
		if !named[e.Name] {
			out.Edges = append(out.Edges, e)
		}
	}
	return out.Normalized()
}
