package pred

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

// The text form (keywords case-insensitive):
//
//	expr    := and { OR and }
//	and     := unary { AND unary }
//	unary   := NOT unary | "(" expr ")" | leaf
//	leaf    := ident ( cmpop literal | IN "(" literal { "," literal } ")" | IS [NOT] NULL )
//	cmpop   := = | != | < | <= | > | >=
//	literal := "go-quoted string" | x"hex bytes" | ts"RFC 3339 time" | 42 | -1.5e3 | inf | -inf | nan | true | false
//
// An integer literal is an int64; a number with '.' or an exponent (or
// inf, nan) is a float64. String(e) prints this form, and Parse of it
// returns e again.

// SyntaxError is a parse failure at a byte offset of the text.
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("pred: syntax error at byte %d: %s", e.Offset, e.Msg)
}

// Unwrap exposes ErrSyntax and ErrInvalidPredicate.
func (e *SyntaxError) Unwrap() []error { return []error{ErrSyntax, ErrInvalidPredicate} }

// Parse decodes the text form of a predicate. Any input returns a tree that
// passes Check or an error matching ErrInvalidPredicate; it never panics
// and its work is bounded by MaxTextBytes, MaxNodes and MaxDepth.
func Parse(text string) (Expr, error) {
	if len(text) > MaxTextBytes {
		return Expr{}, fail(ErrTooComplex, "", "text of %d bytes, more than %d", len(text), MaxTextBytes)
	}
	p := &parser{src: text}
	if err := p.advance(); err != nil {
		return Expr{}, err
	}
	e, err := p.or(0)
	if err != nil {
		return Expr{}, err
	}
	if p.tok.kind != tEOF {
		return Expr{}, p.errorf("unexpected %s after the predicate", p.tok)
	}
	if err := e.Check(); err != nil {
		return Expr{}, err
	}
	return e, nil
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString
	tBytes
	tTime
	tNumber
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	text string // ident, number, operator; unquoted content for strings
	off  int
}

