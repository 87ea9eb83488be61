package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"time"

	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
	"github.com/graphkernel/graphkernel/sim/workload"
)

// The schema workload of the process harness (-procs N -workload schema,
// issue #29): schema evolution racing real writer processes that are
// SIGKILLed and restarted. Processes take roles by id (schemaRole): schema
// changers apply, one after another, the changes the simulator's schema
// workload makes (a property rename v <-> w keeping its data, a rename of
// both types, Person <-> Human and Knows <-> Links, keeping their tables,
// a tightening or loosening of Knows' @card) and add and drop nullable
// properties, each written for the schema it read (ExpectSchema), trim
// the hubs' edges to one each before a third of the tightenings (a write
// deleting them; the others meet the hubs' edges, which the data
// check must refuse), and after an acknowledged tightening read the snapshot it
// published back
// (every seeded person's out-degree within the new @card); writers stage
// a node (with its value under the value property's current name) and,
// two times in three, an edge from it to a seeded person or from one of
// two hub people to it (so hubs pass a tightened bound, and tightenings
// are refused by the data, or a write by the @card in force), under the
// names of the schema their transaction began under, wait a little (so
// that schema changes land inside their transactions), and commit; a
// commit refused with *kernel.SchemaChangedError is retried once more as a
// fresh transaction (a new tag). Every call is recorded as the default
// workload's commits are (invoke before, outcome after), with the schema
// it was staged or written under.
//
// What must hold (checkSchema): the default workload's store checks
// (chains, every tag at most once and an acknowledged one exactly once, a
// definitely failed one never, table heads, no sidecar, one audit per op);
// the schema chain of main is linear: every manifest whose schema differs
// from its parent's is a schema change's commit, landed on the schema that
// change was written for (and, acknowledged, naming the schema it
// returned), and every data commit landed under the schema its
// transaction was staged under (schema-stale-commit: the gate
// stale-schema-validate removes); a refused commit's error is the typed,
// retryable *kernel.SchemaChangedError naming the schema it was staged
// under, a store or contention error, a hub's edge refused by the @card
// in force (data.ErrCardinality) or a schema change refused by the data
// (schema-untyped-error otherwise);
// every acknowledged writer's rows are on main's head under the final
// schema's names, the node's value where the property's final name says
// (schema-rename: the rename-as-drop plant loses it), a definitely failed
// one's are not, a commit's node and edge are there together or not at
// all, every person's Knows out-degree is within the final @card; verify
// clean.
const (
	schemaProcWorkload = "schema"
	schemaNodeValue    = "tag" // the node's first property: its own tag
	schemaSeeds        = 8     // seeded people, the writers' edge targets
	schemaMaxExtra     = 6     // nullable properties the changers add, at most at once
	schemaStageMax     = 200 * time.Millisecond
	schemaChangeMin    = 200 * time.Millisecond // changer pause: uniform in [min, min+span)
	schemaChangeSpan   = 600 * time.Millisecond
	schemaWriteTries   = 2 // attempts of one write refused with SchemaChangedError
)

// schemaProcSchema is the workload's initial schema: the simulator's
// schema workload's (sim/workload/ops_schema.go), Person's value v.
const schemaProcSchema = `node Person { tag: string  v: int64? }
edge Knows: Person -> Person @card(0..3) {}
`

// recCardViolation is the schema workload's record of a tightened @card
// a changer found violated in the snapshot its change published.
const recCardViolation = "card-violation"

// Roles of the schema workload.
const (
	roleChanger = "changer"
)

// schemaRole is process id's role: every fourth process from the second
// changes the schema (4 processes: 3 writers and a changer; 8: 6 and 2).
func schemaRole(id int) string {
	if id%4 == 1 {
		return roleChanger
	}
	return roleWriter
}

// Schema change kinds (histRecord.Op of a changer's invoke).
const (
	opRenameProp = "rename-prop"
	opRenameType = "rename-type"
	opTighten    = "tighten"
	opLoosen     = "loosen"
	opAddProp    = "add-prop"
	opDropProp   = "drop-prop"
)

