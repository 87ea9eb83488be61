package schema

import (
	"errors"
	"fmt"
)

// ErrInvalidSchema is the kind of every error Validate, Parse and Decode
// return for a schema that breaks the rules.
var ErrInvalidSchema = errors.New("schema: invalid")

// ValidationError says which type (and property) of a Schema breaks which
// rule. It matches ErrInvalidSchema with errors.Is.
type ValidationError struct {
	Type string // offending type name ("" when the problem is schema-wide)
	Prop string // offending property name ("" when the problem is the type's)
	Msg  string

	// Position inside the Schema value, used by Parse to point at a line.
	edge      bool
	typeIndex int    // -1: schema-wide
	propIndex int    // -1: the type itself
	field     string // "from", "to", "card" or "" (the name)
}

// Error implements error.
func (e *ValidationError) Error() string {
	switch {
	case e.Type == "":
		return "schema: " + e.Msg
	case e.Prop == "":
		return fmt.Sprintf("schema: type %s: %s", e.Type, e.Msg)
	default:
		return fmt.Sprintf("schema: type %s: property %s: %s", e.Type, e.Prop, e.Msg)
	}
}

// Unwrap makes errors.Is(err, ErrInvalidSchema) hold.
func (e *ValidationError) Unwrap() error { return ErrInvalidSchema }

// Validate checks every rule of a schema and returns the first violation, in
// declaration order (nodes, then edges), as a *ValidationError:
//   - at most MaxTypes types, each with at most MaxPropsPerType properties;
//   - type and property names are identifiers (an ASCII letter, then
//     letters, digits or '_'; at most MaxNameBytes), not a keyword
//     ("node", "edge") for types;
//   - type names are unique across node and edge types; property names are
//     unique within their type and are not the reserved id, from, to;
//   - every property has a valid Kind, and a Default, if any, is a
//     canonical literal of it (ParseDefault);
//   - storage columns (Column, or the name) are identifiers, unique within
//     their type, not reserved, and none is retired; retired columns are
//     identifiers, unique, at most MaxRetiredPerType;
//   - storage tables (Table, or the name) are identifiers, one per type
//     (no two types share one);
//   - every edge's From and To name node types of this schema;
//   - cardinality: Max is Unbounded or 1..MaxCardinality with Min <= Max,
//     and Min <= MaxCardinality.
func (s *Schema) Validate() error {
	if n := len(s.Nodes) + len(s.Edges); n > MaxTypes {
		return &ValidationError{Msg: fmt.Sprintf("%d types, more than the limit %d", n, MaxTypes), typeIndex: -1, propIndex: -1}
	}
	seen := make(map[string]bool, len(s.Nodes)+len(s.Edges))
	for i, n := range s.Nodes {
		if err := checkType(n.Name, n.Props, seen); err != nil {
			return err.at(false, i)
		}
		if err := checkColumns(n.Name, n.Props, n.Retired); err != nil {
			return err.at(false, i)
		}
	}
	for i, e := range s.Edges {
		if err := checkType(e.Name, e.Props, seen); err != nil {
			return err.at(true, i)
		}
		if err := checkColumns(e.Name, e.Props, e.Retired); err != nil {
			return err.at(true, i)
		}
		if err := s.checkEdge(e); err != nil {
			return err.at(true, i)
		}
	}
	if err := s.checkTables(); err != nil {
		return err
	}
	return nil
}

func (e *ValidationError) at(edge bool, i int) *ValidationError {
	e.edge, e.typeIndex = edge, i
	return e
}

func checkType(name string, props []Property, seen map[string]bool) *ValidationError {
	if msg := identProblem(name); msg != "" {
		return &ValidationError{Type: name, Msg: "name " + msg, propIndex: -1}
	}
	if keywords[name] {
		return &ValidationError{Type: name, Msg: "name is a reserved keyword", propIndex: -1}
	}
	if seen[name] {
		return &ValidationError{Type: name, Msg: "duplicate type name (node and edge types share one namespace)", propIndex: -1}
	}
	seen[name] = true
	if len(props) > MaxPropsPerType {
		return &ValidationError{Type: name, Msg: fmt.Sprintf("%d properties, more than the limit %d", len(props), MaxPropsPerType), propIndex: -1}
	}
	names := make(map[string]bool, len(props))
	for j, p := range props {
		if msg := propProblem(p, names); msg != "" {
			return &ValidationError{Type: name, Prop: p.Name, Msg: msg, propIndex: j}
		}
		names[p.Name] = true
	}
	return nil
}

