package schema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/graphkernel/graphkernel/internal/plant"
)

// ErrIncompatibleChange is the kind of every error Evolve returns for a
// change it refuses whatever the data (a kind change, nullable to
// required, changed endpoints, a bad rename). It is not retryable.
var ErrIncompatibleChange = errors.New("schema: incompatible change")

// ChangeError is one refused change: which type and property, and why. It
// matches ErrIncompatibleChange.
type ChangeError struct {
	Type string
	Prop string // "" when the problem is the type's
	Msg  string
}

// Error implements error.
func (e *ChangeError) Error() string {
	if e.Prop == "" {
		return fmt.Sprintf("schema change: type %s: %s", e.Type, e.Msg)
	}
	return fmt.Sprintf("schema change: type %s: property %s: %s", e.Type, e.Prop, e.Msg)
}

// Unwrap makes errors.Is(err, ErrIncompatibleChange) hold.
func (e *ChangeError) Unwrap() error { return ErrIncompatibleChange }

// Rename renames property From of type Type to To: the property keeps its
// storage column, so its data stays. Without a Rename, a property missing
// from the target is dropped and a new name is added empty.
type Rename struct {
	Type, From, To string
}

// TypeRename renames type From to To: the type keeps its storage table
// (@table), so its rows stay, and the edge types whose endpoint it is name
// To. Without a TypeRename, a type missing from the target is dropped and
// a new name is added empty.
type TypeRename struct {
	From, To string
}

// StepOp is one kind of schema change.
type StepOp uint8

// The step kinds.
const (
	// AddNode adds a node type (its table starts empty).
	AddNode StepOp = iota + 1
	// AddEdge adds an edge type.
	AddEdge
	// DropType drops a type; the data plane requires its table empty.
	DropType
	// AddProp adds a property in a fresh storage column: old fragments
	// read it as null. A required one needs an empty table.
	AddProp
	// DropProp drops a property; its storage column is retired.
	DropProp
	// RenameProp renames a property; its storage column (data) is kept.
	RenameProp
	// LoosenProp makes a required property nullable.
	LoosenProp
	// Recard changes an edge type's @card bounds; the data plane checks a
	// tightening against the live edges.
	Recard
	// WidenProp widens a property's kind losslessly (int32 -> int64): its
	// storage column is kept and old fragments' values read widened.
	WidenProp
	// RenameType renames a type; its storage table (its rows) is kept.
	RenameType
)

var stepNames = [...]string{AddNode: "add-node", AddEdge: "add-edge", DropType: "drop-type", AddProp: "add-property",
	DropProp: "drop-property", RenameProp: "rename-property", LoosenProp: "loosen-property", Recard: "recard",
	WidenProp: "widen-property", RenameType: "rename-type"}

// String names the step kind.
func (o StepOp) String() string {
	if o >= AddNode && o <= RenameType {
		return stepNames[o]
	}
	return "step(" + strconv.Itoa(int(o)) + ")"
}

// Step is one change of a Plan.
type Step struct {
	Op       StepOp
	Type     string // the type's name (RenameType: the new name)
	Prop     string // AddProp, DropProp, LoosenProp: the property; RenameProp: the new name
	From     string // RenameProp: the old property name; RenameType: the old type name
	Table    string // RenameType: the storage table kept
	Required bool   // AddProp: the new property is required
	Column   string // AddProp, DropProp, RenameProp, WidenProp: the storage column concerned
	Default  string // AddProp: the default old rows read (canonical literal), "" for null
	OldKind  Kind   // WidenProp: the kind before
	NewKind  Kind   // WidenProp: the kind after
	OldCard  Cardinality
	NewCard  Cardinality // Recard
}

// String renders a step for people, e.g. "rename-property Person.name -> fullname".
func (s Step) String() string {
	switch s.Op {
	case AddNode, AddEdge, DropType:
		return s.Op.String() + " " + s.Type
	case RenameProp:
		return fmt.Sprintf("%s %s.%s -> %s", s.Op, s.Type, s.From, s.Prop)
	case RenameType:
		return fmt.Sprintf("%s %s -> %s", s.Op, s.From, s.Type)
	case Recard:
		return fmt.Sprintf("%s %s %s -> %s", s.Op, s.Type, s.OldCard, s.NewCard)
	case WidenProp:
		return fmt.Sprintf("%s %s.%s %s -> %s", s.Op, s.Type, s.Prop, s.OldKind, s.NewKind)
	case AddProp:
		if s.Default != "" {
			return fmt.Sprintf("%s %s.%s default %s", s.Op, s.Type, s.Prop, s.Default)
		}
	}
	return fmt.Sprintf("%s %s.%s", s.Op, s.Type, s.Prop)
}