// Error classes of a failed call (histRecord.Class).
const (
	classSchema     = "schema-changed" // *kernel.SchemaChangedError: typed, retryable
	classStore      = "store"          // an ambiguous or transient store outcome
	classContention = "contention"     // *kernel.ContentionError: retryable
	classRefused    = "refused"        // a schema change the data or the planner refused (typed)
	classCard       = "card"           // data.ErrCardinality: a write beyond the @card in force (typed)
	classConflict   = "conflict"       // a trim's deletes lost to a concurrent write or trim (typed)
	classOther      = "other"          // anything else
)

// schemaNames are the names a schema of the workload gives its node type,
// its edge type and the value property, the edge type's @card and the
// extra nullable properties, in order.
type schemaNames struct {
	node, edge, value string
	card              schema.Cardinality
	extra             []string
}

// schemaNamesOf reads the workload's names from s; ok=false when s is not
// of the workload's shape (one node type: tag, v or w, extras; one edge
// type between it and itself).
func schemaNamesOf(s schema.Schema) (schemaNames, bool) {
	if len(s.Nodes) != 1 || len(s.Edges) != 1 || len(s.Nodes[0].Props) < 2 {
		return schemaNames{}, false
	}
	n, e := s.Nodes[0], s.Edges[0]
	if n.Props[0].Name != schemaNodeValue || e.From != n.Name || e.To != n.Name {
		return schemaNames{}, false
	}
	out := schemaNames{node: n.Name, edge: e.Name, value: n.Props[1].Name, card: e.Card}
	if out.value != "v" && out.value != "w" {
		return schemaNames{}, false
	}
	for _, p := range n.Props[2:] {
		out.extra = append(out.extra, p.Name)
	}
	return out, true
}

// text is the workload's schema under the names n (hand-written: no
// storage annotations, as the simulator writes its targets).
func (n schemaNames) text() string {
	var props strings.Builder
	for _, x := range n.extra {
		fmt.Fprintf(&props, "  %s: string?", x)
	}
	return fmt.Sprintf("node %s { %s: string  %s: int64?%s }\nedge %s: %s -> %s @card(%s) {}\n",
		n.node, schemaNodeValue, n.value, props.String(), n.edge, n.node, n.node, n.card)
}

// schemaFlip maps each of the workload's two names of a thing to the other.
var schemaFlip = map[string]string{"v": "w", "w": "v", "Person": "Human", "Human": "Person", "Knows": "Links", "Links": "Knows"}

// schemaValue is the value a writer gives the node of tag.
func schemaValue(tag string) int64 {
	h := fnv.New64a()
	h.Write([]byte(tag))
	return int64(h.Sum64() >> 2)
}

// schemaSeed is seeded person i's id.
func schemaSeed(i int) string { return fmt.Sprintf("s%d", i) }

// schemaProc is one process of the schema workload.
type schemaProc struct {
	procBase
	g *data.Graph
}

// schemaMain is one process of the schema workload.
func schemaMain(c *config, stdin io.Reader, stderr io.Writer) int {
	return procMain("schema", c, stdin, stderr, func(b procBase) workloadProc { return &schemaProc{procBase: b} })
}

// open opens the graph read-write (the open runs recovery), retrying.
func (p *schemaProc) open(st objstore.Store) error {
	ctx := context.Background()
	var err error
	for try := 0; ; try++ {
		if p.stop() {
			return nil
		}
		if p.g, err = data.Open(ctx, st, p.wc.root, dataOptions(kernel.Options{Env: kernel.SystemEnv()}, p.wc.indexFanout, p.wc.id)); err == nil {
			break
		}
		p.unexpected("open", err)
		if try >= maxOpenTries {
			return fmt.Errorf("open: %d attempts, last: %w", try, err)
		}
		time.Sleep(openRetryPause) // real time: a real process retrying a real store
	}
	return p.record(histRecord{Kind: recOpen})
}

// run plays the process's role until its stdin closes.
func (p *schemaProc) run() error {
	if p.g == nil {
		return p.record(histRecord{Kind: recStop})
	}
	ctx := context.Background()
	for !p.stop() {
		var err error
		if schemaRole(p.wc.id) == roleChanger {
			err = p.change(ctx)
			time.Sleep(schemaChangeMin + time.Duration(p.rng.Int64N(int64(schemaChangeSpan)))) // real time: the change rate
		} else {
			err = p.write(ctx)
		}
		if err != nil {
			return err
		}
	}
	return p.record(histRecord{Kind: recStop})
}

