package pred

import (
	"errors"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

var testCols = []Column{
	{"id", schema.String, 0}, {"age", schema.Int64, 1}, {"score", schema.Float64, 2},
	{"ok", schema.Bool, 3}, {"at", schema.Timestamp, 4}, {"raw", schema.Bytes, 5},
}

// TestParseAndBind pins the text form and the typed errors Bind and Parse
// return before any row is looked at.
func TestParseAndBind(t *testing.T) {
	for _, c := range []struct {
		text string
		want error // nil: parses and binds
	}{
		{`age >= 30`, nil},
		{`age >= 30 AND id IN ("a", "b") OR NOT score IS NULL`, nil},
		{`(ok = true) and at < ts"2024-01-01T00:00:00Z" or raw = x"00ff"`, nil},
		{`score > -1.5e3 AND score != inf AND score > -inf`, nil},
		{`age IS NOT NULL`, nil},
		{`nope = 1`, ErrUnknownProperty},
		{`age = "x"`, ErrTypeMismatch},
		{`age = 1.0`, ErrTypeMismatch},
		{`score = 1`, ErrTypeMismatch},
		{`score = nan`, ErrTypeMismatch},
		{`age =`, ErrSyntax},
		{`age IN ()`, ErrSyntax},
		{`(age = 1`, ErrSyntax},
		{`age = 1 age = 2`, ErrSyntax},
		{`age IS 1`, ErrSyntax},
		{`"a" = age`, ErrSyntax},
		{`raw = x"0g"`, ErrSyntax},
		{`at = ts"yesterday"`, ErrSyntax},
		{`age = 99999999999999999999`, ErrSyntax},
		{deep(MaxDepth + 2), ErrTooComplex},
	} {
		e, err := Parse(c.text)
		if err == nil {
			_, err = Bind(e, testCols)
		}
		if (c.want == nil) != (err == nil) || (c.want != nil && (!errors.Is(err, c.want) || !errors.Is(err, ErrInvalidPredicate))) {
			t.Errorf("%q: got %v, want %v", c.text, err, c.want)
		}
	}
}

func deep(n int) string {
	s := "age = 1"
	for i := 0; i < n; i++ {
		s = "NOT (" + s + ")"
	}
	return s
}

// TestCheckShapes: hand-built trees with the wrong arity are malformed.
func TestCheckShapes(t *testing.T) {
	for _, e := range []Expr{
		{Op: OpAnd, Args: []Expr{Eq("age", 1)}},
		{Op: OpNot},
		{Op: OpEq, Prop: "age"},
		{Op: OpIn, Prop: "age"},
		{Op: OpIsNull, Prop: "age", Vals: []Value{V(1)}},
		{Op: 99},
		Eq("", 1),
	} {
		if err := e.Check(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%+v: %v, want ErrMalformed", e, err)
		}
	}
	if _, err := Bind(Eq("age", struct{}{}), testCols); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("unsupported Go type: %v", err)
	}
}

// genValue draws a value of kind k from a small domain (so equalities hit).
func genValue(t *rapid.T, k schema.Kind, label string) Value {
	switch k {
	case schema.String:
		return Value{Kind: k, S: rapid.SampledFrom([]string{"", "a", "ab", "b", "é"}).Draw(t, label)}
	case schema.Bytes:
		return Value{Kind: k, S: rapid.SampledFrom([]string{"", "\x00", "\xff", "a"}).Draw(t, label)}
	case schema.Int64, schema.Timestamp:
		return Value{Kind: k, I: rapid.Int64Range(-3, 3).Draw(t, label)}
	case schema.Float64:
		return Value{Kind: k, F: rapid.SampledFrom([]float64{-1, 0, math.Copysign(0, -1), 0.5, 2, math.Inf(1)}).Draw(t, label)}
	}
	return Value{Kind: k, B: rapid.Bool().Draw(t, label)}
}

func genExpr(t *rapid.T, depth int) Expr {
	op := Op(rapid.IntRange(int(OpEq), int(OpNot)).Draw(t, "op"))
	if depth > 3 && !op.leaf() {
		op = OpEq
	}
	switch op {
	case OpAnd, OpOr:
		n := rapid.IntRange(2, 3).Draw(t, "n")
		e := Expr{Op: op}
		for i := 0; i < n; i++ {
			e.Args = append(e.Args, genExpr(t, depth+1))
		}
		return e
	case OpNot:
		return Not(genExpr(t, depth+1))
	}
	c := rapid.SampledFrom(testCols).Draw(t, "col")
	e := Expr{Op: op, Prop: c.Name}
	switch {
	case op == OpIn:
		for i := rapid.IntRange(1, 3).Draw(t, "in"); i > 0; i-- {
			e.Vals = append(e.Vals, genValue(t, c.Kind, "v"))
		}
	case op.comparison():
		e.Vals = []Value{genValue(t, c.Kind, "v")}
	}
	return e
}

// TestTextRoundTrip: String prints what Parse reads back as the same tree.
func TestTextRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := genExpr(t, 0)
		back, err := Parse(e.String())
		if err != nil || !back.Equal(e) {
			t.Fatalf("%s: parsed back %v (%s)", e, err, back)
		}
	})
}

type cell struct {
	v    Value
	null bool
}

// TestMayMatchIsSound: a fragment the statistics rule out has no matching
// row, for random fragments (nulls, NaN, -0) and predicates; and the rule
// prunes something (it is not trivially true).
func TestMayMatchIsSound(t *testing.T) {
	pruned := 0
	rapid.Check(t, func(t *rapid.T) {
		e := genExpr(t, 0)
		b, err := Bind(e, testCols)
		if err != nil {
			t.Fatal(err)
		}
		n := rapid.IntRange(1, 6).Draw(t, "rows")
		rows := make([][]cell, n)
		for i := range rows {
			for _, c := range testCols {
				x := cell{null: rapid.IntRange(0, 3).Draw(t, "null") == 0}
				if !x.null {
					x.v = genValue(t, c.Kind, "cell")
					if c.Kind == schema.Float64 && rapid.IntRange(0, 9).Draw(t, "nan") == 0 {
						x.v.F = math.NaN()
					}
				}
				rows[i] = append(rows[i], x)
			}
		}
		any := false
		for _, r := range rows {
			any = any || b.Eval(func(col int) (Value, bool) { return r[col].v, r[col].null })
		}
		if !b.MayMatch(uint64(n), statsOf(rows)) {
			pruned++
			if any {
				t.Fatalf("%s: pruned a fragment with a matching row", e)
			}
		}
	})
	if pruned == 0 {
		t.Fatal("MayMatch never pruned: the rule is vacuous")
	}
}

// statsOf computes column stats the way the data plane records them.
func statsOf(rows [][]cell) Stats {
	return func(col int) (ColStats, bool) {
		var cs ColStats
		nan := false
		for _, r := range rows {
			x := r[col]
			switch {
			case x.null:
				cs.Nulls++
				continue
			case x.v.Kind == schema.Float64 && math.IsNaN(x.v.F):
				nan = true
				continue
			}
			if cs.Lo == nil || Compare(x.v, *cs.Lo) < 0 {
				v := x.v
				cs.Lo = &v
			}
			if cs.Hi == nil || Compare(x.v, *cs.Hi) > 0 {
				v := x.v
				cs.Hi = &v
			}
		}
		if nan {
			cs.Lo, cs.Hi = nil, nil
		}
		return cs, true
	}
}
