package merge

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// The three-way schema merge (docs/invariants.md 3b, S10). A merge of
// branches whose schemas differ first merges the schemas, type by type and
// property by property, against the merge base's schema; then the rows are
// merged under the result.
//
// A type's identity is its storage table (schema.NodeType.Table; the name
// by default): a type rename keeps it, so types are matched by table, the
// name merges three-way (renamed on both sides to two names is
// DivergentTypeName) and edge endpoints are compared by their node types'
// tables. A property's identity is its storage column (schema.Property.Column):
// a rename keeps it, a drop retires it, an add takes a column no fragment
// of the type has held on that side. Columns are compared, never names,
// so a rename on one side and a value change on the other merge, and a
// drop-and-re-add is not mistaken for a kept property. The merged schema
// keeps every column of both sides (live or retired), so it reads the
// fragments of the base, the source and the target alike, and a later
// merge of the same branches sees the same identities.
//
//	base | source | target      | merged
//	type absent | added | absent | the source's type (and symmetrically)
//	absent | added | added the same | it; different definitions: DivergentType
//	present | dropped | unchanged | dropped if the target has no rows of it, else DropVsRows
//	present | dropped | changed   | DropVsChange
//	present | present | present   | @card three-way (DivergentCard); properties:
//	  kept on both: the name three-way (DivergentProperty when renamed to two names),
//	    nullable if either side loosened it
//	  dropped on one side, unchanged on the other: dropped; changed: DropVsChange
//	  added on one side: added (RequiredVsRows when required and the other side has rows)
//	  added on both in one column with one definition: it; otherwise ColumnClash
//
// Two merged properties of one name are DivergentProperty; a merged schema
// that does not validate (an edge type left without its endpoint type) is
// InvalidSchema. Schema conflicts are never resolved by a Policy.

// SchemaRule says why a schema merge conflicts (Conflict.Rule of a
// SchemaConflict).
type SchemaRule uint8

// The schema conflict rules. The zero SchemaRule marks a row conflict.
const (
	// DivergentType: a type added on both sides with different
	// definitions, or of different kinds or endpoints.
	DivergentType SchemaRule = iota + 1
	// DropVsChange: a type or property dropped on one side and changed
	// (renamed, loosened, re-bounded, its properties changed) on the other.
	DropVsChange
	// DropVsRows: a type dropped on one side while the other side's head
	// holds rows of it.
	DropVsRows
	// DivergentProperty: a property renamed on both sides to different
	// names, or two merged properties of one name.
	DivergentProperty
	// RequiredVsRows: a required property added on one side while the
	// other side's head holds rows of the type (they have no value).
	RequiredVsRows
	// DivergentCard: @card changed on both sides to different bounds.
	DivergentCard
	// ColumnClash: both sides gave one storage column to different
	// properties (or one side retired a column the other added).
	ColumnClash
	// InvalidSchema: the merged schema does not validate.
	InvalidSchema
	// DivergentTypeName: a type renamed on both sides to different names,
	// or two merged types of one name.
	DivergentTypeName
)

var ruleNames = [...]string{DivergentType: "DivergentType", DropVsChange: "DropVsChange", DropVsRows: "DropVsRows",
	DivergentProperty: "DivergentProperty", RequiredVsRows: "RequiredVsRows", DivergentCard: "DivergentCard",
	ColumnClash: "ColumnClash", InvalidSchema: "InvalidSchema", DivergentTypeName: "DivergentTypeName"}

// String names the rule, e.g. "DropVsRows".
func (r SchemaRule) String() string {
	if r >= DivergentType && r <= DivergentTypeName {
		return ruleNames[r]
	}
	return fmt.Sprintf("SchemaRule(%d)", uint8(r))
}

// SchemaInput is what MergeSchemas decides on: the three schemas (with
// their storage columns and tables) and the rows of each type at each
// head, by storage table (a type absent from a map has none).
type SchemaInput struct {
	Base, Source, Target   schema.Schema
	SourceRows, TargetRows map[string]uint64
}

// SchemaMerge is the outcome of MergeSchemas.
type SchemaMerge struct {
	// Schema is the merged schema, with storage columns and retired
	// columns: the target's when the source did not change the base's
	// schema, the source's when the target did not; meaningless when
	// Conflicts is not empty.
	Schema schema.Schema
	// Conflicts are the schema conflicts (Kind SchemaConflict), sorted.
	Conflicts []Conflict
	// Comparable, when Conflicts is not empty, holds the merged types no
	// conflict names (each with every column of every side, live or
	// retired): their rows can still be compared under the row rule, so
	// their row conflicts are listed beside the schema conflicts.
	Comparable schema.Schema
}