// tag is a call's tag, unique across the run.
func (p *schemaProc) tag() string {
	p.n++
	return fmt.Sprintf("p%d-s%d-%d", p.wc.id, p.wc.seg, p.n)
}

// classOf classifies a call's error.
func classOf(err error) string {
	var ce *kernel.ContentionError
	switch {
	case errors.Is(err, kernel.ErrSchemaChanged):
		return classSchema
	case objstore.IsAmbiguous(err) || objstore.IsRetryable(err):
		return classStore
	case errors.As(err, &ce):
		return classContention
	case errors.Is(err, data.ErrSchemaRefused) || errors.Is(err, schema.ErrIncompatibleChange):
		return classRefused
	case errors.Is(err, data.ErrCardinality):
		return classCard
	case errors.Is(err, kernel.ErrVersionMismatch) || errors.Is(err, data.ErrIDMissing):
		return classConflict
	}
	return classOther
}

// outcome records the return of the call invoked for tag; schemaSum is
// what the record carries in Schema (an acknowledged schema change's new
// schema; a refusal's expected one).
func (p *schemaProc) outcome(tag string, err error, out model.Outcome, schemaSum string) error {
	r := histRecord{Tag: tag, Schema: schemaSum}
	switch out {
	case model.OK:
		r.Kind = recOK
	case model.Failed:
		r.Kind, r.Err = recFail, err.Error()
	default:
		r.Kind, r.Err = recUnknown, err.Error()
	}
	if err != nil {
		r.Class = classOf(err)
		p.unexpected(tag, err)
	}
	return p.record(r)
}

// Edges a write stages beside its node.
const (
	edgeNone = iota
	edgeOut  // from the new node to a seeded person: out-degree 1
	edgeIn   // from a hub (a seeded person) to the new node: the hub's out-degree grows to the @card bound
)

// schemaHubs are the seeded people the writers' edgeIn edges start at
// (the first ones): few, so that their out-degree passes a tightened
// @card's bound soon after a loosening, and a tightening then has
// something to refuse.
const schemaHubs = 2

// write commits one node (and, two times in three, an edge between it
// and a seeded person, either way) on main, retrying once as a fresh
// transaction when the schema changed under the first.
func (p *schemaProc) write(ctx context.Context) error {
	edge := p.rng.IntN(3)
	seed := schemaSeed(p.rng.IntN(schemaSeeds))
	if edge == edgeIn {
		seed = schemaSeed(p.rng.IntN(schemaHubs))
	}
	for try := 0; try < schemaWriteTries && !p.stop(); try++ {
		pause := time.Duration(p.rng.Int64N(int64(schemaStageMax)))
		retry, err := p.writeOnce(ctx, edge, seed, pause)
		if err != nil || !retry {
			return err
		}
	}
	return nil
}

// writeOnce is one attempt of write: it reports whether the commit was
// refused with *kernel.SchemaChangedError (retry under the new schema).
// Errors before the call record nothing; the returned error is a history
// write failure only.
func (p *schemaProc) writeOnce(ctx context.Context, edge int, seed string, pause time.Duration) (bool, error) {
	main, err := p.g.Branch(ctx, "main")
	if err != nil {
		p.unexpected("branch", err)
		return false, nil
	}
	tx, err := p.g.Begin(ctx, main)
	if err != nil {
		p.unexpected("begin", err)
		return false, nil
	}
	nm, ok := schemaNamesOf(tx.Schema())
	if !ok {
		tx.Discard()
		return false, p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("a transaction began under a schema not of the workload's shape:\n%s", tx.Schema())})
	}
	tag := p.tag()
	if err := tx.Insert(nm.node, data.Row{ID: "n-" + tag, Props: map[string]any{schemaNodeValue: tag, nm.value: schemaValue(tag)}}); err != nil {
		tx.Discard()
		return false, p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("stage %s under its own schema: %v", tag, err)})
	}
	if edge != edgeNone {
		e := data.Row{ID: "e-" + tag, From: "n-" + tag, To: seed}
		if edge == edgeIn {
			e.From, e.To = e.To, e.From
		}
		if err := tx.Insert(nm.edge, e); err != nil {
			tx.Discard()
			return false, p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("stage %s's edge under its own schema: %v", tag, err)})
		}
	}
	staged := tx.Base().SchemaHash()
	time.Sleep(pause) // real time: a schema change may land inside the transaction
	if err := p.record(histRecord{Kind: recInvoke, Tag: tag, Key: check.IncarnationKey("main", main.Incarnation()), Schema: staged, Edge: edge != edgeNone, EdgeIn: edge == edgeIn}); err != nil {
		return false, err
	}
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", p.wc.id), Message: check.MessageFor(tag)})
	var sce *kernel.SchemaChangedError
	refusedFor := ""
	if errors.As(err, &sce) {
		refusedFor = sce.Expected
	}
	if err := p.outcome(tag, err, workload.SchemaOutcome(err), refusedFor); err != nil {
		return false, err
	}
	return sce != nil, nil
}

