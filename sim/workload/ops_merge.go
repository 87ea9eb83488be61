package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/kernel/merge"
	"github.com/graphkernel/graphkernel/model"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

// mergeSchema is the merge workload's graph: people with two independent
// properties (edited on different branches, merged property by property)
// who know each other.
const mergeSchema = `node Person { name: string  a: int64?  b: int64? }
edge Knows: Person -> Person {}
`

// mergeBranches are the branches the merge workload writes and merges
// (created from main by the init process).
var mergeBranches = []string{"main", "f1", "f2"}

func init() {
	Register(&Workload{
		Name:        "merge",
		RidingScale: ridingScaleData,
		Doc: "three-way merges between main and two feature branches while writers edit, link, unlink, drop and re-create " +
			"people on every branch; each merge's result is checked against a three-way merge of full snapshots",
		Generate: genMerge,
		Plants:   []string{plant.TwoWayMerge},
		Contract: mustContract(mergeSchema),
		Seed:     seedMerge,
		Final:    finalMerge,
	})
	RegisterOp("mtx", opMergeTx)
	RegisterOp("dmerge", opDataMerge)
	RegisterOp("mread", opMergeRead)
}

// seedMerge upserts the people on main, then creates the feature branches.
func seedMerge(p *Proc) error {
	return p.seedRetry("merge seed never acknowledged", p.seedMergeOnce)
}

