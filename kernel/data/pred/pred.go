// Package pred is the row predicate of filtered scans: a small expression
// tree (comparisons, IN, IS [NOT] NULL, AND, OR, NOT), its text form, its
// binding to a table's columns, a pure row evaluator and a pure fragment
// rule (can any row of a fragment match, given its column statistics).
// It does no I/O and depends on no storage code.
//
//	e, _ := pred.Parse(`age >= 30 AND name IN ("ann", "bob")`)
//	b, _ := pred.Bind(e, columns)            // typed error before any I/O
//	if b.MayMatch(rows, stats) { ... b.Eval(row) ... }
//
// Semantics are two-valued: a comparison or IN on a null value is false,
// IS NULL is true exactly on nulls, NOT negates, AND and OR are the boolean
// connectives. Strings and bytes compare byte-wise, bools false < true,
// timestamps by nanoseconds, floats by IEEE rules (a NaN row value makes
// every comparison false except !=); a NaN literal is rejected by Bind.
package pred

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// Op is the operator of one expression node.
type Op uint8

// The operators.
const (
	OpEq      Op = iota + 1 // prop = v
	OpNe                    // prop != v
	OpLt                    // prop < v
	OpLe                    // prop <= v
	OpGt                    // prop > v
	OpGe                    // prop >= v
	OpIn                    // prop IN (v, ...)
	OpIsNull                // prop IS NULL
	OpNotNull               // prop IS NOT NULL
	OpAnd                   // a AND b AND ...
	OpOr                    // a OR b OR ...
	OpNot                   // NOT a
)

var opText = [...]string{OpEq: "=", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpIn: "IN", OpIsNull: "IS NULL", OpNotNull: "IS NOT NULL", OpAnd: "AND", OpOr: "OR", OpNot: "NOT"}