// change applies one schema change to main, written for the schema it
// read: a seeded choice among the workload's changes that apply.
func (p *schemaProc) change(ctx context.Context) error {
	main, snap, ok := p.mainHead(ctx, p.g)
	if !ok {
		return nil
	}
	nm, ok := schemaNamesOf(snap.Schema())
	if !ok {
		return p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("main's head has a schema not of the workload's shape:\n%s", snap.Schema())})
	}
	card := opTighten
	if nm.card == schema.Card(0, 1) {
		card = opLoosen
	}
	kinds := []string{opRenameProp, opRenameType, card, card}
	if len(nm.extra) < schemaMaxExtra {
		kinds = append(kinds, opAddProp, opAddProp)
	}
	if len(nm.extra) > 0 {
		kinds = append(kinds, opDropProp)
	}
	op := kinds[p.rng.IntN(len(kinds))]
	if op == opTighten && p.rng.IntN(3) == 0 { // a third of the tightenings trim first (they land); the rest meet the hubs' edges
		if err := p.trim(ctx, main); err != nil {
			return err
		}
	}
	tag := p.tag()
	var opts data.SchemaOptions
	switch op {
	case opRenameProp:
		opts.Renames = []schema.Rename{{Type: nm.node, From: nm.value, To: schemaFlip[nm.value]}}
		nm.value = schemaFlip[nm.value]
	case opRenameType:
		opts.TypeRenames = []schema.TypeRename{{From: nm.node, To: schemaFlip[nm.node]}, {From: nm.edge, To: schemaFlip[nm.edge]}}
		nm.node, nm.edge = schemaFlip[nm.node], schemaFlip[nm.edge]
	case opTighten:
		nm.card = schema.Card(0, 1)
	case opLoosen:
		nm.card = schema.Card(0, 3)
	case opAddProp:
		nm.extra = append(nm.extra[:len(nm.extra):len(nm.extra)], "x"+strings.ReplaceAll(tag, "-", "_"))
	case opDropProp:
		nm.extra = nm.extra[1:]
	}
	target, err := schema.Parse([]byte(nm.text()))
	if err != nil {
		return fmt.Errorf("schema workload target: %w", err)
	}
	from := snap.Kernel().SchemaHash()
	if err := p.record(histRecord{Kind: recInvoke, Tag: tag, Key: check.IncarnationKey("main", main.Incarnation()), Schema: from, Op: op}); err != nil {
		return err
	}
	opts.ExpectSchema = from
	ch, err := p.g.ApplySchema(ctx, main, target, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", p.wc.id), Message: check.MessageFor(tag)}, opts)
	out := workload.SchemaOutcome(err)
	if err == nil && ch.Commit.ID == (kernel.CommitID{}) {
		err, out = fmt.Errorf("%s: an empty plan published nothing", op), model.Failed
	}
	if out == model.OK && op == opTighten {
		if err := p.checkCard(ctx, tag, ch.Commit.ID); err != nil {
			return err
		}
	}
	sum := "" // acknowledged: the schema it published; refused for its schema: the one the error says it expected
	var sce *kernel.SchemaChangedError
	switch {
	case out == model.OK:
		sum = ch.To
	case errors.As(err, &sce):
		sum = sce.Expected
	}
	return p.outcome(tag, err, out, sum)
}

