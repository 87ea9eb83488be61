package data

import (
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Fixed column positions. A node table's columns are id, then its
// properties; an edge table's are id, from, to, then its properties.
const (
	colID   = 0
	colFrom = 1
	colTo   = 2
)

// TimestampType is the Arrow type of every timestamp property: nanoseconds
// since the Unix epoch, UTC.
var TimestampType = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

// Table is the storage view of one node or edge type: its type name, its
// kernel table (the storage table), its Arrow schema and its property
// layout. It is derived from a validated schema and immutable.
type Table struct {
	Name string // the type name (what readers, writers and errors speak)
	// Storage is the kernel table holding the type's rows (schema
	// @table; the type name unless a schema change renamed the type):
	// pins, writes, expectations, fragment keys and metadata, adjacency
	// and id chunks all use it.
	Storage string
	Edge    bool
	From    string // edge tables only: the source node type (its name)
	To      string // edge tables only: the target node type (its name)
	Props   []schema.Property
	Card    schema.Cardinality // edge tables only

	arrow     *arrow.Schema
	propIndex map[string]int // property name -> column index

	// Storage layout (evolve_layout.go): the schema of the fragments
	// (storage column names), storage name -> column index, the retired
	// columns old fragments may hold, and the identity of the layout in
	// the fragment cache.
	disk      *arrow.Schema
	diskIndex map[string]int
	retired   map[string]bool
	cacheID   string
}

// Schema returns the Arrow schema of the table's fragments and scans.
func (t *Table) Schema() *arrow.Schema { return t.arrow }

// firstProp is the column index of the first property.
func (t *Table) firstProp() int {
	if t.Edge {
		return 3
	}
	return 1
}

// column returns the column index of a property or key column name.
func (t *Table) column(name string) (int, bool) {
	i, ok := t.propIndex[name]
	return i, ok
}

// catalog is the set of tables of one schema, built once per transaction
// or snapshot from the decoded contract.
type catalog struct {
	schema     schema.Schema
	contractID string
	tables     map[string]*Table // by type name
	byStorage  map[string]*Table // by storage table
	names      []string          // sorted type names
}

func newCatalog(s schema.Schema, contractID string) *catalog {
	c := &catalog{schema: s, contractID: contractID, tables: map[string]*Table{}, byStorage: map[string]*Table{}}
	for _, n := range s.Nodes {
		c.add(&Table{Name: n.Name, Storage: n.StorageTable(), Props: n.Props})
	}
	for _, e := range s.Edges {
		c.add(&Table{Name: e.Name, Storage: e.StorageTable(), Edge: true, From: e.From, To: e.To, Props: e.Props, Card: e.Card})
	}
	sort.Strings(c.names)
	return c
}

func (c *catalog) add(t *Table) {
	fields := []arrow.Field{{Name: schema.ColID, Type: arrow.BinaryTypes.String}}
	if t.Edge {
		fields = append(fields,
			arrow.Field{Name: schema.ColFrom, Type: arrow.BinaryTypes.String},
			arrow.Field{Name: schema.ColTo, Type: arrow.BinaryTypes.String})
	}
	for _, p := range t.Props {
		fields = append(fields, arrow.Field{Name: p.Name, Type: arrowType(p.Kind), Nullable: !p.Required})
	}
	md := arrow.NewMetadata([]string{metaFormat, metaTable}, []string{fragmentFormatV1, t.Storage})
	t.arrow = arrow.NewSchema(fields, &md)
	t.propIndex = make(map[string]int, len(fields))
	for i, f := range fields {
		t.propIndex[f.Name] = i
	}
	t.layout(retiredOf(c.schema, t.Name))
	c.tables[t.Name] = t
	c.byStorage[t.Storage] = t
	c.names = append(c.names, t.Name)
}

// store returns the storage table of type name (the name itself when the
// catalog has no such type: a pin of it is then absent).
func (c *catalog) store(name string) string {
	if t, ok := c.tables[name]; ok {
		return t.Storage
	}
	return name
}

// table returns the table of a type name, or an ErrUnknownType rejection.
func (c *catalog) table(name string) (*Table, error) {
	t, ok := c.tables[name]
	if !ok {
		return nil, unknownType(name)
	}
	return t, nil
}

// edgesTouching returns the edge tables, sorted by name, whose from or to
// type is node.
func (c *catalog) edgesTouching(node string) []*Table {
	var out []*Table
	for _, name := range c.schema.EdgesTouching(node) {
		out = append(out, c.tables[name])
	}
	return out
}

func arrowType(k schema.Kind) arrow.DataType {
	switch k {
	case schema.String:
		return arrow.BinaryTypes.String
	case schema.Int64:
		return arrow.PrimitiveTypes.Int64
	case schema.Int32:
		return arrow.PrimitiveTypes.Int32
	case schema.Float64:
		return arrow.PrimitiveTypes.Float64
	case schema.Bool:
		return arrow.FixedWidthTypes.Boolean
	case schema.Timestamp:
		return TimestampType
	case schema.Bytes:
		return arrow.BinaryTypes.Binary
	}
	panic(fmt.Sprintf("data: schema kind %v has no Arrow type (schema not validated?)", k))
}
