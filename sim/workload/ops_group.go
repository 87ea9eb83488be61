package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/graphkernel/graphkernel/internal/plant"
	"github.com/graphkernel/graphkernel/kernel"
	"github.com/graphkernel/graphkernel/kernel/data"
	"github.com/graphkernel/graphkernel/model/datamodel"
	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/sim/check"
)

// The data-group workload (issue #31): a service whose actors share one
// data handle with group commit on, committing on aligned instants so
// groups form, under faults and crashes (the service dies whole,
// service.go); a writer of its own process racing it; readers comparing
// every read with the reference data model, a chain reader for
// porcupine's chain model, and a feed consumer. Each grouped transaction
// is of a class known in advance (check.GroupClass), so check.CheckGroups
// can tell a member failed by another's failure from one failing alone.
func init() {
	Register(&Workload{
		Name:        "data-group",
		RidingScale: ridingScaleData,
		Doc: "group commit: the actors of one service share a data handle (Options.Group) and commit on aligned " +
			"instants, members sound (fresh ids), unsound (an existing id, a dangling edge) or either (stale Update, " +
			"@card), racing another process, under faults and crashes that kill the whole service",
		Generate: genGroup,
		Plants:   []string{plant.GroupSharedFailure},
		Contract: mustContract(dataSchema),
		Seed:     seedData,
		Final:    finalData,
	})
	RegisterOp("grouptx", opGroupTx)
}

// groupRecord collects the grouped commits' observations.
type groupRecord struct {
	mu  sync.Mutex
	obs []check.GroupObs
	cov check.GroupCoverage
}

func (g *groupRecord) add(o check.GroupObs) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.obs = append(g.obs, o)
}

// checkGroups runs check.CheckGroups on the grouped commits observed.
func (r *Run) checkGroups(g check.Graph) []check.Violation {
	r.groups.mu.Lock()
	defer r.groups.mu.Unlock()
	if len(r.groups.obs) == 0 {
		return nil
	}
	vs, cov := check.CheckGroups(g, r.groups.obs)
	r.groups.cov = cov
	return vs
}

// groupKinds are the kinds of grouped transaction and their class.
var groupKinds = map[string]check.GroupClass{
	"add":    check.Sound,   // a new company with a fresh id
	"know":   check.Sound,   // a Knows edge with a fresh id between two fixed people (never deleted here)
	"rename": check.Either,  // a strict Update: fails if Person moved since its Begin
	"link":   check.Either,  // a WorksAt edge: fails if the person already works somewhere (@card 0..1)
	"dup":    check.Unsound, // inserts a fixed person, which always exists
	"ghost":  check.Unsound, // a Knows edge to a person that never exists
}

// groupOps are the model operations of a grouped transaction of kind.
func groupOps(tag string, op Op) []datamodel.Op {
	person := op.Arg("person")
	one := func(k datamodel.Kind, typ string, r datamodel.Row) []datamodel.Op {
		return []datamodel.Op{{Kind: k, Type: typ, Row: r}}
	}
	switch op.Arg("kind") {
	case "add":
		return one(datamodel.Insert, "Company", datamodel.Row{ID: "n-" + tag, Props: map[string]any{"name": tag}})
	case "know":
		return one(datamodel.Insert, "Knows", datamodel.Row{ID: "k-" + tag, From: person, To: op.Arg("other")})
	case "rename":
		return one(datamodel.Update, "Person", datamodel.Row{ID: person, Props: map[string]any{"name": tag}})
	case "link":
		return one(datamodel.Insert, "WorksAt", datamodel.Row{ID: "e-" + tag, From: person, To: op.Arg("company")})
	case "dup":
		return one(datamodel.Insert, "Person", datamodel.Row{ID: person, Props: map[string]any{"name": tag}})
	case "ghost":
		return one(datamodel.Insert, "Knows", datamodel.Row{ID: "k-" + tag, From: person, To: "ghost-" + tag})
	}
	return nil
}