// initSchemaGraph creates the schema workload's graph (data plane) and
// its seeded people, in a commit of no writer's (an untagged message),
// with index fanout n.
func initSchemaGraph(ctx context.Context, st objstore.Store, root string, n int) error {
	s, err := schema.Parse([]byte(schemaProcSchema))
	if err != nil {
		return err
	}
	opts := dataOptions(kernel.Options{Env: kernel.SystemEnv()}, n, 0)
	g, err := data.Init(ctx, st, root, s, opts)
	if errors.Is(err, kernel.ErrGraphExists) {
		if g, err = data.Open(ctx, st, root, opts); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	main, err := g.Branch(ctx, "main")
	if err != nil {
		return err
	}
	snap, err := g.SnapshotAt(ctx, main)
	if err != nil {
		return err
	}
	if n, err := snap.Count(ctx, "Person"); err != nil || n > 0 {
		return err // seeded already (an earlier attempt's acknowledgement was lost)
	}
	tx, err := g.Begin(ctx, main)
	if err != nil {
		return err
	}
	for i := range schemaSeeds {
		if err := tx.Upsert("Person", data.Row{ID: schemaSeed(i), Props: map[string]any{schemaNodeValue: schemaSeed(i)}}); err != nil {
			return err
		}
	}
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: "simrun", Message: "seed the schema workload's people"})
	return err
}

// checkCard reads the snapshot an acknowledged tightening published and
// records a schema-card violation for every seeded person whose out-degree
// is outside the new @card: the change must have checked the live edges
// (the card-tighten-unchecked plant does not). A read that fails checks
// nothing.
func (p *schemaProc) checkCard(ctx context.Context, tag string, id kernel.CommitID) error {
	snap, err := p.g.SnapshotAtCommit(ctx, id)
	if err != nil {
		p.unexpected("tighten: snapshot", err)
		return nil
	}
	nm, ok := schemaNamesOf(snap.Schema())
	if !ok {
		return nil // the chain check reports a schema of another shape
	}
	for i := range schemaSeeds {
		edges, err := snap.Out(ctx, nm.edge, schemaSeed(i))
		if err != nil {
			p.unexpected("tighten: out", err)
			return nil
		}
		if !nm.card.Allows(uint64(len(edges))) {
			if err := p.record(histRecord{Kind: recCardViolation, Err: fmt.Sprintf("after tightening %s: %s %s has %d %s edges, outside @card(%s)",
				tag, nm.node, schemaSeed(i), len(edges), nm.edge, nm.card)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// trim deletes every hub's out-edges but the first, in one transaction
// recorded like a write (its Trim lists the edges), so that the
// tightening after it can hold. A trim with nothing to delete, or that
// cannot read, records nothing.
func (p *schemaProc) trim(ctx context.Context, main kernel.BranchRef) error {
	tx, err := p.g.Begin(ctx, main)
	if err != nil {
		p.unexpected("trim: begin", err)
		return nil
	}
	var ids []string
	for i := range schemaHubs {
		nm, ok := schemaNamesOf(tx.Schema()) // the base pinned by the first read
		if !ok {
			tx.Discard()
			return nil
		}
		edges, err := tx.Out(ctx, nm.edge, schemaSeed(i))
		if err != nil {
			tx.Discard()
			p.unexpected("trim: out", err)
			return nil
		}
		for _, e := range edges[min(1, len(edges)):] {
			ids = append(ids, e.ID)
		}
	}
	nm, _ := schemaNamesOf(tx.Schema())
	if len(ids) == 0 {
		tx.Discard()
		return nil
	}
	if err := tx.Delete(nm.edge, ids...); err != nil {
		tx.Discard()
		return p.record(histRecord{Kind: recViolation, Err: fmt.Sprintf("stage a trim of %v under its own schema: %v", ids, err)})
	}
	tag := p.tag()
	if err := p.record(histRecord{Kind: recInvoke, Tag: tag, Key: check.IncarnationKey("main", main.Incarnation()), Schema: tx.Base().SchemaHash(), Trim: ids}); err != nil {
		return err
	}
	_, err = tx.Commit(ctx, kernel.LineageIntent{Actor: fmt.Sprintf("p%d", p.wc.id), Message: check.MessageFor(tag)})
	refusedFor := ""
	var sce *kernel.SchemaChangedError
	if errors.As(err, &sce) {
		refusedFor = sce.Expected
	}
	return p.outcome(tag, err, workload.SchemaOutcome(err), refusedFor)
}