// MergeSchemas merges the source's and the target's schema changes since
// the base (the table above). It is a pure function of its input.
func MergeSchemas(in SchemaInput) SchemaMerge {
	m := schemaMerger{in: in, names: map[string]string{}}
	for _, table := range tableNames(in.Base, in.Source, in.Target) {
		m.mergeType(table)
	}
	m.endpoints()
	if len(m.conflicts) > 0 {
		SortConflicts(m.conflicts)
		return SchemaMerge{Conflicts: m.conflicts, Comparable: comparableTypes(m.out, m.conflicts)}
	}
	switch {
	case sameSchema(in.Source, in.Base):
		return SchemaMerge{Schema: in.Target}
	case sameSchema(in.Target, in.Base):
		return SchemaMerge{Schema: in.Source}
	}
	out := m.out.Normalized()
	if err := out.Validate(); err != nil {
		return SchemaMerge{Conflicts: []Conflict{schemaConflict(InvalidSchema, "", "", fmt.Sprintf("the merged schema is invalid: %v", err))}}
	}
	return SchemaMerge{Schema: out}
}

// schemaConflict builds a schema conflict.
func schemaConflict(rule SchemaRule, typ, prop, msg string) Conflict {
	return Conflict{Kind: SchemaConflict, Rule: rule, Type: typ, Property: prop, Message: msg}
}

func sameSchema(a, b schema.Schema) bool { return reflect.DeepEqual(a.Normalized(), b.Normalized()) }

// tdef is a node or edge type in one form. from and to are the storage
// tables of an edge's endpoint node types (a node rename does not change
// its edges).
type tdef struct {
	name     string
	edge     bool
	from, to string
	card     schema.Cardinality
	props    []schema.Property
	retired  []string
}

// lookup returns the type of s whose storage table is table.
func lookup(s schema.Schema, table string) (tdef, bool) {
	name, ok := s.TypeOfTable(table)
	if !ok {
		return tdef{}, false
	}
	if n, ok := s.Node(name); ok {
		return tdef{name: name, props: n.Props, retired: n.Retired}, true
	}
	e, _ := s.Edge(name)
	from, _ := s.TableOf(e.From)
	to, _ := s.TableOf(e.To)
	return tdef{name: name, edge: true, from: from, to: to, card: e.Card, props: e.Props, retired: e.Retired}, true
}

// canon is d with every property's column explicit and retired sorted,
// for comparisons.
func (d tdef) canon() tdef {
	props := make([]schema.Property, len(d.props))
	for i, p := range d.props {
		p.Column = p.StorageColumn()
		props[i] = p
	}
	d.props = props
	d.retired = append([]string{}, d.retired...)
	sort.Strings(d.retired)
	return d
}

func sameDef(a, b tdef) bool { return reflect.DeepEqual(a.canon(), b.canon()) }

type schemaMerger struct {
	in        SchemaInput
	out       schema.Schema
	names     map[string]string // storage table -> merged type name
	conflicts []Conflict
}

func (m *schemaMerger) conflict(rule SchemaRule, typ, prop, format string, args ...any) {
	m.conflicts = append(m.conflicts, schemaConflict(rule, typ, prop, fmt.Sprintf(format, args...)))
}

// emit adds the merged type of storage table; an edge's endpoints are
// tables until endpoints names them.
func (m *schemaMerger) emit(table string, d tdef) {
	if prev, dup := typeOfName(m.names, d.name); dup {
		m.conflict(DivergentTypeName, d.name, "", "two merged types are named %s (storage tables %s and %s)", d.name, prev, table)
	}
	m.names[table] = d.name
	t := ""
	if table != d.name {
		t = table
	}
	if d.edge {
		m.out.Edges = append(m.out.Edges, schema.EdgeType{Name: d.name, From: d.from, To: d.to, Card: d.card, Props: d.props, Retired: d.retired, Table: t})
		return
	}
	m.out.Nodes = append(m.out.Nodes, schema.NodeType{Name: d.name, Props: d.props, Retired: d.retired, Table: t})
}

// typeOfName returns the storage table already merged under name.
func typeOfName(names map[string]string, name string) (string, bool) {
	for table, n := range names { //detlint:ordered at most one table has a name (else a conflict is already listed)
		if n == name {
			return table, true
		}
	}
	return "", false
}

// endpoints names each merged edge's endpoints by their node types'
// merged names (a table no merged type has stays: the result then does not
// validate, InvalidSchema).
func (m *schemaMerger) endpoints() {
	for i := range m.out.Edges {
		e := &m.out.Edges[i]
		if n, ok := m.names[e.From]; ok {
			e.From = n
		}
		if n, ok := m.names[e.To]; ok {
			e.To = n
		}
	}
}