// Tightens reports whether a Recard step admits fewer out-edge counts than
// before (a higher minimum or a lower maximum): the data plane must check
// the live edges.
func (s Step) Tightens() bool {
	if s.Op != Recard {
		return false
	}
	o, n := s.OldCard, s.NewCard
	return n.Min > o.Min || (n.Bounded() && (!o.Bounded() || n.Max < o.Max))
}

// Plan is a computed schema change: the schema in force, the resulting
// schema (with storage columns assigned and dropped columns retired) and
// the steps between them, in Compare's order: they apply one after the
// other, each naming what the steps before it left (dropped types first,
// then type renames, then per type its property drops, renames, other
// changes and adds; see replayOrder).
type Plan struct {
	Old, New Schema
	Steps    []Step
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool { return len(p.Steps) == 0 }

// Evolve is EvolveTypes without type renames.
func Evolve(old, target Schema, renames []Rename) (Plan, error) {
	return EvolveTypes(old, target, nil, renames)
}

// EvolveTypes plans the change from old (a schema in force, with its
// storage columns and tables) to target (a hand-written schema: no @col,
// @retired or @table) with the given type and property renames (a
// Rename's Type names the type in the target; its old name is accepted
// too). Refusals are *ChangeError (ErrIncompatibleChange) or, for an
// invalid target, the *ValidationError of Validate. What the plan
// guarantees: every kept or renamed type keeps its storage table (its
// rows), every added type gets a table no other type of old or the result
// has; every kept or renamed property keeps its storage column (its
// data), every added property gets a column no fragment has ever held
// under this lineage (never a retired one), and the result validates.
func EvolveTypes(old, target Schema, types []TypeRename, renames []Rename) (Plan, error) {
	if err := target.Validate(); err != nil {
		return Plan{}, err
	}
	if err := old.Validate(); err != nil {
		return Plan{}, err
	}
	if err := noStorageAnnotations(target); err != nil {
		return Plan{}, err
	}
	old, target = old.Normalized(), target.Normalized()
	relabelled, typeSteps, err := renameTypes(old, target, types)
	if err != nil {
		return Plan{}, err
	}
	byType, err := renameIndex(relabelled, target, renamesInTarget(renames, types))
	if err != nil {
		return Plan{}, err
	}
	e := evolver{old: relabelled, renames: byType, typeSteps: typeSteps, tables: tablesOf(relabelled)}
	out := Schema{}
	for _, n := range target.Nodes {
		nt, err := e.node(n)
		if err != nil {
			return Plan{}, err
		}
		out.Nodes = append(out.Nodes, nt)
	}
	for _, ed := range target.Edges {
		et, err := e.edge(ed)
		if err != nil {
			return Plan{}, err
		}
		out.Edges = append(out.Edges, et)
	}
	e.drops(target)
	out = out.Normalized()
	if err := out.Validate(); err != nil {
		panic(fmt.Sprintf("schema: Evolve produced an invalid schema: %v\n%s", err, out))
	}
	return Plan{Old: old, New: out, Steps: replayOrder(e.steps, out)}, nil
}

func noStorageAnnotations(s Schema) error {
	check := func(name string, props []Property, retired []string, table string) error {
		if table != "" && table != name {
			return &ChangeError{Type: name, Msg: "@table is computed by the change, not written by hand (use a type rename)"}
		}
		if len(retired) > 0 {
			return &ChangeError{Type: name, Msg: "@retired is computed by the change, not written by hand"}
		}
		for _, p := range props {
			if p.Column != "" && p.Column != p.Name {
				return &ChangeError{Type: name, Prop: p.Name, Msg: "@col is computed by the change, not written by hand (use a rename)"}
			}
		}
		return nil
	}
	for _, n := range s.Nodes {
		if err := check(n.Name, n.Props, n.Retired, n.Table); err != nil {
			return err
		}
	}
	for _, e := range s.Edges {
		if err := check(e.Name, e.Props, e.Retired, e.Table); err != nil {
			return err
		}
	}
	return nil
}

// renameIndex checks renames and indexes them by type, then new name.
func renameIndex(old, target Schema, renames []Rename) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, r := range renames {
		oldProps, ok := propsOf(old, r.Type)
		if !ok {
			return nil, &ChangeError{Type: r.Type, Prop: r.From, Msg: "rename of a property of a type the schema in force does not have"}
		}
		newProps, ok := propsOf(target, r.Type)
		switch {
		case !ok:
			return nil, &ChangeError{Type: r.Type, Prop: r.From, Msg: "rename in a type the target drops"}
		case r.From == r.To:
			return nil, &ChangeError{Type: r.Type, Prop: r.From, Msg: "rename to the same name"}
		case findProp(oldProps, r.From) < 0:
			return nil, &ChangeError{Type: r.Type, Prop: r.From, Msg: "renamed property does not exist"}
		case findProp(newProps, r.To) < 0:
			return nil, &ChangeError{Type: r.Type, Prop: r.To, Msg: "the target has no property with the new name"}
		case findProp(newProps, r.From) >= 0:
			return nil, &ChangeError{Type: r.Type, Prop: r.From, Msg: "renamed away but still in the target"}
		}
		m := out[r.Type]
		if m == nil {
			m = map[string]string{}
			out[r.Type] = m
		}
		for to, from := range m { //detlint:ordered a membership check: any order gives the same answer
			if to == r.To || from == r.From {
				return nil, &ChangeError{Type: r.Type, Prop: r.From, Msg: "renamed twice"}
			}
		}
		m[r.To] = r.From
	}
	return out, nil
}

