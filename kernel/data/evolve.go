package data

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/schema"
)

// ErrSchemaRefused matches every *SchemaRefusedError: a schema change the
// live data does not admit. Nothing was published.
var ErrSchemaRefused = errors.New("data: schema change refused by the data")

// The rules a schema change is checked against, one per *SchemaRefusedError.
var (
	// ErrTypeNotEmpty: a dropped type still has rows.
	ErrTypeNotEmpty = errors.New("dropped type is not empty")
	// ErrRequiredOnRows: a required property added to a type with rows
	// (they would have no value; add it nullable).
	ErrRequiredOnRows = errors.New("required property added to a type with rows")
	// ErrCardTightened: a @card tightening that live edges violate.
	ErrCardTightened = errors.New("tightened @card violated by live edges")
)

// maxNamed bounds the edges or nodes a refusal names.
const maxNamed = 16

// SchemaRefusedError is a schema change refused by the live data: the
// step, the rule, and the rows that break it (at most maxNamed of each,
// sorted, and how many more). It matches ErrSchemaRefused and its Rule.
type SchemaRefusedError struct {
	Step  schema.Step
	Rule  error
	Rows  uint64   // ErrTypeNotEmpty, ErrRequiredOnRows: the type's rows
	Nodes []string // ErrCardTightened: source nodes out of bounds
	Edges []string // ErrCardTightened: their edges (too many of them)
	More  int      // violating nodes beyond those named
}

// Error implements error.
func (e *SchemaRefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "data: schema change refused: %s: %v", e.Step, e.Rule)
	if e.Rows > 0 {
		fmt.Fprintf(&b, " (%d rows)", e.Rows)
	}
	if len(e.Nodes) > 0 {
		fmt.Fprintf(&b, ": source nodes %s", strings.Join(e.Nodes, ", "))
	}
	if len(e.Edges) > 0 {
		fmt.Fprintf(&b, "; edges %s", strings.Join(e.Edges, ", "))
	}
	if e.More > 0 {
		fmt.Fprintf(&b, " and %d more nodes", e.More)
	}
	return b.String()
}

// Unwrap exposes the rule and ErrSchemaRefused.
func (e *SchemaRefusedError) Unwrap() []error { return []error{e.Rule, ErrSchemaRefused} }

// SchemaOptions configure ApplySchema.
type SchemaOptions struct {
	// Renames are the property renames of the change (their data is kept).
	Renames []schema.Rename
	// TypeRenames are the type renames of the change: a renamed type keeps
	// its storage table, so its rows, and edges ending at it follow it.
	TypeRenames []schema.TypeRename
	// DryRun plans and checks, and publishes nothing.
	DryRun bool
	// DropRows lets a dropped type hold rows: the change's own commit
	// deletes them (the type's and those of every dropped edge type; an
	// edge type touching a dropped node type must be dropped too, or the
	// target does not validate). Without it a dropped type must be empty
	// (ErrTypeNotEmpty).
	DropRows bool
	// ExpectSchema, if set, is the schema id (sha256 hex) the caller
	// wrote target against: a head under another schema fails the change
	// with *kernel.SchemaChangedError instead of re-planning on it (a
	// target written for one schema may drop what another renamed).
	ExpectSchema string
}

// SchemaChange is the outcome of ApplySchema.
type SchemaChange struct {
	// Plan is the change: the schema it was planned from, the result and
	// the steps.
	Plan schema.Plan
	// From and To are the schema identities (sha256 hex of the contracts);
	// equal when nothing changes.
	From, To string
	// Checked describes, per data check run, what was checked (e.g.
	// "WorksAt: 1200 edges of 800 sources within @card(0..1)").
	Checked []string
	// Commit is the schema-change commit; zero on a dry run or when the
	// plan is empty.
	Commit kernel.Commit
}

