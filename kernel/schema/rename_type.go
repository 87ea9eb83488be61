package schema

import (
	"github.com/graphkernel/graphkernel/internal/plant"
)

// Type renames (docs/format.md "Schema evolution"). A type's identity is
// its storage table (NodeType.Table, EdgeType.Table; the name by default),
// as a property's is its storage column: a rename keeps the table, so the
// rows stay and nothing is rewritten (edge fragments hold endpoint ids
// only); an added type takes a table no other type has.

// renameTypes checks type renames against old and target and returns old
// with each renamed type relabelled (its new name, its old storage table,
// the edges naming it as an endpoint following it) and the RenameType
// step of each, by new name.
func renameTypes(old, target Schema, types []TypeRename) (Schema, map[string]Step, error) {
	if len(types) == 0 {
		return old, nil, nil
	}
	steps := make(map[string]Step, len(types))
	to := make(map[string]string, len(types)) // old name -> new name
	for _, r := range types {
		if err := checkTypeRename(old, target, r); err != nil {
			return Schema{}, nil, err
		}
		if _, twice := to[r.From]; twice {
			return Schema{}, nil, &ChangeError{Type: r.From, Msg: "type renamed twice"}
		}
		if _, twice := steps[r.To]; twice {
			return Schema{}, nil, &ChangeError{Type: r.To, Msg: "two types renamed to one name"}
		}
		table, _ := old.TableOf(r.From)
		to[r.From] = r.To
		steps[r.To] = Step{Op: RenameType, Type: r.To, From: r.From, Table: table}
	}
	return relabelTypes(old, to, tablesOf(old)), steps, nil
}

// checkTypeRename refuses a type rename that does not name an old type,
// a target type, or that keeps the old name or takes one in force.
func checkTypeRename(old, target Schema, r TypeRename) error {
	_, inOld := old.TableOf(r.From)
	_, inTarget := target.TableOf(r.To)
	_, fromKept := target.TableOf(r.From)
	_, toTaken := old.TableOf(r.To)
	switch {
	case r.From == r.To:
		return &ChangeError{Type: r.From, Msg: "type rename to the same name"}
	case !inOld:
		return &ChangeError{Type: r.From, Msg: "renamed type does not exist"}
	case !inTarget:
		return &ChangeError{Type: r.To, Msg: "the target has no type with the new name"}
	case fromKept:
		return &ChangeError{Type: r.From, Msg: "type renamed away but still in the target"}
	case toTaken:
		return &ChangeError{Type: r.To, Msg: "type renamed to a name the schema in force has"}
	}
	return nil
}

// relabelTypes returns old with the types renamed by to (old name -> new
// name), each keeping its storage table, and edge endpoints following.
func relabelTypes(old Schema, to map[string]string, taken map[string]bool) Schema {
	table := func(newName, stored string) string {
		if plant.Enabled(plant.RenameAsDrop) { // planted bug: a renamed type takes a fresh table (its rows are lost)
			t := freshName(newName, taken)
			taken[t] = true
			return t
		}
		return stored
	}
	pinned := Schema{Nodes: append([]NodeType(nil), old.Nodes...), Edges: append([]EdgeType(nil), old.Edges...)}
	for i, n := range pinned.Nodes {
		if nn, ok := to[n.Name]; ok {
			pinned.Nodes[i].Table = table(nn, n.StorageTable())
		}
	}
	for i, e := range pinned.Edges {
		if en, ok := to[e.Name]; ok {
			pinned.Edges[i].Table = table(en, e.StorageTable())
		}
	}
	return RenameTypeNames(pinned, to).Normalized()
}

// RenameTypeNames returns a copy of s with each type named in to (old
// name -> new name) renamed and every edge endpoint naming it following;
// everything else (properties, retired columns, @table) is kept as
// written. s itself is not modified. On a hand-written target it is the
// target side of a TypeRename: EvolveTypes(old, RenameTypeNames(t, to),
// renames of to, ...) keeps the renamed types' tables.
func RenameTypeNames(s Schema, to map[string]string) Schema {
	out := Schema{Nodes: append([]NodeType(nil), s.Nodes...), Edges: append([]EdgeType(nil), s.Edges...)}
	for i, n := range out.Nodes {
		if nn, ok := to[n.Name]; ok {
			out.Nodes[i].Name = nn
		}
	}
	for i, e := range out.Edges {
		if en, ok := to[e.Name]; ok {
			out.Edges[i].Name = en
		}
		if f, ok := to[e.From]; ok {
			out.Edges[i].From = f
		}
		if t, ok := to[e.To]; ok {
			out.Edges[i].To = t
		}
	}
	return out
}

// renamesInTarget returns renames with each Type that names a renamed
// type's old name replaced by its new name.
func renamesInTarget(renames []Rename, types []TypeRename) []Rename {
	if len(types) == 0 {
		return renames
	}
	out := append([]Rename(nil), renames...)
	for i := range out {
		for _, t := range types {
			if out[i].Type == t.From {
				out[i].Type = t.To
			}
		}
	}
	return out
}

// tablesOf returns the set of storage tables of s's types.
func tablesOf(s Schema) map[string]bool {
	out := make(map[string]bool, len(s.Nodes)+len(s.Edges))
	for _, n := range s.Nodes {
		out[n.StorageTable()] = true
	}
	for _, e := range s.Edges {
		out[e.StorageTable()] = true
	}
	return out
}