func propProblem(p Property, names map[string]bool) string {
	switch {
	case identProblem(p.Name) != "":
		return "name " + identProblem(p.Name)
	case reservedProps[p.Name]:
		return "name is reserved (id, from and to are system columns)"
	case names[p.Name]:
		return "duplicate property name"
	case !p.Kind.Valid():
		return fmt.Sprintf("invalid kind %s", p.Kind)
	}
	return defaultProblem(p)
}

func (s *Schema) checkEdge(e EdgeType) *ValidationError {
	for _, end := range [2]struct{ role, name string }{{"from", e.From}, {"to", e.To}} {
		if _, ok := s.Node(end.name); !ok {
			return &ValidationError{Type: e.Name, Msg: fmt.Sprintf("%s type %q is not a node type of this schema", end.role, end.name), propIndex: -1, field: end.role}
		}
	}
	c := e.Card
	switch {
	case c.Min > MaxCardinality || c.Max > MaxCardinality:
		return &ValidationError{Type: e.Name, Msg: fmt.Sprintf("cardinality %s exceeds the limit %d", c, MaxCardinality), propIndex: -1, field: "card"}
	case c.Bounded() && c.Min > c.Max:
		return &ValidationError{Type: e.Name, Msg: fmt.Sprintf("cardinality %s has min > max", c), propIndex: -1, field: "card"}
	}
	return nil
}

// identProblem returns why name is not an identifier, or "".
func identProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxNameBytes:
		return fmt.Sprintf("is longer than %d bytes", MaxNameBytes)
	case !isLetter(name[0]):
		return "must start with an ASCII letter"
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !isDigit(c) && c != '_' {
			return fmt.Sprintf("has invalid character %q (want letters, digits, '_')", c)
		}
	}
	return ""
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// checkColumns checks a type's storage columns and retired columns.
func checkColumns(name string, props []Property, retired []string) *ValidationError {
	if len(retired) > MaxRetiredPerType {
		return &ValidationError{Type: name, Msg: fmt.Sprintf("%d retired columns, more than the limit %d", len(retired), MaxRetiredPerType), propIndex: -1}
	}
	gone := make(map[string]bool, len(retired))
	for _, r := range retired {
		if msg := identProblem(r); msg != "" || reservedProps[r] || gone[r] {
			return &ValidationError{Type: name, Msg: fmt.Sprintf("retired column %q is not a unique, unreserved identifier", r), propIndex: -1}
		}
		gone[r] = true
	}
	used := make(map[string]bool, len(props))
	for j, p := range props {
		c := p.StorageColumn()
		switch {
		case identProblem(c) != "" || reservedProps[c]:
			return &ValidationError{Type: name, Prop: p.Name, Msg: fmt.Sprintf("storage column %q is not an unreserved identifier", c), propIndex: j}
		case used[c]:
			return &ValidationError{Type: name, Prop: p.Name, Msg: fmt.Sprintf("storage column %q is used twice", c), propIndex: j}
		case gone[c]:
			return &ValidationError{Type: name, Prop: p.Name, Msg: fmt.Sprintf("storage column %q is retired (its old data would come back)", c), propIndex: j}
		}
		used[c] = true
	}
	return nil
}

// checkTables checks the storage tables: identifiers, unique across the
// schema's types (two types never share a kernel table).
func (s *Schema) checkTables() *ValidationError {
	owner := make(map[string]string, len(s.Nodes)+len(s.Edges))
	check := func(edge bool, i int, name, table string) *ValidationError {
		if msg := identProblem(table); msg != "" {
			return (&ValidationError{Type: name, Msg: "storage table " + msg, propIndex: -1}).at(edge, i)
		}
		if o, dup := owner[table]; dup {
			return (&ValidationError{Type: name, Msg: fmt.Sprintf("storage table %q is type %s's too", table, o), propIndex: -1}).at(edge, i)
		}
		owner[table] = name
		return nil
	}
	for i, n := range s.Nodes {
		if err := check(false, i, n.Name, n.StorageTable()); err != nil {
			return err
		}
	}
	for i, e := range s.Edges {
		if err := check(true, i, e.Name, e.StorageTable()); err != nil {
			return err
		}
	}
	return nil
}
