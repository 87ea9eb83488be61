package data

import (
	"context"
	"fmt"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Diffs across a schema change (docs/invariants.md 3b, S12). The changes
// between two snapshots under two schemas are expressed in the newer
// side's schema (to): its type and property names and kinds. A row of the
// older side is read as the schema change would leave it: a renamed
// property under its new name (a property's identity is its storage
// column, as in the schema merge), a dropped property absent, an added one
// null. So a consumer that applies the schema change (schema.Compare) to
// the older side's rows and then the reported row changes holds the newer
// side's rows exactly. A property that only the schema change touched is
// no row change: renaming, dropping or adding a column reports nothing.

// tableChangesAcross is TableChanges between snapshots of two schemas.
// typ is a type of to's schema; a type the older side's schema lacks has
// no rows there. A property of to whose column the older side's schema had
// retired (a diff backwards across a drop) makes the diff read every
// fragment of the type on both sides, since fragments both sides share
// read differently through the two layouts (cost O(rows of the type)).
func tableChangesAcross(ctx context.Context, from, to *Snapshot, typ, after string, fn func(RowChange) error) error {
	tt, err := to.cat.table(typ)
	if err != nil {
		return err
	}
	ft, ok, whole, err := olderLayout(from.cat.schema, tt)
	if err != nil {
		return fmt.Errorf("table changes of %s: %w", typ, err)
	}
	fs := sideLayout{t: ft}
	if ok {
		fs.pin = pinOf(from.ks, tt) // a type's storage table is its identity across schemas (a renamed type keeps it)
	}
	return tableChangesLayouts(ctx, fs, sideLayout{t: tt, pin: pinOf(to.ks, tt)}, from, to, after, whole, fn)
}

// DiffReadsWhole reports whether TableChanges(from, to, typ, ...) reads
// every fragment of typ, those both snapshots pin included: only across a
// schema change that brings back a column the older schema had retired.
// Otherwise a type both snapshots pin at one version has no changes.
func DiffReadsWhole(from, to *Snapshot, typ string) bool {
	if from.cat.contractID == to.cat.contractID {
		return false
	}
	tt, err := to.cat.table(typ)
	if err != nil {
		return false
	}
	_, _, whole, err := olderLayout(from.cat.schema, tt)
	return whole && err == nil
}

// olderLayout returns the layout the older side's fragments of tt's type
// are read through: tt's properties (every one nullable) whose storage
// column is live in older's schema of the type, every other column the
// fragments may hold retired (skipped). ok is false when older has no such
// type (its side is empty). whole is set when a property of tt has a
// column older retired. A type that is a node on one side and an edge on
// the other is refused (kernel.ErrInvalidArgument).
func olderLayout(older schema.Schema, tt *Table) (*Table, bool, bool, error) {
	props, retired, edge, ok := typeOf(older, tt.Storage)
	if !ok {
		return tt, false, false, nil
	}
	if edge != tt.Edge {
		return nil, false, false, fmt.Errorf("type %s is a node on one side and an edge on the other: %w", tt.Name, kernel.ErrInvalidArgument)
	}
	live := map[string]bool{}
	for _, p := range props {
		live[p.StorageColumn()] = true
	}
	if err := narrowed(props, tt); err != nil {
		return nil, false, false, err
	}
	wasRetired := map[string]bool{}
	for _, c := range retired {
		wasRetired[c] = true
	}
	skip := map[string]bool{}
	for c := range live { //detlint:ordered a set; sorted below
		skip[c] = true
	}
	for c := range wasRetired { //detlint:ordered a set; sorted below
		skip[c] = true
	}
	for c := range tt.retired { //detlint:ordered a set; sorted below
		skip[c] = true
	}
	var read []schema.Property
	whole := false
	for _, p := range tt.Props {
		c := p.StorageColumn()
		switch {
		case live[c]:
			p.Required = false
			read = append(read, p)
			delete(skip, c)
		case wasRetired[c]:
			whole = true
		case p.Default != "": // added since, with a default: the older rows read it, as the newer side reads them
			p.Required = false
			read = append(read, p)
		}
	}
	s := schema.Schema{}
	ret := sortedKeys(skip)
	if tt.Edge {
		s.Edges = []schema.EdgeType{{Name: tt.Name, From: tt.From, To: tt.To, Card: tt.Card, Props: read, Retired: ret, Table: tt.Storage}}
	} else {
		s.Nodes = []schema.NodeType{{Name: tt.Name, Props: read, Retired: ret, Table: tt.Storage}}
	}
	return newCatalog(s, "").tables[tt.Name], true, whole, nil
}

// narrowed refuses a diff whose older side holds a column of tt wider
// than tt does (a diff backwards across an int32 -> int64 widening: the
// newer side's int64 values have no int32 reading), with
// kernel.ErrInvalidArgument, before any fragment is misread as corrupt.
func narrowed(older []schema.Property, tt *Table) error {
	kinds := make(map[string]schema.Kind, len(older))
	for _, p := range older {
		kinds[p.StorageColumn()] = p.Kind
	}
	for _, p := range tt.Props {
		if k, ok := kinds[p.StorageColumn()]; ok && k != p.Kind && schema.Widens(p.Kind, k) {
			return fmt.Errorf("property %s.%s is %s on the other side, %s here (a diff backwards across a widening is not supported): %w",
				tt.Name, p.Name, k, p.Kind, kernel.ErrInvalidArgument)
		}
	}
	return nil
}

// typeOf returns the properties, retired columns and kind of the type of
// s whose storage table is table (its identity: a renamed type keeps it).
func typeOf(s schema.Schema, table string) (props []schema.Property, retired []string, edge, ok bool) {
	name, found := s.TypeOfTable(table)
	if !found {
		return nil, nil, false, false
	}
	if n, found := s.Node(name); found {
		return n.Props, n.Retired, false, true
	}
	e, _ := s.Edge(name)
	return e.Props, e.Retired, true, true
}
