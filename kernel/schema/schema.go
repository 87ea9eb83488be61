package schema

import (
	"fmt"
	"math"
	"sort"
)

// Kind is the type of one property. The zero Kind is invalid.
type Kind uint8

// The property kinds. Their text names are the identifiers of the text form.
const (
	// String is a UTF-8 string.
	String Kind = iota + 1
	// Int64 is a signed 64-bit integer.
	Int64
	// Float64 is an IEEE-754 double.
	Float64
	// Bool is a boolean.
	Bool
	// Timestamp is an instant with nanosecond precision, stored in UTC.
	Timestamp
	// Bytes is an opaque byte string.
	Bytes
	// Int32 is a signed 32-bit integer. A schema change may widen it to
	// Int64 (old fragments read their int32 values as int64).
	Int32

	lastKind = Int32
)

var kindNames = [...]string{String: "string", Int64: "int64", Float64: "float64", Bool: "bool", Timestamp: "timestamp", Bytes: "bytes", Int32: "int32"}

// String returns the text-form name of k ("string", "int64", ...), or
// "kind(N)" for an invalid kind.
func (k Kind) String() string {
	if k.Valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool { return k >= String && k <= lastKind }

// KindByName returns the kind whose text-form name is name.
func KindByName(name string) (Kind, bool) {
	for k := String; k <= lastKind; k++ {
		if kindNames[k] == name {
			return k, true
		}
	}
	return 0, false
}

// Property is one typed column of a node or edge type. A Required property
// must be present and non-null in every row; otherwise it is nullable.
type Property struct {
	Name     string
	Kind     Kind
	Required bool
	// Column is the property's storage column: the name of its Arrow field
	// in fragments. Empty means Name. It differs from Name only after a
	// schema change renamed the property (the column keeps its data) or
	// re-added a name whose old column is retired; see evolve.go.
	Column string
	// Default is the canonical literal (see ParseDefault) that rows
	// written before the property existed read instead of null: a
	// fragment without the property's storage column reads it in every
	// row. Empty means none (they read null). Writes never fill it in.
	// It is fixed when the property is added: a schema change cannot
	// change it (old rows would change value).
	Default string
}

// StorageColumn returns the storage column of p: Column, or Name when
// Column is empty.
func (p Property) StorageColumn() string {
	if p.Column != "" {
		return p.Column
	}
	return p.Name
}

// NodeType is a node table: a required string key `id` plus Props, in
// declaration order (which is the column order of its Arrow data).
type NodeType struct {
	Name  string
	Props []Property
	// Table is the type's storage table: the kernel table (and fragment
	// metadata) holding its rows, when it differs from Name. Empty means
	// Name. It differs only after a schema change renamed the type (the
	// table keeps its data) or added a name another type's table has.
	Table string
	// Retired lists, sorted, the storage columns of properties dropped by
	// a schema change: old fragments may still hold them, so no property
	// may take them again (a re-added name gets a fresh column).
	Retired []string
}

// Unbounded is the Max of a Cardinality without an upper bound.
const Unbounded uint32 = 0

// Cardinality bounds, per source node, the number of out-edges of one edge
// type. Min..Max is inclusive. The zero value is 0..unbounded, the default.
// A bounded Max is at least 1 and at least Min.
type Cardinality struct {
	Min uint32
	Max uint32 // Unbounded (0) means no upper bound
}

// Card returns the cardinality min..max; pass Unbounded as max for min..*.
func Card(min, max uint32) Cardinality { return Cardinality{Min: min, Max: max} }

// Bounded reports whether c has an upper bound.
func (c Cardinality) Bounded() bool { return c.Max != Unbounded }

// IsDefault reports whether c is 0..unbounded, which imposes nothing.
func (c Cardinality) IsDefault() bool { return c.Min == 0 && c.Max == Unbounded }

// Allows reports whether n out-edges satisfy c.
func (c Cardinality) Allows(n uint64) bool {
	if n < uint64(c.Min) {
		return false
	}
	return !c.Bounded() || n <= uint64(c.Max)
}

// String renders c as in the text form, e.g. "0..1" or "1..*".
func (c Cardinality) String() string {
	if !c.Bounded() {
		return fmt.Sprintf("%d..*", c.Min)
	}
	return fmt.Sprintf("%d..%d", c.Min, c.Max)
}

// EdgeType is an edge table: a required string key `id`, the required
// endpoint keys `from` (a From node id) and `to` (a To node id), then Props in
// declaration order, and a per-source out-edge cardinality.
type EdgeType struct {
	Name  string
	From  string
	To    string
	Props []Property
	Card  Cardinality
	// Retired: as NodeType.Retired.
	Retired []string
	// Table: as NodeType.Table.
	Table string
}

// StorageTable returns the storage table of n: Table, or Name when Table
// is empty.
func (n NodeType) StorageTable() string { return orName(n.Table, n.Name) }

// StorageTable returns the storage table of e: Table, or Name when Table
// is empty.
func (e EdgeType) StorageTable() string { return orName(e.Table, e.Name) }

func orName(table, name string) string {
	if table != "" {
		return table
	}
	return name
}

// TableOf returns the storage table of the type called typ, and whether
// s has such a type.
func (s *Schema) TableOf(typ string) (string, bool) {
	if n, ok := s.Node(typ); ok {
		return n.StorageTable(), true
	}
	if e, ok := s.Edge(typ); ok {
		return e.StorageTable(), true
	}
	return "", false
}

// TypeOfTable returns the name of the type whose storage table is table,
// and whether s has one (at most one: Validate).
func (s *Schema) TypeOfTable(table string) (string, bool) {
	for _, n := range s.Nodes {
		if n.StorageTable() == table {
			return n.Name, true
		}
	}
	for _, e := range s.Edges {
		if e.StorageTable() == table {
			return e.Name, true
		}
	}
	return "", false
}

// Schema is a set of node and edge types. Node and edge names share one
// namespace, because each type is one table. A Schema is plain data: build it
// with literals or Parse, then Validate (Contract validates too).
type Schema struct {
	Nodes []NodeType
	Edges []EdgeType
}

// Reserved column names. No property may use them, and no property or type
// name may start with '_' (reserved for system columns).
const (
	ColID   = "id"
	ColFrom = "from"
	ColTo   = "to"
)

// Limits on a schema. They bound parsing, validation and every per-type
// allocation downstream.
const (
	// MaxNameBytes bounds a type or property name.
	MaxNameBytes = 64
	// MaxTypes bounds the number of node plus edge types.
	MaxTypes = 1024
	// MaxPropsPerType bounds the properties of one type.
	MaxPropsPerType = 256
	// MaxCardinality bounds a @card bound.
	MaxCardinality = math.MaxInt32
	// MaxRetiredPerType bounds the retired storage columns of one type.
	MaxRetiredPerType = 1024
	// MaxTextBytes bounds the text form Parse accepts.
	MaxTextBytes = 1 << 20
)

var reservedProps = map[string]bool{ColID: true, ColFrom: true, ColTo: true}

var keywords = map[string]bool{"node": true, "edge": true}

// Node returns the node type called name.
func (s *Schema) Node(name string) (*NodeType, bool) {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i], true
		}
	}
	return nil, false
}