func (t token) String() string {
	if t.kind == tEOF {
		return "end of text"
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src   string
	off   int
	tok   token
	nodes int
}

func (p *parser) errorf(f string, a ...any) error {
	return &SyntaxError{Offset: p.tok.off, Msg: fmt.Sprintf(f, a...)}
}

// keyword reports whether the current token is the keyword kw.
func (p *parser) keyword(kw string) bool {
	return p.tok.kind == tIdent && strings.EqualFold(p.tok.text, kw)
}

func (p *parser) count(n int) error {
	p.nodes += n
	if p.nodes > MaxNodes {
		return fail(ErrTooComplex, "", "more than %d nodes", MaxNodes)
	}
	return nil
}

func (p *parser) or(depth int) (Expr, error) {
	return p.chain(depth, "OR", OpOr, p.and)
}

func (p *parser) and(depth int) (Expr, error) {
	return p.chain(depth, "AND", OpAnd, p.unary)
}

// chain parses operand { kw operand } into one node of op (or the single
// operand).
func (p *parser) chain(depth int, kw string, op Op, operand func(int) (Expr, error)) (Expr, error) {
	first, err := operand(depth)
	if err != nil {
		return Expr{}, err
	}
	args := []Expr{first}
	for p.keyword(kw) {
		if err := p.advance(); err != nil {
			return Expr{}, err
		}
		next, err := operand(depth)
		if err != nil {
			return Expr{}, err
		}
		args = append(args, next)
	}
	if len(args) == 1 {
		return first, nil
	}
	return Expr{Op: op, Args: args}, p.count(1)
}

func (p *parser) unary(depth int) (Expr, error) {
	if depth > MaxDepth {
		return Expr{}, fail(ErrTooComplex, "", "nested deeper than %d", MaxDepth)
	}
	switch {
	case p.keyword("NOT"):
		if err := p.advance(); err != nil {
			return Expr{}, err
		}
		a, err := p.unary(depth + 1)
		if err != nil {
			return Expr{}, err
		}
		return Expr{Op: OpNot, Args: []Expr{a}}, p.count(1)
	case p.tok.kind == tLParen:
		if err := p.advance(); err != nil {
			return Expr{}, err
		}
		e, err := p.or(depth + 1)
		if err != nil {
			return Expr{}, err
		}
		if p.tok.kind != tRParen {
			return Expr{}, p.errorf("want ), got %s", p.tok)
		}
		return e, p.advance()
	}
	return p.leaf()
}

var cmpOps = map[string]Op{"=": OpEq, "!=": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe}

func (p *parser) leaf() (Expr, error) {
	if p.tok.kind != tIdent {
		return Expr{}, p.errorf("want a property name, got %s", p.tok)
	}
	e := Expr{Prop: p.tok.text}
	if err := p.advance(); err != nil {
		return Expr{}, err
	}
	if err := p.count(1); err != nil {
		return Expr{}, err
	}
	switch {
	case p.tok.kind == tOp:
		e.Op = cmpOps[p.tok.text]
		if err := p.advance(); err != nil {
			return Expr{}, err
		}
		v, err := p.literal()
		e.Vals = []Value{v}
		return e, err
	case p.keyword("IN"):
		e.Op = OpIn
		return p.inList(e)
	case p.keyword("IS"):
		return p.isNull(e)
	}
	return Expr{}, p.errorf("want a comparison, IN or IS after %q, got %s", e.Prop, p.tok)
}

func (p *parser) inList(e Expr) (Expr, error) {
	if err := p.advance(); err != nil {
		return Expr{}, err
	}
	if p.tok.kind != tLParen {
		return Expr{}, p.errorf("want ( after IN, got %s", p.tok)
	}
	for {
		if err := p.advance(); err != nil {
			return Expr{}, err
		}
		v, err := p.literal()
		if err != nil {
			return Expr{}, err
		}
		e.Vals = append(e.Vals, v)
		if err := p.count(1); err != nil {
			return Expr{}, err
		}
		if p.tok.kind == tRParen {
			return e, p.advance()
		}
		if p.tok.kind != tComma {
			return Expr{}, p.errorf("want , or ) in the IN list, got %s", p.tok)
		}
	}
}

func (p *parser) isNull(e Expr) (Expr, error) {
	if err := p.advance(); err != nil {
		return Expr{}, err
	}
	e.Op = OpIsNull
	if p.keyword("NOT") {
		e.Op = OpNotNull
		if err := p.advance(); err != nil {
			return Expr{}, err
		}
	}
	if !p.keyword("NULL") {
		return Expr{}, p.errorf("want NULL, got %s", p.tok)
	}
	return e, p.advance()
}

// literal parses one literal and advances past it.
func (p *parser) literal() (Value, error) {
	t := p.tok
	var v Value
	var err error
	switch t.kind {
	case tString:
		v = Value{Kind: schema.String, S: t.text}
	case tBytes:
		var b []byte
		if b, err = hex.DecodeString(t.text); err == nil {
			v = Value{Kind: schema.Bytes, S: string(b)}
		}
	case tTime:
		v, err = parseTime(t.text)
	case tNumber:
		v, err = parseNumber(t.text)
	case tIdent:
		v, err = wordLiteral(t.text)
	default:
		err = fmt.Errorf("want a literal")
	}
	if err != nil {
		return Value{}, p.errorf("bad literal %s: %v", t, err)
	}
	return v, p.advance()
}

func parseTime(s string) (Value, error) {
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Value{}, err
	}
	if ts.Before(time.Unix(0, math.MinInt64)) || ts.After(time.Unix(0, math.MaxInt64)) {
		return Value{}, fmt.Errorf("outside the int64 nanosecond range")
	}
	return Value{Kind: schema.Timestamp, I: ts.UnixNano()}, nil
}

func parseNumber(s string) (Value, error) {
	if s == "-inf" {
		return Value{Kind: schema.Float64, F: math.Inf(-1)}, nil
	}
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		return Value{Kind: schema.Float64, F: f}, err
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return Value{Kind: schema.Int64, I: i}, err
}

func wordLiteral(w string) (Value, error) {
	switch strings.ToLower(w) {
	case "true":
		return Value{Kind: schema.Bool, B: true}, nil
	case "false":
		return Value{Kind: schema.Bool}, nil
	case "inf":
		return Value{Kind: schema.Float64, F: math.Inf(1)}, nil
	case "nan":
		return Value{Kind: schema.Float64, F: math.NaN()}, nil
	}
	return Value{}, fmt.Errorf("not a literal")
}

// --- lexer ---------------------------------------------------------------

