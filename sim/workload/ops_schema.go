package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/schema"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

// The schema workload (issue #29): writers add and remove Knows edges on
// main and f1 (pausing between staging and commit, so schema changes land
// inside their transactions); a schema changer renames Person's value
// property (v <-> w, keeping its data), renames both types (Person <->
// Human and Knows <-> Links together, keeping their tables) and tightens
// (after trimming the edges) or loosens Knows' @card (0..1 <-> 0..3) on
// either branch; a merger merges the branches both ways (schemas
// three-way, then rows); readers check every head. Every actor names the
// types as the schema it reads does. Crashes and faults come from the
// profile.
//
// Its checkers: schema-card (every person's Knows out-degree within the
// @card of the snapshot's own schema: catches card-tighten-unchecked and
// stale-schema-validate) and schema-rename (every seeded person keeps the
// value the seed gave it, under whatever names the schema gives the type
// and the property: catches rename-as-drop, of a property or a type).

const schemaWorkloadSchema = `node Person { name: string  v: int64? }
edge Knows: Person -> Person @card(0..3) {}
`

var schemaBranches = []string{"main", "f1"}

// schemaValue is the value the seed gives person i (never changed).
func schemaValue(i int) int64 { return int64(100 + i) }

var schemaShape = shape{faultPhase: 3 * time.Minute, quietPhase: time.Minute}

func init() {
	Register(&Workload{
		Name:        "schema",
		RidingScale: ridingScaleData,
		Doc: "schema changes (property and type renames keeping data, @card tighten/loosen) on main and a feature branch while writers add and " +
			"remove edges inside long transactions and a merger merges the branches both ways; checks @card and renamed data",
		Generate: genSchema,
		Plants:   []string{plant.StaleSchemaValidate, plant.RenameAsDrop, plant.CardTightenUnchecked},
		Contract: mustContract(schemaWorkloadSchema),
		Seed:     seedSchema,
		Final:    finalSchema,
	})
	RegisterOp("stx", opSchemaTx)
	RegisterOp("sapply", opSchemaApply)
	RegisterOp("smerge", opSchemaMerge)
	RegisterOp("sread", opSchemaRead)
}

// seedSchema upserts the people with their values on main, then creates
// f1.
func seedSchema(p *Proc) error {
	return p.seedRetry("schema seed never acknowledged", p.seedSchemaOnce)
}