// Edge returns the edge type called name.
func (s *Schema) Edge(name string) (*EdgeType, bool) {
	for i := range s.Edges {
		if s.Edges[i].Name == name {
			return &s.Edges[i], true
		}
	}
	return nil, false
}

// EdgesTouching returns the names, sorted, of the edge types whose From or
// To is the node type called node.
func (s *Schema) EdgesTouching(node string) []string {
	var out []string
	for _, e := range s.Edges {
		if e.From == node || e.To == node {
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Normalized returns a deep copy of s with node and edge types sorted by
// name. Property order is kept: it is the column order. Two schemas that
// differ only in type order normalize to the same value and the same
// contract.
func (s Schema) Normalized() Schema {
	out := Schema{Nodes: make([]NodeType, len(s.Nodes)), Edges: make([]EdgeType, len(s.Edges))}
	for i, n := range s.Nodes {
		out.Nodes[i] = NodeType{Name: n.Name, Props: normalProps(n.Props), Retired: normalRetired(n.Retired), Table: normalTable(n.Table, n.Name)}
	}
	for i, e := range s.Edges {
		e.Props = normalProps(e.Props)
		e.Retired = normalRetired(e.Retired)
		e.Table = normalTable(e.Table, e.Name)
		out.Edges[i] = e
	}
	sort.SliceStable(out.Nodes, func(i, j int) bool { return out.Nodes[i].Name < out.Nodes[j].Name })
	sort.SliceStable(out.Edges, func(i, j int) bool { return out.Edges[i].Name < out.Edges[j].Name })
	return out
}

// normalProps copies props, clearing a Column equal to the name (the
// canonical form writes @col only when it differs).
func normalProps(props []Property) []Property {
	out := append([]Property(nil), props...)
	for i := range out {
		if out[i].Column == out[i].Name {
			out[i].Column = ""
		}
	}
	return out
}

// normalTable clears a Table equal to the name (the canonical form writes
// @table only when it differs).
func normalTable(table, name string) string {
	if table == name {
		return ""
	}
	return table
}

// normalRetired returns a sorted copy of retired, nil when empty.
func normalRetired(retired []string) []string {
	if len(retired) == 0 {
		return nil
	}
	out := append([]string(nil), retired...)
	sort.Strings(out)
	return out
}