func propsOf(s Schema, typ string) ([]Property, bool) {
	if n, ok := s.Node(typ); ok {
		return n.Props, true
	}
	if e, ok := s.Edge(typ); ok {
		return e.Props, true
	}
	return nil, false
}

func findProp(props []Property, name string) int {
	for i, p := range props {
		if p.Name == name {
			return i
		}
	}
	return -1
}

type evolver struct {
	old       Schema                       // the schema in force, its renamed types relabelled
	renames   map[string]map[string]string // type -> new name -> old name
	typeSteps map[string]Step              // new type name -> its RenameType step
	tables    map[string]bool              // storage tables taken (every old type's, each added type's)
	steps     []Step
}

// kept records the RenameType step of a kept type, if it was renamed.
func (e *evolver) kept(name string) {
	if st, ok := e.typeSteps[name]; ok {
		e.steps = append(e.steps, st)
	}
}

// addedTable returns the storage table of an added type: its name, or
// name_2, ... when another type (of the old schema or added) has it.
func (e *evolver) addedTable(name string) string {
	t := freshName(name, e.tables)
	e.tables[t] = true
	return normalTable(t, name)
}

func (e *evolver) node(n NodeType) (NodeType, error) {
	if _, ok := e.old.Edge(n.Name); ok {
		return NodeType{}, &ChangeError{Type: n.Name, Msg: "an edge type cannot become a node type"}
	}
	o, ok := e.old.Node(n.Name)
	if !ok {
		e.steps = append(e.steps, Step{Op: AddNode, Type: n.Name})
		n.Table = e.addedTable(n.Name)
		return n, nil
	}
	e.kept(n.Name)
	props, retired, err := e.props(n.Name, o.Props, o.Retired, n.Props)
	if err != nil {
		return NodeType{}, err
	}
	return NodeType{Name: n.Name, Props: props, Retired: retired, Table: o.Table}, nil
}

func (e *evolver) edge(t EdgeType) (EdgeType, error) {
	if _, ok := e.old.Node(t.Name); ok {
		return EdgeType{}, &ChangeError{Type: t.Name, Msg: "a node type cannot become an edge type"}
	}
	o, ok := e.old.Edge(t.Name)
	if !ok {
		e.steps = append(e.steps, Step{Op: AddEdge, Type: t.Name})
		t.Table = e.addedTable(t.Name)
		return t, nil
	}
	e.kept(t.Name)
	if o.From != t.From || o.To != t.To {
		return EdgeType{}, &ChangeError{Type: t.Name, Msg: fmt.Sprintf("endpoints %s -> %s cannot change to %s -> %s", o.From, o.To, t.From, t.To)}
	}
	props, retired, err := e.props(t.Name, o.Props, o.Retired, t.Props)
	if err != nil {
		return EdgeType{}, err
	}
	if o.Card != t.Card {
		e.steps = append(e.steps, Step{Op: Recard, Type: t.Name, OldCard: o.Card, NewCard: t.Card})
	}
	return EdgeType{Name: t.Name, From: t.From, To: t.To, Card: t.Card, Props: props, Retired: retired, Table: o.Table}, nil
}