// mergeType applies the type rows of the table to the type whose storage
// table is table.
func (m *schemaMerger) mergeType(table string) {
	b, bOK := lookup(m.in.Base, table)
	s, sOK := lookup(m.in.Source, table)
	t, tOK := lookup(m.in.Target, table)
	switch {
	case !bOK && sOK && tOK:
		if !sameDef(s, t) {
			m.conflict(DivergentType, min(s.name, t.name), "", "added on both sides with different definitions")
			return
		}
		m.emit(table, t)
	case !bOK && sOK:
		m.emit(table, s)
	case !bOK && tOK:
		m.emit(table, t)
	case !bOK, !sOK && !tOK:
	case !sOK:
		m.dropType(b.name, "source", "target", b, t, m.in.TargetRows[table])
	case !tOK:
		m.dropType(b.name, "target", "source", b, s, m.in.SourceRows[table])
	default:
		m.mergeKept(table, b, s, t)
	}
}

// dropType decides a type dropped on one side (dropper) and kept on the
// other (keeper, holding rows of it).
func (m *schemaMerger) dropType(name, dropper, keeper string, b, kept tdef, rows uint64) {
	switch {
	case !sameDef(b, kept):
		m.conflict(DropVsChange, name, "", "dropped on the %s, its definition changed on the %s", dropper, keeper)
	case rows > 0:
		m.conflict(DropVsRows, name, "", "dropped on the %s, the %s holds %d rows of it", dropper, keeper, rows)
	}
}

// mergeKept merges a type present on all three sides (by storage table):
// its name three-way, kind and endpoints unchanged, @card three-way, then
// its properties.
func (m *schemaMerger) mergeKept(table string, b, s, t tdef) {
	name, ok := threeWay(b.name, s.name, t.name)
	if !ok {
		m.conflict(DivergentTypeName, b.name, "", "type %s renamed on both sides: source %s, target %s", b.name, s.name, t.name)
		return
	}
	if b.edge != s.edge || b.edge != t.edge || s.from != t.from || s.to != t.to || b.from != t.from || b.to != t.to {
		m.conflict(DivergentType, name, "", "its kind or endpoints differ between the sides")
		return
	}
	out := tdef{name: name, edge: t.edge, from: t.from, to: t.to}
	if out.card, ok = threeWay(b.card, s.card, t.card); !ok {
		m.conflict(DivergentCard, name, "", "@card changed on both sides: base %s, source %s, target %s", b.card, s.card, t.card)
	}
	n := len(m.conflicts)
	pm := propMerge{m: m, typ: name, table: table, b: b.canon(), s: s.canon(), t: t.canon()}
	out.props, out.retired = pm.merge()
	if len(m.conflicts) == n {
		m.uniqueNames(name, out.props)
	}
	m.emit(table, out)
}

func (m *schemaMerger) uniqueNames(typ string, props []schema.Property) {
	seen := map[string]bool{}
	for _, p := range props {
		if seen[p.Name] {
			m.conflict(DivergentProperty, typ, p.Name, "two merged properties are named %s (a rename on one side, an add on the other)", p.Name)
		}
		seen[p.Name] = true
	}
}

func threeWay[T comparable](b, s, t T) (T, bool) {
	switch {
	case s == t, s == b:
		return t, true
	case t == b:
		return s, true
	}
	return t, false
}

// propMerge merges the properties of one type kept on all sides; every
// Column is explicit (canon).
type propMerge struct {
	m       *schemaMerger
	typ     string // the merged type name (conflicts name it)
	table   string // its storage table (the rows maps are by it)
	b, s, t tdef
}

func byColumn(props []schema.Property) map[string]schema.Property {
	out := make(map[string]schema.Property, len(props))
	for _, p := range props {
		out[p.Column] = p
	}
	return out
}

func setOf(xs []string) map[string]bool {
	out := make(map[string]bool, len(xs))
	for _, x := range xs {
		out[x] = true
	}
	return out
}

