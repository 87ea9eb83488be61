// Package datamodel is the reference model of the data plane's contents: the
// rows of every node and edge type, what a transaction's operations do to
// them, and the graph reads (Get, GetMany, Out, In, degrees, a filtered
// scan) evaluated naively over those rows. The simulator rebuilds, from the
// operations each commit of a chain was staged with, the state the graph
// must hold at any commit, and compares every read it made with this
// model's answer (sim/check, "reads-vs-model").
//
// It is written independently of kernel/data: no fragments, no index, no
// statistics, only maps of rows. The one thing it shares is the predicate
// evaluator of kernel/data/pred (pure, tested on its own), so a filtered
// scan is compared with the same semantics of the predicate language.
//
// States are immutable values: Apply returns a new state and leaves its
// receiver as it was, so a checker can keep the state of every commit.
// The package does no I/O, reads no clock and never lets map order reach an
// answer (every answer is sorted by id).
package datamodel

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/graphkernel/graphkernel/kernel/data/pred"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Row is one node or edge: its id, for an edge its endpoints, and its
// properties (a nil value is a null, the same as an absent key).
type Row struct {
	ID, From, To string
	Props        map[string]any
}

// Kind is what an operation does.
type Kind uint8

// The operations, with the data plane's semantics.
const (
	// Insert adds a row; its id must not exist.
	Insert Kind = iota + 1
	// Upsert adds a row or replaces the row with the same id.
	Upsert
	// Update replaces an existing row whole; the id must exist.
	Update
	// Delete removes an existing row; a node must have no edges left.
	Delete
	// DeleteCascade removes an existing row and every edge of every type
	// that starts or ends at it.
	DeleteCascade
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Insert:
		return "insert"
	case Upsert:
		return "upsert"
	case Update:
		return "update"
	case Delete:
		return "delete"
	case DeleteCascade:
		return "delete-cascade"
	}
	return "invalid-kind"
}

// Op is one staged operation: Kind on a row of Type (deletes use Row.ID).
type Op struct {
	Kind Kind
	Type string
	Row  Row
}

// String renders the op on one line.
func (o Op) String() string { return fmt.Sprintf("%s %s %s", o.Kind, o.Type, RowString(o.Row)) }

// ErrRejected is the error of an Apply whose operations the data plane's
// rules refuse: the model cannot say what such a commit holds.
var ErrRejected = errors.New("datamodel: transaction rejected")

// State is the content of a graph at one commit: the rows of every type.
type State struct {
	s      *schema.Schema
	tables map[string]map[string]Row // type -> id -> row
}

// New returns the empty state of a graph with schema s (s is not copied
// and must not change).
func New(s *schema.Schema) *State {
	return &State{s: s, tables: map[string]map[string]Row{}}
}

// Apply returns the state after one transaction of ops, applied in order
// on st as one unit, or an error matching ErrRejected when a rule refuses
// it: an unknown type, an Insert of an existing id, an Update or Delete of
// a missing id, and, checked on the result (so a plain Delete of a node
// that keeps edges is refused), an edge whose endpoint is missing or a source over its
// type's @card maximum. st is never changed.
func (st *State) Apply(ops []Op) (*State, error) {
	next := st.clone()
	for i, op := range ops {
		if err := next.apply(op); err != nil {
			return nil, fmt.Errorf("%w: op %d (%v): %v", ErrRejected, i, op, err)
		}
	}
	if err := next.checkEdges(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRejected, err)
	}
	return next, nil
}

func (st *State) clone() *State {
	out := &State{s: st.s, tables: make(map[string]map[string]Row, len(st.tables))}
	for typ, rows := range st.tables { //detlint:ordered copies a map
		c := make(map[string]Row, len(rows))
		for id, r := range rows { //detlint:ordered copies a map
			c[id] = r
		}
		out.tables[typ] = c
	}
	return out
}

func (st *State) table(typ string) map[string]Row {
	t := st.tables[typ]
	if t == nil {
		t = map[string]Row{}
		st.tables[typ] = t
	}
	return t
}

func (st *State) known(typ string) bool {
	_, node := st.s.Node(typ)
	_, edge := st.s.Edge(typ)
	return node || edge
}

func (st *State) apply(op Op) error {
	if !st.known(op.Type) {
		return fmt.Errorf("unknown type %q", op.Type)
	}
	t := st.table(op.Type)
	_, exists := t[op.Row.ID]
	switch op.Kind {
	case Insert:
		if exists {
			return errors.New("id exists")
		}
		t[op.Row.ID] = copyRow(op.Row)
	case Upsert:
		t[op.Row.ID] = copyRow(op.Row)
	case Update:
		if !exists {
			return errors.New("id missing")
		}
		t[op.Row.ID] = copyRow(op.Row)
	case Delete, DeleteCascade:
		if !exists {
			return errors.New("id missing")
		}
		delete(t, op.Row.ID)
		if _, node := st.s.Node(op.Type); !node {
			return nil
		}
		if op.Kind == DeleteCascade {
			st.dropEdges(op.Type, op.Row.ID)
		}
	default:
		return fmt.Errorf("invalid kind %d", op.Kind)
	}
	return nil
}

// dropEdges removes the edges of node id of node type typ (a cascade). A
// plain delete removes none: an edge it leaves is refused by checkEdges as
// dangling once every operation applied (a cascade later in the same
// transaction may remove it).
func (st *State) dropEdges(typ, id string) {
	for _, et := range st.s.EdgesTouching(typ) {
		e, _ := st.s.Edge(et)
		for _, r := range st.Rows(et) {
			if (e.From == typ && r.From == id) || (e.To == typ && r.To == id) {
				delete(st.tables[et], r.ID)
			}
		}
	}
}