func (p *Proc) seedSchemaOnce(attempt int) error {
	g, err := p.dg()
	if err != nil {
		return err
	}
	ctx := p.Ctx()
	main, err := g.Branch(ctx, "main")
	if err != nil {
		return err
	}
	snap, err := g.SnapshotAt(ctx, main)
	if err != nil {
		return err
	}
	n, err := snap.Count(ctx, namesOf(snap.Schema()).person)
	if err != nil {
		return err
	}
	if n == 0 {
		err := p.dataCommit(fmt.Sprintf("%s.seed%d", p.name, attempt), "main", func(tx *data.Txn) error {
			nm := namesOf(tx.Schema())
			for i, id := range dataPeople {
				if err := tx.Upsert(nm.person, data.Row{ID: id, Props: map[string]any{"name": id, nm.value: schemaValue(i)}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if _, err := g.Kernel().CreateBranch(ctx, "f1", main); err != nil && !errors.Is(err, kernel.ErrBranchExists) {
		return err
	}
	return nil
}

// opSchemaTx runs one transaction on op's branch: kind=know (insert a
// Knows edge) or unknow (delete one of the person's), pausing op's pause
// between staging and commit.
func opSchemaTx(p *Proc, idx int, op Op) error {
	tag := p.Tag(idx)
	person := op.Arg("person")
	pause, _ := time.ParseDuration(op.Arg("pause"))
	err := p.dataCommit(tag, op.Arg("branch"), func(tx *data.Txn) error {
		knows := namesOf(tx.Schema()).knows
		switch op.Arg("kind") {
		case "know":
			if err := tx.Insert(knows, data.Row{ID: "k-" + tag, From: person, To: op.Arg("other")}); err != nil {
				return err
			}
		case "unknow":
			edges, err := tx.Out(p.Ctx(), knows, person)
			if err != nil || len(edges) == 0 {
				return errors.Join(err, errNothingToDo)
			}
			if err := tx.Delete(knows, edges[0].ID); err != nil {
				return err
			}
		default:
			return fmt.Errorf("workload: unknown stx kind %q", op.Arg("kind"))
		}
		return p.sleep(pause)
	})
	if p.Over(err) {
		return p.end(err)
	}
	if err != nil && !errors.Is(err, errNothingToDo) {
		p.Unexpected("stx", err)
	}
	return nil
}

// schemaNames are the names a schema of the workload gives its node type
// (Person or Human), its edge type (Knows or Links) and the value
// property (v or w), and the edge type's @card.
type schemaNames struct {
	person, knows, value string
	card                 schema.Cardinality
}

// namesOf reads the workload's names from s (the zero value when s is
// not of the workload's shape: one node type with two properties, one
// edge type).
func namesOf(s schema.Schema) schemaNames {
	if len(s.Nodes) != 1 || len(s.Edges) != 1 || len(s.Nodes[0].Props) != 2 {
		return schemaNames{}
	}
	return schemaNames{person: s.Nodes[0].Name, knows: s.Edges[0].Name, value: s.Nodes[0].Props[1].Name, card: s.Edges[0].Card}
}

// schemaText is the workload's schema under the names n (hand-written:
// no storage annotations).
func schemaText(n schemaNames) string {
	return fmt.Sprintf("node %s { name: string  %s: int64? }\nedge %s: %s -> %s @card(%s) {}\n", n.person, n.value, n.knows, n.person, n.person, n.card)
}

// currentSchema reads the workload's names on snap.
func currentSchema(snap *data.Snapshot) (schemaNames, bool) {
	n := namesOf(snap.Schema())
	return n, n.person != ""
}

// flip maps each of the workload's two names of a thing to the other.
var flip = map[string]string{"v": "w", "w": "v", "Person": "Human", "Human": "Person", "Knows": "Links", "Links": "Knows"}

// opSchemaApply changes op's branch's schema: kind=rename (v <-> w, a
// rename keeping the data), tighten (trim every person's Knows to one edge,
// then @card(0..1)) or loosen (@card(0..3)). The change is written for the
// schema read (SchemaOptions.ExpectSchema) and recorded as a commit of the
// branch's chain.
func opSchemaApply(p *Proc, idx int, op Op) error {
	tag := p.Tag(idx)
	branch, kind := op.Arg("branch"), op.Arg("kind")
	if kind == "tighten" {
		if err := p.trimKnows(tag+".trim", branch); err != nil {
			return err
		}
	}
	ref, snap, stop, err := p.headSnapshot("sapply", branch)
	if stop {
		return err
	}
	n, ok := currentSchema(snap)
	if !ok {
		p.run.Violate(check.Violation{Check: "schema-rename", Detail: fmt.Sprintf("%s: %s: unexpected schema on %s:\n%s", p.name, tag, branch, snap.Schema())})
		return nil
	}
	var renames []schema.Rename
	var types []schema.TypeRename
	switch kind {
	case "rename":
		renames, n.value = []schema.Rename{{Type: n.person, From: n.value, To: flip[n.value]}}, flip[n.value]
	case "retype":
		types = []schema.TypeRename{{From: n.person, To: flip[n.person]}, {From: n.knows, To: flip[n.knows]}}
		n.person, n.knows = flip[n.person], flip[n.knows]
	case "tighten":
		n.card = schema.Card(0, 1)
	case "loosen":
		n.card = schema.Card(0, 3)
	}
	target, err := schema.Parse([]byte(schemaText(n)))
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	g, err := p.dg()
	if err != nil {
		return p.readFailed("sapply: open", err)
	}
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(branch, ref.Incarnation()), tag, nil)
	ch, err := g.ApplySchema(p.Ctx(), ref, target, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(tag)},
		data.SchemaOptions{Renames: renames, TypeRenames: types, ExpectSchema: snap.Kernel().SchemaHash()})
	if p.Over(err) {
		return p.end(err)
	}
	out := SchemaOutcome(err)
	if err == nil && ch.Commit.ID == (kernel.CommitID{}) {
		out = model.Failed // an empty plan publishes nothing
	}
	pc.End(out)
	p.run.note("%s sapply %s %s %s -> %v (%v)", p.name, tag, branch, kind, out, errText(err))
	if err != nil && out != model.Failed {
		p.Unexpected("sapply", err)
	}
	return nil
}

// SchemaOutcome is the chain outcome of a schema change or a transaction
// that may meet one: refusals by the schema gate or the data publish
// nothing.
func SchemaOutcome(err error) model.Outcome {
	if out := Outcome(err); out != model.Ambiguous || objstore.IsAmbiguous(err) {
		return out
	}
	for _, definite := range []error{kernel.ErrSchemaChanged, data.ErrSchemaRefused, schema.ErrIncompatibleChange} {
		if errors.Is(err, definite) {
			return model.Failed
		}
	}
	return model.Ambiguous
}

// trimKnows deletes all but the first Knows edge of every person on
// branch (so a tightening to @card(0..1) can hold).
func (p *Proc) trimKnows(tag, branch string) error {
	err := p.dataCommit(tag, branch, func(tx *data.Txn) error {
		n := 0
		knows := namesOf(tx.Schema()).knows
		for _, person := range dataPeople {
			edges, err := tx.Out(p.Ctx(), knows, person)
			if err != nil {
				return err
			}
			for _, e := range edges[min(1, len(edges)):] {
				if err := tx.Delete(knows, e.ID); err != nil {
					return err
				}
				n++
			}
		}
		if n == 0 {
			return errNothingToDo
		}
		return nil
	})
	if p.Over(err) {
		return p.end(err)
	}
	if err != nil && !errors.Is(err, errNothingToDo) {
		p.Unexpected("strim", err)
	}
	return nil
}

// opSchemaMerge merges branch from into branch into, recorded as a commit
// of into's chain, then checks into's head.
func opSchemaMerge(p *Proc, idx int, op Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("smerge: open", err)
	}
	ctx := p.Ctx()
	src, err := g.Branch(ctx, op.Arg("from"))
	if err != nil {
		return p.readFailed("smerge: source", err)
	}
	into, err := g.Branch(ctx, op.Arg("into"))
	if err != nil {
		return p.readFailed("smerge: target", err)
	}
	tag := p.Tag(idx)
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(into.Name(), into.Incarnation()), tag, nil)
	res, err := g.Merge(ctx, src, into, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(tag)}, data.MergeOptions{})
	if p.Over(err) {
		return p.end(err)
	}
	pc.End(mergeOutcome(res, err))
	p.run.note("%s smerge %s %s into %s -> %v %v", p.name, tag, src, into, res.Outcome, errText(err))
	if err != nil && !errors.Is(err, data.ErrMergeConflict) {
		p.Unexpected("smerge", err)
	}
	if errors.Is(err, data.ErrSchemaConflict) {
		// The workload's changes always merge: names v/w, Person/Human, Knows/Links and bounds 0..1/0..3 take two values each.
		p.run.Violate(check.Violation{Check: "schema-merge", Detail: fmt.Sprintf("%s: %s: %v", p.name, tag, err)})
	}
	return nil
}

// opSchemaRead checks op's branch head: every person's Knows out-degree
// within the head schema's @card (schema-card), and every person's value,
// under the schema's name for it, the seed's (schema-rename).
func opSchemaRead(p *Proc, _ int, op Op) error {
	_, snap, stop, err := p.headSnapshot("sread", op.Arg("branch"))
	if stop {
		return err
	}
	ctx := p.Ctx()
	n, ok := currentSchema(snap)
	at := fmt.Sprintf("%s: %s at %s", p.name, op.Arg("branch"), snap.Kernel().Head())
	if !ok {
		p.run.Violate(check.Violation{Check: "schema-rename", Detail: fmt.Sprintf("%s: unexpected schema:\n%s", at, snap.Schema())})
		return nil
	}
	for i, person := range dataPeople {
		r, found, err := snap.Get(ctx, n.person, person)
		if err != nil {
			return p.readFailed("sread: get", err)
		}
		if got := r.Props[n.value]; !found || got != schemaValue(i) {
			p.run.Violate(check.Violation{Check: "schema-rename", Detail: fmt.Sprintf("%s: %s %s .%s = %v (found %v), want %d", at, n.person, person, n.value, got, found, schemaValue(i))})
		}
		edges, err := snap.Out(ctx, n.knows, person)
		if err != nil {
			return p.readFailed("sread: out", err)
		}
		if !n.card.Allows(uint64(len(edges))) {
			p.run.Violate(check.Violation{Check: "schema-card", Detail: fmt.Sprintf("%s: %s %s has %d %s edges, outside @card(%s)", at, n.person, person, len(edges), n.knows, n.card)})
		}
	}
	return nil
}

// finalSchema, in the quiet phase, merges f1 into main and back, reads
// both heads and replays main's feed across its schema changes.
func finalSchema(p *Proc) error {
	for i, dir := range [][2]string{{"f1", "main"}, {"main", "f1"}} {
		if err := opSchemaMerge(p, 1000+i, Op{Args: map[string]string{"from": dir[0], "into": dir[1]}}); err != nil {
			return err
		}
	}
	for _, b := range schemaBranches {
		if err := opSchemaRead(p, 0, Op{Args: map[string]string{"branch": b}}); err != nil {
			return err
		}
	}
	return checkSchemaFeed(p) // ops_schema_feed.go
}

// genSchema generates a schema-workload scenario: three writers on both
// branches, one schema changer, one merger and one reader.
func genSchema(seed uint64, faults string) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x736368656d61)) // "schema"
	s := &Scenario{Workload: "schema", Seed: seed, Faults: faults, FaultPhase: schemaShape.faultPhase, QuietPhase: schemaShape.quietPhase}
	branch := func() string { return schemaBranches[rng.IntN(len(schemaBranches))] }
	wthink := [2]time.Duration{time.Second, 4 * time.Second}
	for i := 0; i < 3; i++ {
		a := ActorPlan{Name: fmt.Sprintf("s%d", i)}
		for n := opsFor(schemaShape, wthink); n > 0; n-- {
			op := Op{Kind: "stx", Think: think(rng, wthink), Args: map[string]string{"branch": branch(),
				"person": dataPeople[rng.IntN(len(dataPeople))], "pause": think(rng, [2]time.Duration{0, 3 * time.Second}).String()}}
			if rng.IntN(5) < 3 {
				op.Args["kind"], op.Args["other"] = "know", dataPeople[rng.IntN(len(dataPeople))]
			} else {
				op.Args["kind"] = "unknow"
			}
			a.Ops = append(a.Ops, op)
		}
		s.Actors = append(s.Actors, a)
	}
	cthink := [2]time.Duration{2 * time.Second, 8 * time.Second}
	c := ActorPlan{Name: "c0"}
	for n := opsFor(schemaShape, cthink); n > 0; n-- {
		kinds := []string{"rename", "tighten", "loosen", "loosen", "retype"}
		c.Ops = append(c.Ops, Op{Kind: "sapply", Think: think(rng, cthink), Args: map[string]string{"branch": branch(), "kind": kinds[rng.IntN(len(kinds))]}})
	}
	s.Actors = append(s.Actors, c)
	mthink := [2]time.Duration{4 * time.Second, 10 * time.Second}
	m := ActorPlan{Name: "g0"}
	for n := opsFor(schemaShape, mthink); n > 0; n-- {
		from := rng.IntN(2)
		m.Ops = append(m.Ops, Op{Kind: "smerge", Think: think(rng, mthink), Args: map[string]string{"from": schemaBranches[from], "into": schemaBranches[1-from]}})
	}
	s.Actors = append(s.Actors, m)
	rthink := [2]time.Duration{2 * time.Second, 5 * time.Second}
	r := ActorPlan{Name: "q0"}
	for n := opsFor(schemaShape, rthink); n > 0; n-- {
		r.Ops = append(r.Ops, Op{Kind: "sread", Think: think(rng, rthink), Args: map[string]string{"branch": branch()}})
	}
	s.Actors = append(s.Actors, r)
	return s
}