// ApplySchema changes the schema of branch b to target, as one commit.
//
// It plans the change from the branch head's schema (schema.Evolve: a
// kept or renamed property keeps its storage column, an added one gets a
// column no fragment holds, a dropped one's column is retired), checks
// what depends on the data against the head — a dropped type must be
// empty, a required property without a default can only be added to an
// empty type (old rows read the default of one that has it), a
// tightened @card must hold for every live source node (else a
// *SchemaRefusedError naming the nodes and edges) — stores the new
// contract and publishes one manifest naming it (kernel
// LineageIntent.NewSchema), expecting the branch still at the schema it
// planned from and every table it checked still at the version checked.
// No fragment is read for a change that checks nothing (adding a type or
// a nullable property, dropping or renaming a property, renaming a type,
// loosening) and none is ever rewritten: old fragments read through the
// new schema (a renamed type's through its storage table).
//
// A concurrent data write or schema change that lands first makes it
// re-plan on the new head (bounded by the kernel's retry budget, then a
// retryable *kernel.ContentionError); a re-plan that no longer holds (a
// rename of a property the winner dropped) is refused. Transactions begun
// before it lands fail at commit with *kernel.SchemaChangedError.
func (g *Graph) ApplySchema(ctx context.Context, b kernel.BranchRef, target schema.Schema, intent kernel.LineageIntent, opts SchemaOptions) (SchemaChange, error) {
	if !opts.DryRun && g.k.ReadOnly() {
		return SchemaChange{}, fmt.Errorf("apply schema on %s: %w", b, kernel.ErrReadOnly)
	}
	var last error
	for round := 0; round < g.k.RetryBudget(); round++ {
		ch, err := g.applySchemaRound(ctx, b, target, intent, opts)
		if err == nil || !replan(err) || (opts.ExpectSchema != "" && errors.Is(err, kernel.ErrSchemaChanged)) {
			if err != nil {
				err = fmt.Errorf("apply schema on %s: %w", b, err)
			}
			return ch, err
		}
		last = err
	}
	return SchemaChange{}, &kernel.ContentionError{Op: "apply schema on " + b.String(), Attempts: g.k.RetryBudget(), Last: last}
}

// replan reports whether a round lost to a concurrent change of what it
// planned on (a table it checked, the schema, the head).
func replan(err error) bool {
	return errors.Is(err, kernel.ErrVersionMismatch) || errors.Is(err, kernel.ErrSchemaChanged)
}

func (g *Graph) applySchemaRound(ctx context.Context, b kernel.BranchRef, target schema.Schema, intent kernel.LineageIntent, opts SchemaOptions) (SchemaChange, error) {
	snap, err := g.SnapshotAt(ctx, b)
	if err != nil {
		return SchemaChange{}, err
	}
	from := snap.cat.contractID
	if opts.ExpectSchema != "" && opts.ExpectSchema != from {
		return SchemaChange{}, &kernel.SchemaChangedError{Branch: b.Name(), Expected: opts.ExpectSchema, Actual: from}
	}
	plan, err := schema.EvolveTypes(snap.cat.schema, target, opts.TypeRenames, opts.Renames)
	if err != nil {
		return SchemaChange{}, err
	}
	ch := SchemaChange{Plan: plan, From: from, To: from}
	if plan.Empty() {
		return ch, nil
	}
	exp, checked, drops, err := g.checkSchemaSteps(ctx, snap, plan, opts.DropRows)
	if err != nil {
		return ch, err
	}
	ch.Checked = checked
	contract, err := plan.New.Contract()
	if err != nil {
		panic(fmt.Sprintf("data: a planned schema has no contract: %v", err))
	}
	ch.To = schema.ContractID(contract)
	if opts.DryRun {
		return ch, nil
	}
	if _, err := g.k.PutSchema(ctx, contract); err != nil {
		return ch, err
	}
	intent.ExpectSchema, intent.NewSchema = from, ch.To
	if len(drops) > 0 {
		c, err := g.publishDropRows(ctx, b, snap, drops, exp, intent)
		ch.Commit = c
		return ch, err
	}
	c, err := g.k.Publish(ctx, b, nil, intent, exp)
	if err != nil {
		return ch, err
	}
	ch.Commit = c
	return ch, nil
}