// merge returns the merged properties (the target's order, then the
// source's additions in its order) and retired columns.
func (pm propMerge) merge() ([]schema.Property, []string) {
	bc, sc, tc := byColumn(pm.b.props), byColumn(pm.s.props), byColumn(pm.t.props)
	bRet, sRet, tRet := setOf(pm.b.retired), setOf(pm.s.retired), setOf(pm.t.retired)
	retired := setOf(append(append(append([]string{}, pm.b.retired...), pm.s.retired...), pm.t.retired...))
	var out []schema.Property
	for _, tp := range pm.t.props {
		c := tp.Column
		bp, inBase := bc[c]
		sp, onSource := sc[c]
		switch {
		case inBase && !onSource:
			if tp != bp {
				pm.m.conflict(DropVsChange, pm.typ, bp.Name, "dropped on the source, changed on the target")
			}
			retired[c] = true
		case inBase:
			if p, ok := pm.kept(bp, sp, tp); ok {
				out = append(out, p)
			}
		case bRet[c]:
			pm.m.conflict(ColumnClash, pm.typ, tp.Name, "the target took storage column %s, retired at the base", c)
		case onSource:
			if sp != tp {
				pm.m.conflict(ColumnClash, pm.typ, tp.Name, "added on both sides in storage column %s with different definitions (%s, %s)", c, sp.Name, tp.Name)
			}
			out = append(out, tp)
		case sRet[c]:
			pm.m.conflict(ColumnClash, pm.typ, tp.Name, "added on the target in storage column %s, which the source used and retired", c)
		default:
			if tp.Required && tp.Default == "" && pm.m.in.SourceRows[pm.table] > 0 {
				pm.m.conflict(RequiredVsRows, pm.typ, tp.Name, "required property added on the target, the source holds %d rows of the type", pm.m.in.SourceRows[pm.table])
			}
			out = append(out, tp)
		}
	}
	for _, bp := range pm.b.props { // dropped on the target
		if _, onTarget := tc[bp.Column]; onTarget {
			continue
		}
		if sp, onSource := sc[bp.Column]; onSource && sp != bp {
			pm.m.conflict(DropVsChange, pm.typ, bp.Name, "dropped on the target, changed on the source")
		}
		retired[bp.Column] = true
	}
	for _, sp := range pm.s.props { // added on the source only
		c := sp.Column
		if _, ok := bc[c]; ok {
			continue
		}
		if _, ok := tc[c]; ok {
			continue
		}
		switch {
		case bRet[c]:
			pm.m.conflict(ColumnClash, pm.typ, sp.Name, "the source took storage column %s, retired at the base", c)
		case tRet[c]:
			pm.m.conflict(ColumnClash, pm.typ, sp.Name, "added on the source in storage column %s, which the target used and retired", c)
		case sp.Required && sp.Default == "" && pm.m.in.TargetRows[pm.table] > 0:
			pm.m.conflict(RequiredVsRows, pm.typ, sp.Name, "required property added on the source, the target holds %d rows of the type", pm.m.in.TargetRows[pm.table])
		}
		out = append(out, sp)
	}
	for _, p := range out {
		delete(retired, p.Column)
	}
	var ret []string
	for c := range retired { //detlint:ordered collects keys that are sorted next
		ret = append(ret, c)
	}
	sort.Strings(ret)
	return out, ret
}

// kept merges a base property present on both sides: the name three-way,
// the kind three-way (a side's lossless widening, schema.Widens, is
// taken), nullable if either side made it so.
func (pm propMerge) kept(bp, sp, tp schema.Property) (schema.Property, bool) {
	kind, ok := mergeKind(bp.Kind, sp.Kind, tp.Kind)
	if !ok {
		pm.m.conflict(DivergentProperty, pm.typ, bp.Name, "its kind differs between the sides")
		return tp, false
	}
	tp.Kind = kind
	name, ok := threeWay(bp.Name, sp.Name, tp.Name)
	if !ok {
		pm.m.conflict(DivergentProperty, pm.typ, bp.Name, "renamed on both sides: source %s, target %s", sp.Name, tp.Name)
		return tp, false
	}
	tp.Name, tp.Required = name, sp.Required && tp.Required
	return tp, true
}

// tableNames is the sorted union of the storage tables of the schemas.
func tableNames(ss ...schema.Schema) []string {
	set := map[string]bool{}
	for _, s := range ss {
		for _, n := range s.Nodes {
			set[n.StorageTable()] = true
		}
		for _, e := range s.Edges {
			set[e.StorageTable()] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set { //detlint:ordered collects keys that are sorted next
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mergeKind merges a property's kind three-way: unchanged on a side takes
// the other's, and a changed side must have widened the base (the only
// kind change a schema change makes).
func mergeKind(b, s, t schema.Kind) (schema.Kind, bool) {
	switch {
	case s == t:
		return t, s == b || schema.Widens(b, s)
	case s == b:
		return t, schema.Widens(b, t)
	case t == b:
		return s, schema.Widens(b, s)
	}
	return 0, false
}
