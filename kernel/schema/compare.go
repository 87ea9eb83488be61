package schema

// Compare returns the steps that lead from schema old to schema new, both
// schemas in force (with their storage columns), as the change feed and
// `graphkernel schema diff` report a schema change. A property's identity
// is its storage column, as in Evolve and the schema merge: a column live
// on both sides under two names is a rename, a column live only in new is
// an add, one live only in old is a drop. Types are matched by name (a
// type present on both sides as a node and as an edge is a drop and an
// add). The order is Evolve's: types by name, nodes first (new's types,
// then old's dropped types); inside a kept type renames and loosenings in
// new's property order, then adds, then drops in old's order, then an edge
// type's @card. For a Plan p, Compare(p.Old, p.New) equals p.Steps.
//
// A column kept with another kind, or made required, has no step (Evolve
// refuses both; Compare only reports what a lineage can hold).
func Compare(old, new Schema) []Step {
	old, new = old.Normalized(), new.Normalized()
	var steps []Step
	for _, n := range new.Nodes {
		o, ok := old.Node(n.Name)
		if !ok {
			steps = append(steps, Step{Op: AddNode, Type: n.Name})
			continue
		}
		steps = append(steps, compareProps(n.Name, o.Props, n.Props)...)
	}
	for _, e := range new.Edges {
		o, ok := old.Edge(e.Name)
		if !ok {
			steps = append(steps, Step{Op: AddEdge, Type: e.Name})
			continue
		}
		steps = append(steps, compareProps(e.Name, o.Props, e.Props)...)
		if o.Card != e.Card {
			steps = append(steps, Step{Op: Recard, Type: e.Name, OldCard: o.Card, NewCard: e.Card})
		}
	}
	for _, n := range old.Nodes {
		if _, ok := new.Node(n.Name); !ok {
			steps = append(steps, Step{Op: DropType, Type: n.Name})
		}
	}
	for _, e := range old.Edges {
		if _, ok := new.Edge(e.Name); !ok {
			steps = append(steps, Step{Op: DropType, Type: e.Name})
		}
	}
	return steps
}

// compareProps is Compare for the properties of one type kept on both
// sides.
func compareProps(typ string, old, new []Property) []Step {
	oldByCol := make(map[string]Property, len(old))
	for _, p := range old {
		oldByCol[p.StorageColumn()] = p
	}
	newCols := make(map[string]bool, len(new))
	var steps, adds []Step
	for _, p := range new {
		c := p.StorageColumn()
		newCols[c] = true
		op, kept := oldByCol[c]
		if !kept {
			adds = append(adds, Step{Op: AddProp, Type: typ, Prop: p.Name, Required: p.Required, Column: c})
			continue
		}
		if op.Name != p.Name {
			steps = append(steps, Step{Op: RenameProp, Type: typ, Prop: p.Name, From: op.Name, Column: c})
		}
		if op.Required && !p.Required {
			steps = append(steps, Step{Op: LoosenProp, Type: typ, Prop: p.Name})
		}
	}
	steps = append(steps, adds...)
	for _, op := range old {
		if c := op.StorageColumn(); !newCols[c] {
			steps = append(steps, Step{Op: DropProp, Type: typ, Prop: op.Name, Column: c})
		}
	}
	return steps
}
