package schema

// Compare returns the steps that lead from schema old to schema new, both
// schemas in force (with their storage columns and tables), as the change
// feed and `graphkernel schema diff` report a schema change. A type's
// identity is its storage table and kind, a property's its storage column,
// as in Evolve and the schema merge: a table live on both sides under two
// names is a type rename, a column live on both sides under two names a
// property rename, a column live only in new is an add (with the default
// old rows read), one live only in old is a drop, an int32 column that is
// int64 in new a widening. A type present on both sides as a node and as
// an edge is a drop and an add. The steps apply one after the other, each
// naming types and properties as the steps before it left them (S12; see
// replayOrder): dropped types first, then type renames, then per type of
// new (by name, nodes first) its add, or its property drops (old's order),
// renames, loosenings and widenings (new's order), adds, @card; renames
// that reuse a name come after the rename that frees it, a swap goes
// through a temporary name. For a Plan p, Compare(p.Old, p.New) equals
// p.Steps.
//
// A column kept with another kind (other than a widening), or made
// required, has no step (Evolve refuses both; Compare only reports what a
// lineage can hold).
func Compare(old, new Schema) []Step {
	old, new = old.Normalized(), new.Normalized()
	var steps []Step
	for _, n := range new.Nodes {
		o, ok := nodeByTable(old, n.StorageTable())
		if !ok {
			steps = append(steps, Step{Op: AddNode, Type: n.Name})
			continue
		}
		steps = append(steps, renameStep(o.Name, n.Name, n.StorageTable())...)
		steps = append(steps, compareProps(n.Name, o.Props, n.Props)...)
	}
	for _, e := range new.Edges {
		o, ok := edgeByTable(old, e.StorageTable())
		if !ok {
			steps = append(steps, Step{Op: AddEdge, Type: e.Name})
			continue
		}
		steps = append(steps, renameStep(o.Name, e.Name, e.StorageTable())...)
		steps = append(steps, compareProps(e.Name, o.Props, e.Props)...)
		if o.Card != e.Card {
			steps = append(steps, Step{Op: Recard, Type: e.Name, OldCard: o.Card, NewCard: e.Card})
		}
	}
	for _, n := range old.Nodes {
		if _, ok := nodeByTable(new, n.StorageTable()); !ok {
			steps = append(steps, Step{Op: DropType, Type: n.Name})
		}
	}
	for _, e := range old.Edges {
		if _, ok := edgeByTable(new, e.StorageTable()); !ok {
			steps = append(steps, Step{Op: DropType, Type: e.Name})
		}
	}
	return replayOrder(steps, new)
}

func renameStep(from, to, table string) []Step {
	if from == to {
		return nil
	}
	return []Step{{Op: RenameType, Type: to, From: from, Table: table}}
}

// nodeByTable returns the node type of s whose storage table is table.
func nodeByTable(s Schema, table string) (NodeType, bool) {
	for _, n := range s.Nodes {
		if n.StorageTable() == table {
			return n, true
		}
	}
	return NodeType{}, false
}

// edgeByTable returns the edge type of s whose storage table is table.
func edgeByTable(s Schema, table string) (EdgeType, bool) {
	for _, e := range s.Edges {
		if e.StorageTable() == table {
			return e, true
		}
	}
	return EdgeType{}, false
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
			adds = append(adds, Step{Op: AddProp, Type: typ, Prop: p.Name, Required: p.Required, Column: c, Default: p.Default})
			continue
		}
		if op.Name != p.Name {
			steps = append(steps, Step{Op: RenameProp, Type: typ, Prop: p.Name, From: op.Name, Column: c})
		}
		if op.Required && !p.Required {
			steps = append(steps, Step{Op: LoosenProp, Type: typ, Prop: p.Name})
		}
		if op.Kind != p.Kind && Widens(op.Kind, p.Kind) {
			steps = append(steps, Step{Op: WidenProp, Type: typ, Prop: p.Name, Column: c, OldKind: op.Kind, NewKind: p.Kind})
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