func (p *Proc) seedMergeOnce(attempt int) error {
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
	n, err := snap.Count(ctx, "Person")
	if err != nil {
		return err
	}
	if n == 0 {
		err := p.dataCommit(fmt.Sprintf("%s.seed%d", p.name, attempt), "main", func(tx *data.Txn) error {
			for _, id := range dataPeople {
				if err := tx.Upsert("Person", data.Row{ID: id, Props: map[string]any{"name": id}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, name := range mergeBranches[1:] {
		if _, err := g.Kernel().CreateBranch(ctx, name, main); err != nil && !errors.Is(err, kernel.ErrBranchExists) {
			return err
		}
	}
	return nil
}

// opMergeTx runs one transaction on op's branch: kind=seta/setb (strict
// update of one property), know (a Knows edge), unknow (delete one of the
// person's Knows edges), drop (cascading delete) or upsert (re-create).
func opMergeTx(p *Proc, idx int, op Op) error {
	tag := p.Tag(idx)
	person := op.Arg("person")
	err := p.dataCommit(tag, op.Arg("branch"), func(tx *data.Txn) error {
		switch kind := op.Arg("kind"); kind {
		case "seta", "setb":
			r, ok, err := tx.Get(p.Ctx(), "Person", person)
			if err != nil || !ok {
				return errors.Join(err, errNothingToDo)
			}
			var v int64
			_, _ = fmt.Sscan(op.Arg("value"), &v)
			r.Props[kind[3:]] = v
			return tx.Update("Person", r)
		case "know":
			return tx.Insert("Knows", data.Row{ID: "k-" + tag, From: person, To: op.Arg("other")})
		case "unknow":
			edges, err := tx.Out(p.Ctx(), "Knows", person)
			if err != nil || len(edges) == 0 {
				return errors.Join(err, errNothingToDo)
			}
			return tx.Delete("Knows", edges[0].ID)
		case "drop":
			return tx.DeleteCascade("Person", person)
		case "upsert":
			return tx.Upsert("Person", data.Row{ID: person, Props: map[string]any{"name": tag}})
		}
		return fmt.Errorf("workload: unknown mtx kind %q", op.Arg("kind"))
	})
	if p.Over(err) {
		return p.end(err)
	}
	if err != nil && !errors.Is(err, errNothingToDo) {
		p.Unexpected("mtx", err)
	}
	return nil
}

// opDataMerge merges branch from into branch into (a dry run when dry=1),
// records the merge as a commit of into's chain (visible only when it
// published), and checks the outcome against the oracle.
func opDataMerge(p *Proc, idx int, op Op) error {
	g, err := p.dg()
	if err != nil {
		return p.readFailed("dmerge: open", err)
	}
	ctx := p.Ctx()
	src, err := g.Branch(ctx, op.Arg("from"))
	if err != nil {
		return p.readFailed("dmerge: source", err)
	}
	into, err := g.Branch(ctx, op.Arg("into"))
	if err != nil {
		return p.readFailed("dmerge: target", err)
	}
	tag := p.Tag(idx)
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(into.Name(), into.Incarnation()), tag, nil)
	res, err := g.Merge(ctx, src, into, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(tag)},
		data.MergeOptions{DryRun: op.Arg("dry") == "1"})
	if p.Over(err) {
		return p.end(err)
	}
	pc.End(mergeOutcome(res, err))
	p.run.note("%s dmerge %s %s into %s -> %v %v", p.name, tag, src, into, res.Outcome, errText(err))
	if err != nil && !errors.Is(err, data.ErrMergeConflict) {
		p.Unexpected("dmerge", err)
		return nil
	}
	return p.checkMerge(g, res, err != nil)
}

// mergeOutcome is the chain outcome of a merge: OK only when it published
// a commit; up to date, dry runs and conflicts published nothing.
func mergeOutcome(res data.MergeResult, err error) model.Outcome {
	switch {
	case err == nil && res.Commit.ID != (kernel.CommitID{}):
		return model.OK
	case objstore.IsAmbiguous(err): // wins over a moved head it may wrap
		return model.Ambiguous
	case err == nil, errors.Is(err, data.ErrMergeConflict), errors.Is(err, data.ErrMergeTooLarge), errors.Is(err, kernel.ErrHeadMoved):
		return model.Failed
	}
	return Outcome(err)
}

// mergeState is the rows of the merge workload at one snapshot, by type
// and id: every person, and every Knows edge from one.
type mergeState = check.MergeState

func (p *Proc) stateAt(g *data.Graph, id kernel.CommitID) (mergeState, error) {
	ctx := p.Ctx()
	snap, err := g.SnapshotAtCommit(ctx, id)
	if err != nil {
		return nil, err
	}
	st := mergeState{"Person": {}, "Knows": {}}
	for _, person := range dataPeople {
		r, ok, err := snap.Get(ctx, "Person", person)
		if err != nil {
			return nil, err
		}
		if ok {
			m := merge.Row(r)
			st["Person"][person] = &m
		}
		edges, err := snap.Out(ctx, "Knows", person)
		if err != nil {
			return nil, err
		}
		for _, e := range edges {
			m := merge.Row(e)
			st["Knows"][e.ID] = &m
		}
	}
	return st, nil
}

// mergeTypes are the merge workload's types, and its edges' endpoints.
var (
	mergeTypes = []string{"Person", "Knows"}
	mergeEnds  = check.EdgeEnds{"Knows": {"Person", "Person"}}
)

// checkMerge holds a merge to the oracle: a published merge commit has
// parents [target read, source captured] and holds exactly the three-way
// merge of the base and the two heads it names; a conflict is reported
// only when the oracle finds one; a clean dry run has none.
func (p *Proc) checkMerge(g *data.Graph, res data.MergeResult, conflicted bool) error {
	if res.Outcome == data.MergeAlreadyUpToDate {
		return nil
	}
	var st [3]mergeState
	for i, id := range []kernel.CommitID{res.Base, res.Source, res.Target} {
		s, err := p.stateAt(g, id)
		if err != nil {
			return p.readFailed("dmerge: check", err)
		}
		st[i] = s
	}
	want, wantConflict := check.ThreeWayMerge(mergeTypes, mergeEnds, st[0], st[1], st[2])
	violate := func(f string, a ...any) {
		p.run.Violate(check.Violation{Check: "merge-result", Detail: fmt.Sprintf("%s: merge %s into %s (base %s): %s",
			p.name, res.Source, res.Target, res.Base, fmt.Sprintf(f, a...))})
	}
	switch {
	case conflicted && !wantConflict:
		violate("conflicts %v, but the three-way merge of the snapshots has none", res.Conflicts)
	case !conflicted && wantConflict:
		violate("no conflict reported, but the three-way merge of the snapshots has one")
	case res.Commit.ID == (kernel.CommitID{}):
	case len(res.Commit.Parents) != 2 || res.Commit.Parents[0] != res.Target || res.Commit.Parents[1] != res.Source:
		violate("commit %s has parents %v", res.Commit.ID, res.Commit.Parents)
	default:
		got, err := p.stateAt(g, res.Commit.ID)
		if err != nil {
			return p.readFailed("dmerge: check", err)
		}
		if d := check.DiffMergeStates(mergeTypes, got, want); d != "" {
			violate("%s", d)
		}
	}
	return nil
}

// opMergeRead checks that no Knows edge dangles on op's branch.
func opMergeRead(p *Proc, _ int, op Op) error {
	ref, snap, stop, err := p.headSnapshot("mread", op.Arg("branch"))
	if stop {
		return err
	}
	ctx := p.Ctx()
	for _, person := range dataPeople {
		edges, err := snap.Out(ctx, "Knows", person)
		if err != nil {
			return p.readFailed("mread: out", err)
		}
		if err := p.checkEndpoints(snap, ref, "Knows", edges); err != nil {
			return err
		}
	}
	return nil
}

// finalMerge, in the quiet phase, merges each feature branch into main
// and main into each, checking every merge and every branch.
func finalMerge(p *Proc) error {
	idx := 0
	for _, f := range mergeBranches[1:] {
		for _, dir := range [2][2]string{{f, "main"}, {"main", f}} {
			idx++
			if err := opDataMerge(p, 1000+idx, Op{Args: map[string]string{"from": dir[0], "into": dir[1]}}); err != nil {
				return err
			}
		}
	}
	for _, b := range mergeBranches {
		if err := opMergeRead(p, 0, Op{Args: map[string]string{"branch": b}}); err != nil {
			return err
		}
	}
	return nil
}

var mergeShape = shape{faultPhase: 6 * time.Minute, quietPhase: time.Minute}

// genMerge generates a merge-workload scenario: writers on every branch,
// two mergers merging between them (concurrently with each other and with
// the writers), and readers.
func genMerge(seed uint64, faults string) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x6d657267)) // "merg"
	s := &Scenario{Workload: "merge", Seed: seed, Faults: faults, FaultPhase: mergeShape.faultPhase, QuietPhase: mergeShape.quietPhase}
	wthink := [2]time.Duration{time.Second, 6 * time.Second}
	for i := 0; i < 3+rng.IntN(2); i++ {
		a := ActorPlan{Name: fmt.Sprintf("m%d", i)}
		for n := opsFor(mergeShape, wthink); n > 0; n-- {
			a.Ops = append(a.Ops, genMergeTx(rng, wthink))
		}
		s.Actors = append(s.Actors, a)
	}
	mthink := [2]time.Duration{3 * time.Second, 12 * time.Second}
	for i := 0; i < 2; i++ {
		a := ActorPlan{Name: fmt.Sprintf("g%d", i)}
		for n := opsFor(mergeShape, mthink); n > 0; n-- {
			from := mergeBranches[rng.IntN(len(mergeBranches))]
			into := mergeBranches[rng.IntN(len(mergeBranches))]
			if from == into {
				into = mergeBranches[(rng.IntN(2)+1+indexOf(mergeBranches, from))%len(mergeBranches)]
			}
			op := Op{Kind: "dmerge", Think: think(rng, mthink), Args: map[string]string{"from": from, "into": into}}
			if rng.IntN(6) == 0 {
				op.Args["dry"] = "1"
			}
			a.Ops = append(a.Ops, op)
		}
		s.Actors = append(s.Actors, a)
	}
	a := ActorPlan{Name: "q0"}
	for n := opsFor(mergeShape, mthink); n > 0; n-- {
		a.Ops = append(a.Ops, Op{Kind: "mread", Think: think(rng, mthink), Args: map[string]string{"branch": mergeBranches[rng.IntN(len(mergeBranches))]}})
	}
	s.Actors = append(s.Actors, a)
	return s
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// mergeOwners says, per branch, which people it edits (property a on main,
// b on the feature branches), which people its new edges start at, and
// whether it drops and re-creates people (main, p3 only, which no feature
// edits). Branches edit disjoint fields, so most merges are clean; the
// overlap (main dropping p3 against a feature's edge to p3) is an orphan
// edge until main re-creates p3.
var mergeOwners = map[string]struct {
	prop   string
	people []string
	drops  bool
}{
	"main": {"a", []string{"p0", "p1", "p2", "p3"}, true},
	"f1":   {"b", []string{"p0", "p1"}, false},
	"f2":   {"b", []string{"p2"}, false},
}

func genMergeTx(rng *rand.Rand, r [2]time.Duration) Op {
	branch := mergeBranches[rng.IntN(len(mergeBranches))]
	own := mergeOwners[branch]
	op := Op{Kind: "mtx", Think: think(rng, r), Args: map[string]string{
		"branch": branch, "person": own.people[rng.IntN(len(own.people))]}}
	switch x := rng.Float64(); {
	case x < 0.45:
		op.Args["kind"], op.Args["value"] = "set"+own.prop, fmt.Sprint(rng.IntN(3))
	case x < 0.7:
		op.Args["kind"], op.Args["other"] = "know", dataPeople[rng.IntN(len(dataPeople))]
	case x < 0.85:
		op.Args["kind"] = "unknow"
	case x < 0.9 && own.drops:
		op.Args["kind"], op.Args["person"] = "drop", "p3"
	case own.drops:
		op.Args["kind"], op.Args["person"] = "upsert", "p3"
	default:
		op.Args["kind"], op.Args["other"] = "know", dataPeople[rng.IntN(len(dataPeople))]
	}
	return op
}