// checkSchemaSteps runs the data checks of a plan on snap and returns the
// expectations its publish needs (every table checked, at the version
// checked), a description of each check, and, with dropRows, the dropped
// types whose rows the change deletes.
func (g *Graph) checkSchemaSteps(ctx context.Context, snap *Snapshot, plan schema.Plan, dropRows bool) ([]kernel.Expectation, []string, []string, error) {
	expect := map[string]bool{}
	var checked, drops []string
	for _, st := range plan.Steps {
		st := inForce(plan, st)
		switch {
		case st.Op == schema.DropType || (st.Op == schema.AddProp && st.Required && st.Default == ""):
			n, err := snap.Count(ctx, st.Type)
			if err != nil {
				return nil, nil, nil, err
			}
			expect[st.Type] = true
			if n > 0 && st.Op == schema.DropType && dropRows {
				drops = append(drops, st.Type)
				checked = append(checked, fmt.Sprintf("%s: %d rows dropped with it", st.Type, n))
				continue
			}
			if n > 0 {
				rule := ErrTypeNotEmpty
				if st.Op == schema.AddProp {
					rule = ErrRequiredOnRows
				}
				return nil, nil, nil, &SchemaRefusedError{Step: st, Rule: rule, Rows: n}
			}
			checked = append(checked, fmt.Sprintf("%s: empty", st.Type))
		case st.Tightens():
			if plant.Enabled(plant.CardTightenUnchecked) { // planted bug: a tightened @card is not checked against the live edges
				continue
			}
			note, err := checkCard(ctx, snap, st)
			if err != nil {
				return nil, nil, nil, err
			}
			expect[st.Type] = true
			if st.NewCard.Min > 0 {
				e, _ := snap.cat.schema.Edge(st.Type)
				expect[e.From] = true
			}
			checked = append(checked, note)
		}
	}
	var exp []kernel.Expectation
	for _, t := range sortedKeys(expect) {
		exp = append(exp, kernel.Expectation{Table: snap.cat.store(t), Version: snap.cat.pin(snap.ks, t).Version})
	}
	return exp, checked, drops, nil
}

// inForce returns st with its Type named as in the schema the plan
// changes (a step of a renamed type names its new name; the data checks
// read the head, under the old one).
func inForce(plan schema.Plan, st schema.Step) schema.Step {
	for _, r := range plan.Steps {
		if r.Op == schema.RenameType && r.Type == st.Type {
			st.Type = r.From
		}
	}
	return st
}

// checkCard counts the out-edges of every source node of a tightened edge
// type on snap (its whole edge table, and its source node ids when the
// minimum rises) and refuses the change if one is out of the new bounds.
func checkCard(ctx context.Context, snap *Snapshot, st schema.Step) (string, error) {
	e, _ := snap.cat.schema.Edge(st.Type)
	out := map[string][]string{} // source -> edge ids
	if err := scanColumns(ctx, snap, st.Type, []string{schema.ColID, schema.ColFrom}, func(v []string) {
		out[v[1]] = append(out[v[1]], v[0])
	}); err != nil {
		return "", err
	}
	var sources []string
	if st.NewCard.Min > 0 {
		if err := scanColumns(ctx, snap, e.From, []string{schema.ColID}, func(v []string) { sources = append(sources, v[0]) }); err != nil {
			return "", err
		}
	} else {
		for s := range out { //detlint:ordered sorted next
			sources = append(sources, s)
		}
	}
	sort.Strings(sources)
	bad := &SchemaRefusedError{Step: st, Rule: ErrCardTightened}
	edges := 0
	for _, s := range sources {
		es := out[s]
		edges += len(es)
		if st.NewCard.Allows(uint64(len(es))) {
			continue
		}
		if len(bad.Nodes) >= maxNamed {
			bad.More++
			continue
		}
		bad.Nodes = append(bad.Nodes, s)
		sort.Strings(es)
		for _, id := range es {
			if len(bad.Edges) < maxNamed {
				bad.Edges = append(bad.Edges, id)
			}
		}
	}
	if len(bad.Nodes) > 0 {
		return "", bad
	}
	return fmt.Sprintf("%s: %d edges of %d sources within @card(%s)", st.Type, edges, len(sources), st.NewCard), nil
}

// scanColumns calls f with the string values of columns for every row of
// typ on snap.
func scanColumns(ctx context.Context, snap *Snapshot, typ string, columns []string, f func([]string)) error {
	rr, err := snap.Scan(ctx, typ, columns...)
	if err != nil {
		return err
	}
	defer rr.Release()
	row := make([]string, len(columns))
	for rr.Next() {
		rec := rr.Record()
		for i := 0; i < int(rec.NumRows()); i++ {
			for c := range columns {
				row[c] = rec.Column(c).(*array.String).Value(i)
			}
			f(row)
		}
	}
	return rr.Err()
}

// SchemaTables returns the schema whose contract has sha256 hex sum and
// the storage view of each of its types, by storage table (the kernel
// table a manifest pins; the type name unless the type was renamed), for
// tools that read fragments directly, as verify does: a fragment is read
// through the schema of a manifest that pins it.
func (g *Graph) SchemaTables(ctx context.Context, sum string) (schema.Schema, map[string]*Table, error) {
	c, err := g.catalog(ctx, sum)
	if err != nil {
		return schema.Schema{}, nil, err
	}
	out := make(map[string]*Table, len(c.tables))
	for _, name := range c.names {
		t := c.tables[name]
		out[t.Storage] = t
	}
	return c.schema, out, nil
}