// String returns the operator's text form.
func (o Op) String() string {
	if o >= OpEq && o <= OpNot {
		return opText[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

func (o Op) comparison() bool { return o >= OpEq && o <= OpGe }
func (o Op) leaf() bool       { return o >= OpEq && o <= OpNotNull }

// Limits of one predicate (text and tree), so decoding and evaluation are
// bounded whatever the input.
const (
	MaxTextBytes = 8192 // Parse input
	MaxNodes     = 256  // expression nodes, IN values included
	MaxDepth     = 32   // nesting of AND, OR, NOT and parentheses
	MaxInValues  = 1024 // values of one IN list
	MaxValueLen  = 1024 // bytes of one string or bytes literal
)

// Errors. Every error of this package matches ErrInvalidPredicate and one
// of the more specific sentinels.
var (
	ErrInvalidPredicate = errors.New("pred: invalid predicate")
	// ErrSyntax: the text is not a predicate (a *SyntaxError says where).
	ErrSyntax = errors.New("syntax error")
	// ErrTooComplex: the predicate exceeds a limit (size, depth, IN values).
	ErrTooComplex = errors.New("predicate too complex")
	// ErrMalformed: the tree breaks its shape rules (wrong arity, empty
	// property, a literal on IS NULL, ...).
	ErrMalformed = errors.New("malformed predicate")
	// ErrUnknownProperty: a leaf names a column the table does not have.
	ErrUnknownProperty = errors.New("unknown property")
	// ErrTypeMismatch: a literal's kind is not the column's kind (or is NaN,
	// or its Go type has no kind).
	ErrTypeMismatch = errors.New("type mismatch")
)

// Error is a predicate error: which rule, and where.
type Error struct {
	Rule error  // one of the sentinels above
	Prop string // the property, if any
	Msg  string
}

// Error implements error.
func (e *Error) Error() string {
	s := "pred: " + e.Rule.Error()
	if e.Prop != "" {
		s += ": " + e.Prop
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// Unwrap exposes the rule and ErrInvalidPredicate.
func (e *Error) Unwrap() []error { return []error{e.Rule, ErrInvalidPredicate} }

func fail(rule error, prop, f string, a ...any) *Error {
	return &Error{Rule: rule, Prop: prop, Msg: fmt.Sprintf(f, a...)}
}

// Value is a typed, non-null literal or cell value. S holds strings and
// bytes, I int64s and timestamps (UTC nanoseconds), F float64s, B bools.
type Value struct {
	Kind schema.Kind
	S    string
	I    int64
	F    float64
	B    bool
}

// V converts a Go value to a Value: string, int, int64, float64, bool,
// time.Time (UTC nanoseconds) or []byte. Any other type gives a Value of
// kind 0, which Bind rejects with ErrTypeMismatch.
func V(x any) Value {
	switch v := x.(type) {
	case string:
		return Value{Kind: schema.String, S: v}
	case int:
		return Value{Kind: schema.Int64, I: int64(v)}
	case int64:
		return Value{Kind: schema.Int64, I: v}
	case float64:
		return Value{Kind: schema.Float64, F: v}
	case bool:
		return Value{Kind: schema.Bool, B: v}
	case time.Time:
		return Value{Kind: schema.Timestamp, I: v.UnixNano()}
	case []byte:
		return Value{Kind: schema.Bytes, S: string(v)}
	}
	return Value{}
}

// Equal reports whether a and b are the same value (floats by bits).
func (a Value) Equal(b Value) bool {
	return a.Kind == b.Kind && a.S == b.S && a.I == b.I && math.Float64bits(a.F) == math.Float64bits(b.F) && a.B == b.B
}

// Compare orders two values of the same kind: -1, 0 or +1. Floats compare
// with IEEE operators (NaN compares equal to everything here; callers that
// care test for NaN first).
func Compare(a, b Value) int {
	switch a.Kind {
	case schema.String, schema.Bytes:
		return cmp3(a.S < b.S, a.S > b.S)
	case schema.Int64, schema.Timestamp:
		return cmp3(a.I < b.I, a.I > b.I)
	case schema.Float64:
		return cmp3(a.F < b.F, a.F > b.F)
	case schema.Bool:
		return cmp3(!a.B && b.B, a.B && !b.B)
	}
	panic(fmt.Sprintf("pred: compare of kind %v", a.Kind))
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

// Expr is one node of a predicate. Leaves (comparisons, IN, IS [NOT] NULL)
// name a property; comparisons carry one value, IN one or more; AND and OR
// have two or more Args, NOT exactly one.
type Expr struct {
	Op   Op
	Prop string
	Vals []Value
	Args []Expr
}

// Eq is prop = v (v a Go value, see V).
func Eq(prop string, v any) Expr { return cmpExpr(OpEq, prop, v) }

// Ne is prop != v.
func Ne(prop string, v any) Expr { return cmpExpr(OpNe, prop, v) }

// Lt is prop < v.
func Lt(prop string, v any) Expr { return cmpExpr(OpLt, prop, v) }

// Le is prop <= v.
func Le(prop string, v any) Expr { return cmpExpr(OpLe, prop, v) }

// Gt is prop > v.
func Gt(prop string, v any) Expr { return cmpExpr(OpGt, prop, v) }

// Ge is prop >= v.
func Ge(prop string, v any) Expr { return cmpExpr(OpGe, prop, v) }

// In is prop IN (vs...).
func In(prop string, vs ...any) Expr {
	e := Expr{Op: OpIn, Prop: prop}
	for _, v := range vs {
		e.Vals = append(e.Vals, V(v))
	}
	return e
}

// IsNull is prop IS NULL.
func IsNull(prop string) Expr { return Expr{Op: OpIsNull, Prop: prop} }

// NotNull is prop IS NOT NULL.
func NotNull(prop string) Expr { return Expr{Op: OpNotNull, Prop: prop} }

// And is the conjunction of two or more expressions.
func And(args ...Expr) Expr { return Expr{Op: OpAnd, Args: args} }

// Or is the disjunction of two or more expressions.
func Or(args ...Expr) Expr { return Expr{Op: OpOr, Args: args} }

// Not is the negation of e.
func Not(e Expr) Expr { return Expr{Op: OpNot, Args: []Expr{e}} }

func cmpExpr(op Op, prop string, v any) Expr {
	return Expr{Op: op, Prop: prop, Vals: []Value{V(v)}}
}

// Equal reports whether two expressions are the same tree.
func (e Expr) Equal(o Expr) bool {
	if e.Op != o.Op || e.Prop != o.Prop || len(e.Vals) != len(o.Vals) || len(e.Args) != len(o.Args) {
		return false
	}
	for i := range e.Vals {
		if !e.Vals[i].Equal(o.Vals[i]) {
			return false
		}
	}
	for i := range e.Args {
		if !e.Args[i].Equal(o.Args[i]) {
			return false
		}
	}
	return true
}

// Check verifies the tree's shape and limits (no schema needed).
func (e Expr) Check() error {
	nodes := 0
	return e.check(0, &nodes)
}

func (e Expr) check(depth int, nodes *int) error {
	*nodes += 1 + len(e.Vals)
	if depth > MaxDepth || *nodes > MaxNodes {
		return fail(ErrTooComplex, "", "more than %d nodes or deeper than %d", MaxNodes, MaxDepth)
	}
	switch {
	case e.Op.comparison() && (len(e.Vals) != 1 || len(e.Args) != 0 || e.Prop == ""):
		return fail(ErrMalformed, e.Prop, "%s needs a property and one value", e.Op)
	case e.Op == OpIn && (len(e.Vals) == 0 || len(e.Args) != 0 || e.Prop == ""):
		return fail(ErrMalformed, e.Prop, "IN needs a property and at least one value")
	case e.Op == OpIn && len(e.Vals) > MaxInValues:
		return fail(ErrTooComplex, e.Prop, "IN with %d values, more than %d", len(e.Vals), MaxInValues)
	case (e.Op == OpIsNull || e.Op == OpNotNull) && (len(e.Vals) != 0 || len(e.Args) != 0 || e.Prop == ""):
		return fail(ErrMalformed, e.Prop, "%s needs a property and no value", e.Op)
	case (e.Op == OpAnd || e.Op == OpOr) && (len(e.Args) < 2 || len(e.Vals) != 0 || e.Prop != ""):
		return fail(ErrMalformed, "", "%s needs two or more operands", e.Op)
	case e.Op == OpNot && (len(e.Args) != 1 || len(e.Vals) != 0 || e.Prop != ""):
		return fail(ErrMalformed, "", "NOT needs one operand")
	case e.Op < OpEq || e.Op > OpNot:
		return fail(ErrMalformed, "", "unknown operator %d", uint8(e.Op))
	}
	for _, v := range e.Vals {
		if (v.Kind == schema.String || v.Kind == schema.Bytes) && len(v.S) > MaxValueLen {
			return fail(ErrTooComplex, e.Prop, "literal of %d bytes, more than %d", len(v.S), MaxValueLen)
		}
	}
	for _, a := range e.Args {
		if err := a.check(depth+1, nodes); err != nil {
			return err
		}
	}
	return nil
}
