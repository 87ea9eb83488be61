package pred

import (
	"math"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Column is one column a predicate may name: its name, its kind and its
// position in the table's rows.
type Column struct {
	Name  string
	Kind  schema.Kind
	Index int
}

// Bound is a predicate checked against a table's columns: every leaf names
// a column and every literal has that column's kind. It is immutable.
type Bound struct {
	root node
	cols []int // distinct column indexes the predicate reads, ascending
}

// node is a bound expression node: a leaf carries its column index.
type node struct {
	op   Op
	col  int
	kind schema.Kind
	vals []Value
	args []node
}

// Bind checks e's shape and limits, then every leaf against cols: an
// unknown column is ErrUnknownProperty, a literal of another kind (or a
// NaN float, or a Go type with no kind) is ErrTypeMismatch. It does no I/O.
func Bind(e Expr, cols []Column) (*Bound, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	byName := make(map[string]Column, len(cols))
	for _, c := range cols {
		byName[c.Name] = c
	}
	used := map[int]bool{}
	root, err := bind(e, byName, used)
	if err != nil {
		return nil, err
	}
	b := &Bound{root: root}
	for _, c := range cols {
		if used[c.Index] {
			b.cols = append(b.cols, c.Index)
		}
	}
	return b, nil
}

func bind(e Expr, byName map[string]Column, used map[int]bool) (node, error) {
	if !e.Op.leaf() {
		n := node{op: e.Op}
		for _, a := range e.Args {
			c, err := bind(a, byName, used)
			if err != nil {
				return node{}, err
			}
			n.args = append(n.args, c)
		}
		return n, nil
	}
	c, ok := byName[e.Prop]
	if !ok {
		return node{}, fail(ErrUnknownProperty, e.Prop, "the table has no such column")
	}
	for _, v := range e.Vals {
		switch {
		case v.Kind != c.Kind:
			return node{}, fail(ErrTypeMismatch, e.Prop, "a %v literal for a %v column", v.Kind, c.Kind)
		case v.Kind == schema.Float64 && math.IsNaN(v.F):
			return node{}, fail(ErrTypeMismatch, e.Prop, "NaN literal")
		}
	}
	used[c.Index] = true
	return node{op: e.Op, col: c.Index, kind: c.Kind, vals: e.Vals}, nil
}

// Columns returns the column indexes the predicate reads, ascending.
func (b *Bound) Columns() []int { return append([]int(nil), b.cols...) }

// Row gives the evaluator one row's cells: the value of column col, or
// null=true.
type Row func(col int) (v Value, null bool)

// Eval evaluates the predicate on one row (two-valued; see the package
// comment).
func (b *Bound) Eval(row Row) bool { return eval(&b.root, row) }

func eval(n *node, row Row) bool {
	switch n.op {
	case OpAnd:
		for i := range n.args {
			if !eval(&n.args[i], row) {
				return false
			}
		}
		return true
	case OpOr:
		for i := range n.args {
			if eval(&n.args[i], row) {
				return true
			}
		}
		return false
	case OpNot:
		return !eval(&n.args[0], row)
	}
	v, null := row(n.col)
	switch n.op {
	case OpIsNull:
		return null
	case OpNotNull:
		return !null
	}
	if null {
		return false
	}
	if n.kind == schema.Float64 && math.IsNaN(v.F) {
		return n.op == OpNe
	}
	if n.op == OpIn {
		for _, x := range n.vals {
			if Compare(v, x) == 0 {
				return true
			}
		}
		return false
	}
	return holds(n.op, Compare(v, n.vals[0]))
}

// holds reports whether comparison op holds for a row value whose order
// against the literal is c.
func holds(op Op, c int) bool {
	switch op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	case OpGe:
		return c >= 0
	}
	panic("pred: holds of a non-comparison")
}

// ColStats are the statistics of one column of one fragment: its null
// count and, when known, bounds on its non-null values (every non-null
// value v has Lo <= v <= Hi; a float column holding a NaN has no bounds).
type ColStats struct {
	Nulls  uint64
	Lo, Hi *Value
}

// Stats returns the statistics of a column of a fragment, ok=false when
// none are recorded.
type Stats func(col int) (ColStats, bool)

// MayMatch reports whether some row of a fragment of rows rows with these
// statistics can satisfy the predicate. It is conservative: false means no
// row can match (the fragment may be skipped); true promises nothing.
func (b *Bound) MayMatch(rows uint64, st Stats) bool {
	t, _ := may(&b.root, rows, st)
	return t
}

// may returns whether the node may be true and may be false on some row.
func may(n *node, rows uint64, st Stats) (mayTrue, mayFalse bool) {
	switch n.op {
	case OpAnd:
		mayTrue = true
		for i := range n.args {
			t, f := may(&n.args[i], rows, st)
			mayTrue, mayFalse = mayTrue && t, mayFalse || f
		}
		return mayTrue, mayFalse
	case OpOr:
		mayFalse = true
		for i := range n.args {
			t, f := may(&n.args[i], rows, st)
			mayTrue, mayFalse = mayTrue || t, mayFalse && f
		}
		return mayTrue, mayFalse
	case OpNot:
		t, f := may(&n.args[0], rows, st)
		return f, t
	}
	cs, ok := st(n.col)
	if !ok || cs.Nulls > rows {
		return true, true
	}
	nonNull, nulls := rows-cs.Nulls > 0, cs.Nulls > 0
	switch n.op {
	case OpIsNull:
		return nulls, nonNull
	case OpNotNull:
		return nonNull, nulls
	}
	if !nonNull {
		return false, true
	}
	t, f := mayRange(n, cs.Lo, cs.Hi)
	return t, f || nulls
}

// mayRange answers may for a comparison or IN over non-null values known
// to lie in [lo, hi] (nil: unbounded on that side).
func mayRange(n *node, lo, hi *Value) (mayTrue, mayFalse bool) {
	if lo == nil && hi == nil {
		return true, true
	}
	geLo := func(v Value) bool { return lo == nil || Compare(v, *lo) >= 0 } // v >= lo
	leHi := func(v Value) bool { return hi == nil || Compare(v, *hi) <= 0 } // v <= hi
	single := func(v Value) bool {                                          // every value equals v
		return lo != nil && hi != nil && Compare(*lo, v) == 0 && Compare(*hi, v) == 0
	}
	if n.op == OpIn {
		for _, v := range n.vals {
			if geLo(v) && leHi(v) {
				mayTrue = true
			}
			if single(v) {
				return true, false
			}
		}
		return mayTrue, true
	}
	v := n.vals[0]
	switch n.op {
	case OpEq:
		return geLo(v) && leHi(v), !single(v)
	case OpNe:
		return !single(v), geLo(v) && leHi(v)
	case OpLt: // some value < v iff lo < v
		return lo == nil || Compare(*lo, v) < 0, hi == nil || Compare(*hi, v) >= 0
	case OpLe:
		return lo == nil || Compare(*lo, v) <= 0, hi == nil || Compare(*hi, v) > 0
	case OpGt:
		return hi == nil || Compare(*hi, v) > 0, lo == nil || Compare(*lo, v) <= 0
	case OpGe:
		return hi == nil || Compare(*hi, v) >= 0, lo == nil || Compare(*lo, v) < 0
	}
	panic("pred: mayRange of a non-comparison")
}