// props computes a kept type's properties: kept and renamed ones keep
// their storage column, new ones get a fresh column, dropped ones retire
// theirs.
func (e *evolver) props(typ string, old []Property, retired []string, target []Property) ([]Property, []string, error) {
	renames := e.renames[typ]
	used := map[string]bool{}
	for _, r := range retired {
		used[r] = true
	}
	carried := map[string]bool{} // old names carried into the result
	out := make([]Property, len(target))
	var fresh []int
	for i, p := range target {
		from, renamed := renames[p.Name]
		if renamed && plant.Enabled(plant.RenameAsDrop) { // planted bug: the rename becomes a drop plus an add
			renamed = false
		}
		src := p.Name
		if renamed {
			src = from
		}
		j := findProp(old, src)
		if j < 0 { // new (a target never keeps a renamed-away name: renameIndex)
			fresh = append(fresh, i)
			out[i] = p
			continue
		}
		op := old[j]
		widen := op.Kind != p.Kind && Widens(op.Kind, p.Kind)
		if op.Kind != p.Kind && !widen {
			return nil, nil, &ChangeError{Type: typ, Prop: p.Name, Msg: fmt.Sprintf("kind %s cannot change to %s (only int32 -> int64 widens losslessly)", op.Kind, p.Kind)}
		}
		if op.Default != p.Default {
			return nil, nil, &ChangeError{Type: typ, Prop: p.Name, Msg: fmt.Sprintf("default %s cannot change to %s (rows written before the property read it)", orNone(op.Default), orNone(p.Default))}
		}
		if !op.Required && p.Required {
			return nil, nil, &ChangeError{Type: typ, Prop: p.Name, Msg: "a nullable property cannot become required (old rows may hold nulls)"}
		}
		p.Column = op.StorageColumn()
		used[p.Column] = true
		carried[op.Name] = true
		out[i] = p
		if renamed {
			e.steps = append(e.steps, Step{Op: RenameProp, Type: typ, Prop: p.Name, From: op.Name, Column: p.Column})
		}
		if op.Required && !p.Required {
			e.steps = append(e.steps, Step{Op: LoosenProp, Type: typ, Prop: p.Name})
		}
		if widen {
			e.steps = append(e.steps, Step{Op: WidenProp, Type: typ, Prop: p.Name, Column: p.Column, OldKind: op.Kind, NewKind: p.Kind})
		}
	}
	for _, op := range old {
		if !carried[op.Name] {
			used[op.StorageColumn()] = true
		}
	}
	for _, i := range fresh {
		c := freshName(out[i].Name, used)
		used[c] = true
		out[i].Column = c
		e.steps = append(e.steps, Step{Op: AddProp, Type: typ, Prop: out[i].Name, Required: out[i].Required, Column: c, Default: out[i].Default})
	}
	next := append([]string(nil), retired...)
	for _, op := range old {
		if !carried[op.Name] {
			next = append(next, op.StorageColumn())
			e.steps = append(e.steps, Step{Op: DropProp, Type: typ, Prop: op.Name, Column: op.StorageColumn()})
		}
	}
	return out, normalRetired(next), nil
}

// freshName returns name when used does not hold it, else name_2,
// name_3, ...: the first name not in used (shortened when that would pass
// MaxNameBytes). It mints storage columns (used: a type's live and
// retired columns), storage tables (used: the tables taken) and the
// temporary names of a rename cycle (used: the names in play).
func freshName(name string, used map[string]bool) string {
	if !used[name] {
		return name
	}
	for n := 2; n < 2+MaxRetiredPerType+MaxPropsPerType+1; n++ {
		c := name + "_" + strconv.Itoa(n)
		if len(c) <= MaxNameBytes && !used[c] {
			return c
		}
	}
	// Names are at most 64 bytes: shorten and try again (bounded).
	return freshName(strings.TrimRight(name[:len(name)/2], "_")+"x", used)
}

// drops appends a DropType step for every old type the target lacks.
func (e *evolver) drops(target Schema) {
	for _, n := range e.old.Nodes {
		if _, ok := target.Node(n.Name); !ok {
			e.steps = append(e.steps, Step{Op: DropType, Type: n.Name})
		}
	}
	for _, ed := range e.old.Edges {
		if _, ok := target.Edge(ed.Name); !ok {
			e.steps = append(e.steps, Step{Op: DropType, Type: ed.Name})
		}
	}
}

// Widens reports whether a property of kind from may become kind to with
// every stored value read losslessly: int32 -> int64 only.
func Widens(from, to Kind) bool { return from == Int32 && to == Int64 }

func orNone(def string) string {
	if def == "" {
		return "(none)"
	}
	return def
}