// opGroupTx runs one grouped transaction: it waits for the next multiple
// of align (so the service's actors commit together), commits through the
// service's shared handle and records what the commit returned.
func opGroupTx(p *Proc, idx int, op Op) error {
	class, ok := groupKinds[op.Arg("kind")]
	if !ok {
		return fmt.Errorf("workload: unknown grouptx kind %q", op.Arg("kind"))
	}
	if err := p.align(op.Arg("align")); err != nil {
		return err
	}
	tag := p.Tag(idx)
	c, tx, elapsed, err := p.dataCommitTx(tag, op.Arg("branch"), func(t *data.Txn) error {
		ops := groupOps(tag, op)
		if err := stageOps(t, ops); err != nil {
			return err
		}
		p.run.models.Txn(tag, ops)
		return nil
	})
	if p.Over(err) {
		return p.end(err)
	}
	if tx == nil { // no commit was called: nothing was recorded
		p.Unexpected("grouptx", err)
		return nil
	}
	o := check.GroupObs{Tag: tag, Where: p.name, Class: class, Outcome: Outcome(err), Elapsed: elapsed}
	if p.run.W != nil { // simulated time: a follower's bound is exact (a real clock's scheduling is not)
		o.FollowerLimit = followerLimit(serviceGroup(p), p.run.W.Window())
	}
	var unknown *data.GroupOutcomeUnknownError
	var mm *kernel.VersionMismatchError
	switch {
	case err == nil:
		info := tx.Group()
		o.Commit, o.Position, o.Size = c.ID.String(), info.Position, info.Size
	case errors.As(err, &unknown):
		o.Unknown = true
	case errors.Is(err, data.ErrGroupWait):
		o.Waited = true
	case objstore.IsAmbiguous(err):
		o.Shared = true
	case errors.Is(err, data.ErrValidation) || errors.As(err, &mm):
		o.OwnFailure = true
	}
	p.run.groups.add(o)
	p.Unexpected("grouptx", err)
	return nil
}

// align sleeps until the next multiple of the duration d of world time (no
// wait if d is empty).
func (p *Proc) align(d string) error {
	if d == "" {
		return nil
	}
	period, err := time.ParseDuration(d)
	if err != nil || period <= 0 {
		return fmt.Errorf("workload: bad align %q", d)
	}
	now := p.run.clock.Now().UnixNano()
	return p.sleep(period - time.Duration(now%int64(period)))
}

// followerLimit is the longest a follower that gives up may wait: its
// MaxFollowerWait plus its last poll, of at most 8×Poll
// (kernel/data/group.go), which the scheduler may end up to its window
// late.
func followerLimit(o data.GroupOptions, window time.Duration) time.Duration {
	return o.MaxFollowerWait + 8*o.Poll + window
}

// dataCommitTx is dataCommit returning the commit, the committed
// transaction (nil if the commit was never called) and how long the Commit
// call took (world time): what a grouped member observes is its commit id,
// Txn.Group, and, when it gave up waiting, how long it waited.
func (p *Proc) dataCommitTx(tag, branch string, stage func(*data.Txn) error) (kernel.Commit, *data.Txn, time.Duration, error) {
	g, err := p.dg()
	if err != nil {
		return kernel.Commit{}, nil, 0, err
	}
	ctx := p.Ctx()
	ref, err := g.Branch(ctx, branch)
	if err != nil {
		return kernel.Commit{}, nil, 0, err
	}
	tx, err := g.Begin(ctx, ref)
	if err != nil {
		return kernel.Commit{}, nil, 0, err
	}
	if err := stage(tx); err != nil {
		tx.Discard()
		return kernel.Commit{}, nil, 0, err
	}
	pc := p.run.H.BeginCommit(p.client(), check.IncarnationKey(branch, ref.Incarnation()), tag, nil)
	start := p.run.clock.Now()
	c, err := tx.Commit(ctx, kernel.LineageIntent{Actor: p.name, Message: check.MessageFor(tag)})
	elapsed := p.run.clock.Now().Sub(start)
	if p.Over(err) {
		return c, tx, elapsed, p.end(err)
	}
	out := Outcome(err)
	pc.End(out)
	p.run.note("%s grouptx %s -> %v (%v) group %+v", p.name, tag, out, errText(err), tx.Group())
	return c, tx, elapsed, err
}

var groupShape = shape{faultPhase: 4 * time.Minute, quietPhase: time.Minute}