// checkEdges checks every edge's endpoints and every bounded @card.
func (st *State) checkEdges() error {
	for _, e := range st.s.Edges {
		out := map[string]int{}
		for _, r := range st.Rows(e.Name) {
			if _, ok := st.Get(e.From, r.From); !ok {
				return fmt.Errorf("%s edge %s: from %s %s is missing", e.Name, r.ID, e.From, r.From)
			}
			if _, ok := st.Get(e.To, r.To); !ok {
				return fmt.Errorf("%s edge %s: to %s %s is missing", e.Name, r.ID, e.To, r.To)
			}
			out[r.From]++
			if e.Card.Bounded() && out[r.From] > int(e.Card.Max) {
				return fmt.Errorf("%s: %s has %d out-edges, @card %v", e.Name, r.From, out[r.From], e.Card)
			}
		}
	}
	return nil
}

func copyRow(r Row) Row {
	c := r
	c.Props = make(map[string]any, len(r.Props))
	for k, v := range r.Props { //detlint:ordered copies a map
		c.Props[k] = v
	}
	return c
}

// Get returns the row of typ with id, and whether it exists.
func (st *State) Get(typ, id string) (Row, bool) {
	r, ok := st.tables[typ][id]
	return r, ok
}

// Rows returns every row of typ, sorted by id.
func (st *State) Rows(typ string) []Row {
	t := st.tables[typ]
	out := make([]Row, 0, len(t))
	for _, r := range t { //detlint:ordered sorted next
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// GetMany returns the rows of typ with the given ids that exist, sorted by
// id, each once.
func (st *State) GetMany(typ string, ids []string) []Row {
	seen := map[string]bool{}
	var out []Row
	for _, id := range ids {
		if r, ok := st.Get(typ, id); ok && !seen[id] {
			seen[id] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Out returns the edges of edgeType from node, sorted by id.
func (st *State) Out(edgeType, node string) []Row { return st.adjacent(edgeType, node, true) }

// In returns the edges of edgeType to node, sorted by id.
func (st *State) In(edgeType, node string) []Row { return st.adjacent(edgeType, node, false) }

// OutDegree is len(Out(edgeType, node)).
func (st *State) OutDegree(edgeType, node string) int { return len(st.Out(edgeType, node)) }

// InDegree is len(In(edgeType, node)).
func (st *State) InDegree(edgeType, node string) int { return len(st.In(edgeType, node)) }

func (st *State) adjacent(edgeType, node string, out bool) []Row {
	var res []Row
	for _, r := range st.Rows(edgeType) {
		if (out && r.From == node) || (!out && r.To == node) {
			res = append(res, r)
		}
	}
	return res
}

// ScanWhere returns the rows of typ matching e (all rows when e is nil),
// sorted by id. e is bound to typ's columns (id, from and to for an edge,
// then the properties) with kernel/data/pred, whose errors it returns.
func (st *State) ScanWhere(typ string, e *pred.Expr) ([]Row, error) {
	rows := st.Rows(typ)
	if e == nil {
		return rows, nil
	}
	cols, get, err := st.columns(typ)
	if err != nil {
		return nil, err
	}
	b, err := pred.Bind(*e, cols)
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, r := range rows {
		r := r
		if b.Eval(func(col int) (pred.Value, bool) { return get(r, col) }) {
			out = append(out, r)
		}
	}
	return out, nil
}

// columns returns typ's predicate columns and a cell getter.
func (st *State) columns(typ string) ([]pred.Column, func(Row, int) (pred.Value, bool), error) {
	var props []schema.Property
	keys := []string{schema.ColID}
	if n, ok := st.s.Node(typ); ok {
		props = n.Props
	} else if e, ok := st.s.Edge(typ); ok {
		props = e.Props
		keys = append(keys, schema.ColFrom, schema.ColTo)
	} else {
		return nil, nil, fmt.Errorf("datamodel: unknown type %q", typ)
	}
	var cols []pred.Column
	for i, k := range keys {
		cols = append(cols, pred.Column{Name: k, Kind: schema.String, Index: i})
	}
	for i, p := range props {
		cols = append(cols, pred.Column{Name: p.Name, Kind: p.Kind, Index: len(keys) + i})
	}
	get := func(r Row, col int) (pred.Value, bool) {
		switch {
		case col == 0:
			return pred.V(r.ID), false
		case col < len(keys):
			return pred.V(map[int]string{1: r.From, 2: r.To}[col]), false
		}
		v, ok := r.Props[props[col-len(keys)].Name]
		if !ok || v == nil {
			return pred.Value{}, true
		}
		return pred.V(v), false
	}
	return cols, get, nil
}

// RowString renders a row canonically: id, endpoints, then the non-null
// properties sorted by name.
func RowString(r Row) string {
	var b strings.Builder
	b.WriteString(r.ID)
	if r.From != "" || r.To != "" {
		fmt.Fprintf(&b, "(%s->%s)", r.From, r.To)
	}
	keys := make([]string, 0, len(r.Props))
	for k, v := range r.Props { //detlint:ordered sorted next
		if v != nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, r.Props[k])
	}
	return b.String()
}

// IDs returns the rows' ids, in order.
func IDs(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}