func (p *parser) advance() error {
	for p.off < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.off]) >= 0 {
		p.off++
	}
	start := p.off
	if start >= len(p.src) {
		p.tok = token{kind: tEOF, off: start}
		return nil
	}
	c := p.src[start]
	switch {
	case c == '(' || c == ')' || c == ',':
		p.off++
		p.tok = token{kind: map[byte]tokKind{'(': tLParen, ')': tRParen, ',': tComma}[c], text: string(c), off: start}
		return nil
	case c == '"':
		return p.quoted(tString, start, start)
	case c == '-' && strings.HasPrefix(strings.ToLower(p.src[start:]), "-inf"):
		p.off += 4
		p.tok = token{kind: tNumber, text: "-inf", off: start}
		return nil
	case c == '-' || isDigit(c):
		p.off++
		for p.off < len(p.src) && isNumByte(p.src[p.off], p.src[p.off-1]) {
			p.off++
		}
		p.tok = token{kind: tNumber, text: p.src[start:p.off], off: start}
		return nil
	case isIdentStart(c):
		return p.ident(start)
	}
	for _, op := range []string{"<=", ">=", "!=", "=", "<", ">"} {
		if strings.HasPrefix(p.src[start:], op) {
			p.off += len(op)
			p.tok = token{kind: tOp, text: op, off: start}
			return nil
		}
	}
	return &SyntaxError{Offset: start, Msg: fmt.Sprintf("unexpected character %q", c)}
}

func (p *parser) ident(start int) error {
	for p.off < len(p.src) && isIdentByte(p.src[p.off]) {
		p.off++
	}
	word := p.src[start:p.off]
	if p.off < len(p.src) && p.src[p.off] == '"' {
		switch word {
		case "x":
			return p.quoted(tBytes, start, p.off)
		case "ts":
			return p.quoted(tTime, start, p.off)
		}
	}
	p.tok = token{kind: tIdent, text: word, off: start}
	return nil
}

// quoted lexes a Go double-quoted string starting at q.
func (p *parser) quoted(kind tokKind, start, q int) error {
	end := q + 1
	for end < len(p.src) && p.src[end] != '"' {
		if p.src[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(p.src) {
		return &SyntaxError{Offset: start, Msg: "unterminated string"}
	}
	s, err := strconv.Unquote(p.src[q : end+1])
	if err != nil {
		return &SyntaxError{Offset: start, Msg: fmt.Sprintf("bad string: %v", err)}
	}
	p.off = end + 1
	p.tok = token{kind: kind, text: s, off: start}
	return nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentByte(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// isNumByte: digits, '.', exponent letters and a sign right after one.
func isNumByte(c, prev byte) bool {
	return isDigit(c) || c == '.' || c == 'e' || c == 'E' || ((c == '+' || c == '-') && (prev == 'e' || prev == 'E'))
}

// --- printing ------------------------------------------------------------

// String prints the text form of e (see Parse); AND and OR are always
// parenthesised, so Parse(e.String()) is e for every tree Parse returns.
func (e Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e Expr) write(b *strings.Builder) {
	switch {
	case e.Op == OpAnd || e.Op == OpOr:
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(" " + e.Op.String() + " ")
			}
			a.write(b)
		}
		b.WriteByte(')')
	case e.Op == OpNot:
		b.WriteString("NOT ")
		if len(e.Args) > 0 {
			e.Args[0].write(b)
		}
	case e.Op == OpIn:
		b.WriteString(e.Prop + " IN (")
		for i, v := range e.Vals {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.String())
		}
		b.WriteByte(')')
	case e.Op == OpIsNull || e.Op == OpNotNull:
		b.WriteString(e.Prop + " " + e.Op.String())
	default:
		b.WriteString(e.Prop + " " + e.Op.String() + " ")
		if len(e.Vals) > 0 {
			b.WriteString(e.Vals[0].String())
		}
	}
}

// String prints a value as a literal of the text form.
func (v Value) String() string {
	switch v.Kind {
	case schema.String:
		return strconv.Quote(v.S)
	case schema.Bytes:
		return `x"` + hex.EncodeToString([]byte(v.S)) + `"`
	case schema.Int64:
		return strconv.FormatInt(v.I, 10)
	case schema.Timestamp:
		return `ts"` + time.Unix(0, v.I).UTC().Format(time.RFC3339Nano) + `"`
	case schema.Bool:
		return strconv.FormatBool(v.B)
	case schema.Float64:
		return floatText(v.F)
	}
	return "?"
}

func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