// genGroup generates a data-group scenario.
func genGroup(seed uint64, faults string) *Scenario {
	rng := rand.New(rand.NewPCG(seed, 0x67726f7570)) // "group"
	s := &Scenario{Workload: "data-group", Seed: seed, Faults: faults, FaultPhase: groupShape.faultPhase, QuietPhase: groupShape.quietPhase}
	think := [2]time.Duration{500 * time.Millisecond, 4 * time.Second}
	gwait := []string{"0s", "2ms", "20ms"}[rng.IntN(3)]
	align := []string{"1s", "2s"}[rng.IntN(2)]
	members := 3 + rng.IntN(3)
	for i := 0; i < members; i++ {
		a := ActorPlan{Name: fmt.Sprintf("g0%c", 'a'+i)}
		for n := opsFor(groupShape, think); n > 0; n-- {
			op := genGroupTx(rng, think)
			op.Args["svc"], op.Args["gwait"], op.Args["align"] = "g0", gwait, align
			a.Ops = append(a.Ops, op)
		}
		s.Actors = append(s.Actors, a)
	}
	w := ActorPlan{Name: "d0"} // another process racing the service (renames, links, unlinks)
	for n := opsFor(groupShape, [2]time.Duration{2 * time.Second, 8 * time.Second}); n > 0; n-- {
		w.Ops = append(w.Ops, genDataTx(rng, [2]time.Duration{2 * time.Second, 8 * time.Second}, false))
	}
	s.Actors = append(s.Actors, w)
	q := ActorPlan{Name: "q0"}
	r := ActorPlan{Name: "r0"}
	for n := opsFor(groupShape, [2]time.Duration{4 * time.Second, 12 * time.Second}); n > 0; n-- {
		q.Ops = append(q.Ops, Op{Kind: "dread", Think: 4*time.Second + time.Duration(rng.Int64N(int64(8*time.Second))),
			Args: map[string]string{"branch": "main"}})
		r.Ops = append(r.Ops, Op{Kind: "read", Think: 4*time.Second + time.Duration(rng.Int64N(int64(8*time.Second))),
			Args: map[string]string{"branch": "main"}})
	}
	s.Actors = append(s.Actors, q, r, genFeedConsumer(rng, groupShape))
	if rng.IntN(2) == 0 { // half the seeds: the service's leaders wait for the last group's members
		for i := range members {
			for j := range s.Actors[i].Ops {
				s.Actors[i].Ops[j].Args["gregroup"] = "30ms"
			}
		}
	}
	s.Actors = append(s.Actors, genImpatient(rng)...)
	return s
}

// impatientThink paces the impatient service's actors (fewer ops: the
// default soak stays cheap).
var impatientThink = [2]time.Duration{3 * time.Second, 9 * time.Second}

// genImpatient draws a second service, g1, whose followers give up long
// before its leaders are done (MaxFollowerWait 25 ms; a group's write takes
// several store round trips of 5-40 ms): a follower taken into a group
// stops waiting with *data.GroupOutcomeUnknownError (ambiguous), one queued
// behind a writing leader with data.ErrGroupWait (definite), both checked
// by "group-follower-wait". Half its commits are aligned (they queue
// together, so leaders take followers), half are not (they queue behind a
// writing leader).
func genImpatient(rng *rand.Rand) []ActorPlan {
	var out []ActorPlan
	for i := 0; i < 3; i++ {
		a := ActorPlan{Name: fmt.Sprintf("g1%c", 'a'+i)}
		for n := opsFor(groupShape, impatientThink); n > 0; n-- {
			op := genGroupTx(rng, impatientThink)
			op.Args["svc"], op.Args["gwait"], op.Args["gfollow"] = "g1", "40ms", "45ms"
			if rng.IntN(2) == 0 {
				op.Args["align"] = "1s"
			}
			a.Ops = append(a.Ops, op)
		}
		out = append(out, a)
	}
	return out
}

// genGroupTx draws one grouped transaction.
func genGroupTx(rng *rand.Rand, think [2]time.Duration) Op {
	i := rng.IntN(len(dataPeople))
	op := Op{Kind: "grouptx", Think: think[0] + time.Duration(rng.Int64N(int64(think[1]-think[0]))),
		Args: map[string]string{"branch": "main", "person": dataPeople[i]}}
	switch x := rng.Float64(); {
	case x < 0.3:
		op.Args["kind"] = "add"
	case x < 0.55:
		op.Args["kind"], op.Args["other"] = "know", dataPeople[(i+1+rng.IntN(len(dataPeople)-1))%len(dataPeople)]
	case x < 0.7:
		op.Args["kind"] = "rename"
	case x < 0.8:
		op.Args["kind"], op.Args["company"] = "link", dataCompanies[rng.IntN(len(dataCompanies))]
	case x < 0.9:
		op.Args["kind"] = "dup"
	default:
		op.Args["kind"] = "ghost"
	}
	return op
}
