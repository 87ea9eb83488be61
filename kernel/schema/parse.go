package schema

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrSyntax is the kind of a ParseError caused by text that does not follow
// the grammar (as opposed to a well-formed schema that breaks a rule).
var ErrSyntax = errors.New("schema: syntax error")

// ParseError points at the line and column (1-based, columns in bytes) of
// the first problem in a schema text. It matches ErrInvalidSchema, and
// either ErrSyntax or the underlying *ValidationError.
type ParseError struct {
	Line int
	Col  int
	Msg  string
	Err  error // ErrSyntax or a *ValidationError
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("schema: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Unwrap exposes the cause and ErrInvalidSchema.
func (e *ParseError) Unwrap() []error { return []error{e.Err, ErrInvalidSchema} }

// Parse reads the text form of a schema, strictly, and validates it. Any
// problem returns a *ParseError at the offending line. The grammar:
//
//	schema   = { decl } .
//	decl     = "node" Name [ table ] [ retired ] [ body ]
//	         | "edge" Name ":" Name "->" Name [ "@card" "(" Int ".." ( Int | "*" ) ")" ] [ table ] [ retired ] [ body ] .
//	table    = "@table" "(" Name ")" .
//	retired  = "@retired" "(" Name { "," Name } ")" .
//	body     = "{" { prop [ "," ] } "}" .
//	prop     = Name ":" kind [ "?" ] [ "@col" "(" Name ")" ] [ "@default" "(" Literal ")" ] .
//	kind     = "string" | "int64" | "int32" | "float64" | "bool" | "timestamp" | "bytes" .
//
// A Literal is as ParseDefault reads it for the property's kind: a quoted
// Go string for string, bytes and timestamp ("2024-01-02T03:04:05Z"), a
// decimal for the numbers, true or false; it is stored canonically.
//
// A property is required unless its kind is followed by "?" (nullable).
// "@col" and "@retired" record storage columns, "@table" a type's storage
// table, after a schema change (see evolve.go); hand-written schemas do
// not need them. A
// declaration without a body has no properties.
// "#" starts a comment that runs to the end of the line. Only ASCII is
// accepted outside comments. Example:
//
//	node Person { name: string  age: int64? }
//	node Company { name: string }
//	edge WorksAt: Person -> Company @card(0..1) { since: timestamp? }
func Parse(text []byte) (Schema, error) {
	if len(text) > MaxTextBytes {
		return Schema{}, &ParseError{Line: 1, Col: 1, Err: ErrSyntax,
			Msg: fmt.Sprintf("text is %d bytes, more than the limit %d", len(text), MaxTextBytes)}
	}
	p := &parser{lx: lexer{src: text, line: 1, col: 1}}
	s, err := p.parse()
	if err != nil {
		return Schema{}, err
	}
	if err := s.Validate(); err != nil {
		var ve *ValidationError
		if !errors.As(err, &ve) {
			panic(fmt.Sprintf("schema: Validate returned a non-ValidationError %T", err))
		}
		pos := p.positionOf(ve)
		return Schema{}, &ParseError{Line: pos.line, Col: pos.col, Msg: ve.Error(), Err: ve}
	}
	return s, nil
}

type pos struct{ line, col int }

// typePos records where each part of a declaration was written.
type typePos struct {
	name, from, to, card pos
	props                []pos
}

type parser struct {
	lx    lexer
	tok   token
	nodes []typePos
	edges []typePos
}

func (p *parser) parse() (Schema, error) {
	var s Schema
	if err := p.next(); err != nil {
		return s, err
	}
	for p.tok.kind != tEOF {
		if p.tok.kind != tIdent || (p.tok.text != "node" && p.tok.text != "edge") {
			return s, p.errorf("expected \"node\" or \"edge\", found %s", p.tok)
		}
		var err error
		if p.tok.text == "node" {
			err = p.node(&s)
		} else {
			err = p.edge(&s)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

func (p *parser) node(s *Schema) error {
	if err := p.next(); err != nil {
		return err
	}
	var tp typePos
	name, err := p.ident(&tp.name, "a node type name")
	if err != nil {
		return err
	}
	var table string
	if p.tok.kind == tAt && p.peekAnnotation() == "table" {
		if table, err = p.tableAnnotation(); err != nil {
			return err
		}
	}
	var retired []string
	if p.tok.kind == tAt {
		if retired, err = p.retiredAnnotation(); err != nil {
			return err
		}
	}
	props, err := p.body(&tp)
	if err != nil {
		return err
	}
	s.Nodes = append(s.Nodes, NodeType{Name: name, Props: props, Retired: retired, Table: table})
	p.nodes = append(p.nodes, tp)
	return nil
}

func (p *parser) edge(s *Schema) error {
	if err := p.next(); err != nil {
		return err
	}
	var tp typePos
	e := EdgeType{}
	var err error
	if e.Name, err = p.ident(&tp.name, "an edge type name"); err != nil {
		return err
	}
	if err := p.expect(tColon); err != nil {
		return err
	}
	if e.From, err = p.ident(&tp.from, "the from node type"); err != nil {
		return err
	}
	if err := p.expect(tArrow); err != nil {
		return err
	}
	if e.To, err = p.ident(&tp.to, "the to node type"); err != nil {
		return err
	}
	if p.tok.kind == tAt && p.peekAnnotation() != "retired" && p.peekAnnotation() != "table" { // @card is optional, before @table and @retired
		tp.card = p.tok.pos
		if e.Card, err = p.card(); err != nil {
			return err
		}
	}
	if p.tok.kind == tAt && p.peekAnnotation() == "table" {
		if e.Table, err = p.tableAnnotation(); err != nil {
			return err
		}
	}
	if p.tok.kind == tAt {
		if e.Retired, err = p.retiredAnnotation(); err != nil {
			return err
		}
	}
	if e.Props, err = p.body(&tp); err != nil {
		return err
	}
	s.Edges = append(s.Edges, e)
	p.edges = append(p.edges, tp)
	return nil
}

// annotation consumes "@name(" for the annotation name, else a syntax
// error naming what was expected.
func (p *parser) annotation(name string) error {
	if err := p.expect(tAt); err != nil {
		return err
	}
	if p.tok.kind != tIdent || p.tok.text != name {
		return p.errorf("expected annotation %q, found %s", name, p.tok)
	}
	if err := p.next(); err != nil {
		return err
	}
	return p.expect(tLParen)
}

// retiredAnnotation parses "@retired(col, col...)": the storage columns
// of dropped properties (schema evolution).
func (p *parser) retiredAnnotation() ([]string, error) {
	if err := p.annotation("retired"); err != nil {
		return nil, err
	}
	var out []string
	for {
		if len(out) >= MaxRetiredPerType {
			return nil, p.errorf("more than %d retired columns", MaxRetiredPerType)
		}
		var at pos
		c, err := p.ident(&at, "a retired column name")
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		if p.tok.kind != tComma {
			break
		}
		if err := p.next(); err != nil {
			return nil, err
		}
	}
	return out, p.expect(tRParen)
}

// tableAnnotation parses "@table(name)": a type's storage table.
func (p *parser) tableAnnotation() (string, error) {
	if err := p.annotation("table"); err != nil {
		return "", err
	}
	var at pos
	t, err := p.ident(&at, "a storage table name")
	if err != nil {
		return "", err
	}
	return t, p.expect(tRParen)
}

// colAnnotation parses "@col(name)": a property's storage column.
func (p *parser) colAnnotation() (string, error) {
	if err := p.annotation("col"); err != nil {
		return "", err
	}
	var at pos
	c, err := p.ident(&at, "a storage column name")
	if err != nil {
		return "", err
	}
	return c, p.expect(tRParen)
}

// card parses "@card(min..max)" or "@card(min..*)".
func (p *parser) card() (Cardinality, error) {
	if err := p.annotation("card"); err != nil {
		return Cardinality{}, err
	}
	min, err := p.number("the minimum")
	if err != nil {
		return Cardinality{}, err
	}
	if err := p.expect(tDotDot); err != nil {
		return Cardinality{}, err
	}
	max := Unbounded
	if p.tok.kind == tStar {
		if err := p.next(); err != nil {
			return Cardinality{}, err
		}
	} else {
		at := p.tok
		if max, err = p.number("the maximum or \"*\""); err != nil {
			return Cardinality{}, err
		}
		if max == 0 {
			return Cardinality{}, errAt(at.pos, "cardinality maximum must be at least 1 (write \"*\" for no maximum)")
		}
	}
	if err := p.expect(tRParen); err != nil {
		return Cardinality{}, err
	}
	return Cardinality{Min: min, Max: max}, nil
}

func (p *parser) body(tp *typePos) ([]Property, error) {
	if p.tok.kind != tLBrace {
		return nil, nil // no body: no properties
	}
	if err := p.expect(tLBrace); err != nil {
		return nil, err
	}
	var props []Property
	for p.tok.kind != tRBrace {
		if len(props) >= MaxPropsPerType {
			return nil, p.errorf("more than %d properties", MaxPropsPerType)
		}
		var at pos
		name, err := p.ident(&at, "a property name or \"}\"")
		if err != nil {
			return nil, err
		}
		if err := p.expect(tColon); err != nil {
			return nil, err
		}
		kind, err := p.kind()
		if err != nil {
			return nil, err
		}
		required := true
		if p.tok.kind == tQuestion {
			required = false
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		var column, def string
		if p.tok.kind == tAt && p.peekAnnotation() == "col" {
			if column, err = p.colAnnotation(); err != nil {
				return nil, err
			}
		}
		if p.tok.kind == tAt {
			if def, err = p.defaultAnnotation(kind); err != nil {
				return nil, err
			}
		}
		if p.tok.kind == tComma {
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		props = append(props, Property{Name: name, Kind: kind, Required: required, Column: column, Default: def})
		tp.props = append(tp.props, at)
	}
	return props, p.next()
}

func (p *parser) kind() (Kind, error) {
	if p.tok.kind != tIdent {
		return 0, p.errorf("expected a property kind (string, int64, int32, float64, bool, timestamp, bytes), found %s", p.tok)
	}
	k, ok := KindByName(p.tok.text)
	if !ok {
		return 0, p.errorf("unknown property kind %q (want string, int64, int32, float64, bool, timestamp, bytes)", p.tok.text)
	}
	return k, p.next()
}

func (p *parser) ident(at *pos, what string) (string, error) {
	if p.tok.kind != tIdent {
		return "", p.errorf("expected %s, found %s", what, p.tok)
	}
	*at = p.tok.pos
	name := p.tok.text
	return name, p.next()
}

func (p *parser) number(what string) (uint32, error) {
	if p.tok.kind != tNumber {
		return 0, p.errorf("expected %s, found %s", what, p.tok)
	}
	n, err := strconv.ParseUint(p.tok.text, 10, 32)
	if err != nil || n > MaxCardinality {
		return 0, p.errorf("number %s is larger than the limit %d", p.tok.text, MaxCardinality)
	}
	return uint32(n), p.next()
}

func (p *parser) expect(k tokKind) error {
	if p.tok.kind != k {
		return p.errorf("expected %s, found %s", k, p.tok)
	}
	return p.next()
}

func (p *parser) next() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errorf(format string, args ...any) error {
	return errAt(p.tok.pos, fmt.Sprintf(format, args...))
}

func errAt(at pos, msg string) error {
	return &ParseError{Line: at.line, Col: at.col, Msg: msg, Err: ErrSyntax}
}

// positionOf maps a validation error back to the text that caused it.
func (p *parser) positionOf(ve *ValidationError) pos {
	if ve.typeIndex < 0 {
		return pos{1, 1}
	}
	tps := p.nodes
	if ve.edge {
		tps = p.edges
	}
	tp := tps[ve.typeIndex]
	switch {
	case ve.propIndex >= 0:
		return tp.props[ve.propIndex]
	case ve.field == "from":
		return tp.from
	case ve.field == "to":
		return tp.to
	case ve.field == "card":
		return tp.card
	}
	return tp.name
}

// peekAnnotation returns the name after the current "@" token, without
// consuming anything ("" if none).
func (p *parser) peekAnnotation() string {
	lx := p.lx
	t, err := lx.next()
	if err != nil || t.kind != tIdent {
		return ""
	}
	return t.text
}

// defaultAnnotation parses "@default(literal)" for a property of kind k
// and returns the literal's canonical text (ParseDefault). The literal is
// read raw (a quoted string may hold any printable ASCII the lexer would
// not tokenize).
func (p *parser) defaultAnnotation(k Kind) (string, error) {
	if err := p.expect(tAt); err != nil {
		return "", err
	}
	if p.tok.kind != tIdent || p.tok.text != "default" {
		return "", p.errorf("expected annotation \"col\" or \"default\", found %s", p.tok)
	}
	lx := &p.lx
	lx.skipSpaceAndComments()
	at := pos{lx.line, lx.col}
	if lx.peek(0) != '(' {
		return "", errAt(at, "expected \"(\" after @default")
	}
	lx.advance(1)
	lx.skipSpaceAndComments()
	at = pos{lx.line, lx.col}
	raw, err := lx.literal()
	if err != nil {
		return "", err
	}
	_, canon, err := ParseDefault(k, raw)
	if err != nil {
		return "", errAt(at, err.Error())
	}
	lx.skipSpaceAndComments()
	if lx.peek(0) != ')' {
		return "", errAt(pos{lx.line, lx.col}, "expected \")\" after the default literal")
	}
	lx.advance(1)
	return canon, p.next()
}
